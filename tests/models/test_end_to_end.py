"""A LoCoMo run answered and judged by LLM aliases against the local API server, through the runner.

OPENAI_BASE_URL points the OpenAI aliases at the server (as a user would point them at a proxy or vLLM);
BENCH_NB_LLM_CACHE puts the response cache in the test's directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench_nb.models.prices import DEFAULT_PRICES
from llm_server import Fault, LLMServer, fake_token_count

LIMIT = 12


@pytest.fixture
def llm_env(llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-e2e-SECRET-123")
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", str(tmp_path / "cache" / "llm.sqlite"))
    monkeypatch.setenv("BENCH_NB_LLM_TIMEOUT", "1.5")
    monkeypatch.setenv("BENCH_NB_LLM_BACKOFF", "0.01")
    yield llm_server


def _checkpoint(run_dir: Path) -> dict:
    return json.loads((run_dir / "checkpoint.json").read_text())


def _run(locomo_path: Path, runs: Path, run_id: str):
    from bench_nb.runner import run_benchmark

    return run_benchmark(
        "sqlite",
        "locomo",
        dataset=locomo_path,
        answerer="gpt-4o-mini",
        judges="gpt-4o",
        run_id=run_id,
        runs_dir=runs,
        limit=LIMIT,
        concurrency=4,
        progress=False,
    )


@pytest.mark.slow
def test_llm_run_survives_every_fault_records_tokens_and_cost_and_reruns_from_cache(
    llm_env: LLMServer, locomo_path: Path, tmp_path: Path
) -> None:
    server = llm_env
    server.script(
        Fault("429", retry_after=0.3),
        Fault("500"),
        Fault("slow", delay=3.0),
        Fault("malformed"),
        Fault("truncated"),
    )
    runs = tmp_path / "runs"
    result = _run(locomo_path, runs, "llm-e2e")
    assert (result.target, result.evaluated, result.failed, result.not_finished) == (LIMIT, LIMIT, 0, 0)
    assert sorted(c.outcome for c in server.calls if c.outcome != "ok") == [
        "429",
        "500",
        "malformed",
        "slow",
        "truncated",
    ]
    ck = _checkpoint(result.run_dir)
    assert (ck["answeringModel"], ck["judge"]) == ("gpt-4o-mini", "gpt-4o")
    assert ck["benchNb"]["tokenizer"] == "tiktoken:o200k_base"
    assert set(ck["benchNb"]["promptHashes"]) >= {"answer", "judge:gpt-4o"}
    price = DEFAULT_PRICES["gpt-4o-mini"]
    for q in ck["questions"].values():
        answer, evaluate, extra = q["phases"]["answer"], q["phases"]["evaluate"], q["benchNb"]
        assert evaluate["status"] == "completed" and evaluate["label"] == "correct"
        assert answer["hypothesis"] == "scripted answer"
        assert answer["contextTokens"] == answer["promptTokens"] - answer["basePromptTokens"] > 0
        assert extra["outputTokens"] == fake_token_count("scripted answer")
        assert extra["costUsd"] == pytest.approx(
            (extra["inputTokens"] * price.input_per_mtok + extra["outputTokens"] * price.output_per_mtok)
            / 1e6
        )
    report = json.loads((result.run_dir / "report.json").read_text())
    assert report["summary"]["totalQuestions"] == LIMIT
    assert "memscore" in report
    for file in result.run_dir.rglob("*"):
        if file.is_file():
            assert b"sk-e2e-SECRET-123" not in file.read_bytes(), file

    # The same run again under a new id: every answer and verdict comes from the cache.
    calls = server.count()
    again = _run(locomo_path, runs, "llm-e2e-again")
    assert again.evaluated == LIMIT
    assert server.count() == calls
    ck2 = _checkpoint(again.run_dir)
    for qid, q in ck2["questions"].items():
        first = ck["questions"][qid]["phases"]
        assert q["phases"]["answer"]["promptTokens"] == first["answer"]["promptTokens"]
        assert q["phases"]["evaluate"]["label"] == first["evaluate"]["label"]


@pytest.mark.slow
def test_the_cli_runs_with_llm_aliases_against_the_local_server(
    llm_env: LLMServer, locomo_path: Path, tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys

    server = llm_env
    server.script(Fault("429", retry_after=0.2), Fault("truncated"), Fault("malformed"), Fault("500"))
    runs = tmp_path / "runs"

    def bench_nb_run(run_id: str) -> subprocess.CompletedProcess[str]:
        args = ["run", "-p", "sqlite", "-b", "locomo", "--dataset", str(locomo_path)]
        args += ["-m", "gpt-4o-mini", "-j", "gpt-4o", "--limit", "6", "-r", run_id]
        args += ["--runs-dir", str(runs), "--no-progress"]
        return subprocess.run(
            [sys.executable, "-m", "bench_nb", *args],
            env=dict(os.environ),  # OPENAI_BASE_URL, OPENAI_API_KEY, BENCH_NB_LLM_CACHE from the fixture
            capture_output=True,
            text=True,
            timeout=300,
        )

    proc = bench_nb_run("cli-llm")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "6 evaluated, 0 failed" in proc.stdout
    assert sorted(c.outcome for c in server.calls if c.outcome != "ok") == [
        "429",
        "500",
        "malformed",
        "truncated",
    ]
    ck = _checkpoint(runs / "cli-llm")
    assert all(q["benchNb"]["costUsd"] > 0 for q in ck["questions"].values())
    assert all(q["phases"]["answer"]["promptTokens"] > 0 for q in ck["questions"].values())
    calls = server.count()
    again = bench_nb_run("cli-llm-again")
    assert again.returncode == 0, again.stderr + again.stdout
    assert server.count() == calls  # everything replayed from the cache
