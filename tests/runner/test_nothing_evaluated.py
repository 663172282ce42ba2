"""A run that evaluated nothing is not a success, and a missing API key fails a run before it ingests anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import exit_code, run_args

from llm_server import Fault, LLMServer, llm_server

__all__ = ["llm_server"]


def test_a_run_whose_every_question_failed_exits_1(
    llm_server: LLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("BENCH_NB_LOCAL_BASE_URL", llm_server.openai_base_url)
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", "off")
    llm_server.script(*[Fault("400")] * 50)  # every answer refused, not retryable
    code = exit_code(
        run_args("-m", "local:llama", "-j", "contains", limit=3, run_id="allfail", runs_dir=tmp_path)
    )
    captured = capsys.readouterr()
    assert code == 1
    assert "allfail: completed, 0 evaluated, 3 failed" in captured.out
    assert "allfail: no question was evaluated (3 of 3 failed)" in captured.err
    assert llm_server.count() == 3


@pytest.mark.parametrize("role", ["-m", "-j"])
def test_a_missing_key_fails_before_ingest(
    role: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("BENCH_NB_TEST_CALL_LOG", str(log))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    runs = tmp_path / "runs"
    code = exit_code(
        run_args(
            role,
            "gpt-4o-mini",
            provider="runner_fakes:LoggedProvider",
            limit=3,
            run_id="nokey",
            runs_dir=runs,
        )
    )
    err = capsys.readouterr().err
    assert code == 1
    who = "answerer" if role == "-m" else "judge"
    assert f"error: {who} 'gpt-4o-mini': OPENAI_API_KEY is not set" in err and len(err.splitlines()) == 1
    assert not log.exists()  # the provider was never called: nothing ingested, nothing paid
    assert not (runs / "nokey").exists()  # and no empty run directory left behind
