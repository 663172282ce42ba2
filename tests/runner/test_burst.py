"""A burst of faults from the model API while many questions are answered at once: only the call that fails
for good (a 400) fails; every 429 and 5xx is retried.

The run is a real ``bench-nb run`` process (a fresh interpreter, so nothing is imported before its worker
threads start) against the local fault-injecting server (tests/llm_server.py). It used to lose 3-7 of 16
questions to "partially initialized module 'httpx'": the runner imported httpx inside worker threads while
the openai SDK looked it up in ``sys.modules`` from others.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from llm_server import Fault, LLMServer, llm_server

__all__ = ["llm_server"]


def test_a_burst_of_faults_loses_only_the_question_whose_call_failed_for_good(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.max_requests = 1000
    llm_server.script(
        *[Fault("429", retry_after=0.05)] * 6, Fault("400"), *[Fault("500")] * 6, Fault("429", retry_after=0)
    )
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-burst-test-0000000000",
        "OPENAI_BASE_URL": llm_server.openai_base_url,
        "BENCH_NB_LLM_CACHE": str(tmp_path / "llm.sqlite"),
        "BENCH_NB_LLM_TIMEOUT": "10",
        "BENCH_NB_LLM_BACKOFF": "0.01",
        "BENCH_NB_QUIET": "1",
    }
    command = [sys.executable, "-m", "bench_nb", "run", "-p", "sqlite", "-b", "sample", "--limit", "16"]
    command += ["-m", "gpt-4o-mini", "-j", "contains", "-r", "burst", "--runs-dir", str(tmp_path / "runs")]
    proc = subprocess.run(
        [*command, "--concurrency", "16"], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    checkpoint = json.loads((tmp_path / "runs" / "burst" / "checkpoint.json").read_text())
    errors = {
        qid: q["phases"]["answer"].get("error")
        for qid, q in checkpoint["questions"].items()
        if q["phases"]["answer"].get("status") != "completed"
    }
    assert len(errors) == 1, errors
    assert "HTTP 400" in next(iter(errors.values())), errors
    evaluated = [
        q for q in checkpoint["questions"].values() if q["phases"]["evaluate"].get("status") == "completed"
    ]
    assert len(evaluated) == 15
