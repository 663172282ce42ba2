"""The question deadline (``--question-timeout``): a hung model or a provider that keeps failing cannot hold a
question past it; the phase fails (and a resume retries it), the other questions go on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_fakes import CountingProvider, Flaky, make_benchmark
from runner_llm import llm_env, llm_server

from bench_nb.runner import RetryPolicy, run_benchmark
from llm_server import Fault, LLMServer

__all__ = ["llm_env", "llm_server"]


def test_a_hung_model_call_fails_the_question_at_its_deadline(
    llm_env: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_NB_LLM_TIMEOUT", "30")  # the client alone would wait 30 s, then retry
    llm_env.script(Fault("slow", delay=6))
    result = run_benchmark(
        "sqlite",
        "sample",
        limit=2,
        answerer="gpt-4o-mini",
        judges="contains",
        concurrency=1,
        question_timeout_s=2.0,
        runs_dir=tmp_path,
        run_id="d",
        progress=False,
    )
    checkpoint = json.loads((result.run_dir / "checkpoint.json").read_text())
    errors = [q["phases"]["answer"].get("error") for q in checkpoint["questions"].values()]
    assert (result.evaluated, result.failed) == (1, 1), errors
    (failed,) = [
        q for q in checkpoint["questions"].values() if q["phases"]["answer"].get("status") == "failed"
    ]
    assert failed["phases"]["answer"]["error"].startswith("DeadlineExceeded: the question's deadline (2 s")
    assert failed["benchNb"]["errors"]["answer"]["retryable"] is False
    assert [c.outcome for c in llm_env.calls] == ["slow", "ok"]  # the hung call was not made again


def test_retries_stop_at_the_deadline(tmp_path: Path) -> None:
    provider = CountingProvider(fail={"search": lambda key: Flaky("still down")})
    result = run_benchmark(
        provider,
        make_benchmark(1, 1),
        judges="contains",
        retry=RetryPolicy(max_attempts=100, initial_s=0.1, max_s=0.1, jitter_s=0),
        question_timeout_s=0.35,
        runs_dir=tmp_path,
        run_id="d",
        progress=False,
    )
    assert result.failed == 1
    checkpoint = json.loads((result.run_dir / "checkpoint.json").read_text())
    (q,) = checkpoint["questions"].values()
    assert 1 <= q["benchNb"]["attempts"]["search"] <= 5  # not 100: no wait may end past the deadline
    assert provider.calls["search"] == q["benchNb"]["attempts"]["search"]
