"""A local sweep whose hold manager process dies fails loudly, naming the manager, instead of blaming the
model for the connection errors its workers then meet (issue 31: 373 of 400 questions recorded as
"ConnectionRefusedError (not retryable)" and the sweep exited 0).

Real processes: the sweep's spawned pool and manager, its LLM answerer calling the local LLM API server
(tests/llm_server.py) over HTTP; the manager is killed with SIGKILL as the first run finishes.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path

import pytest

from bench_nb.errors import HoldBoardLost
from bench_nb.runformat.load import read_checkpoint
from bench_nb.runner.sweep import SweepRun, parse_sweep, run_sweep
from llm_server import LLMServer, llm_server

__all__ = ["llm_server"]


@pytest.mark.slow
def test_a_sweep_whose_hold_manager_dies_fails_naming_it(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_server.idle_timeout = 900.0  # the workers' imports can take a minute on a busy machine
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-sweep-manager-not-real")
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", "off")
    monkeypatch.setenv("BENCH_NB_LLM_BACKOFF", "0.01")
    raw = {
        "id": "lost",
        "providers": ["sqlite"],
        "benchmarks": ["sample"],
        "answerers": ["gpt-4o-mini"],
        "repeats": 4,
        "workers": 1,
        "settings": {"limit": 6},
    }
    runs = tmp_path / "data" / "runs"
    killed: list[int] = []

    def kill_the_manager(run: SweepRun) -> None:
        assert run.status == "completed", run.error
        if not killed:
            [manager] = [p for p in multiprocessing.active_children() if p.name.startswith("_HoldManager")]
            os.kill(manager.pid, signal.SIGKILL)  # type: ignore[arg-type]
            killed.append(manager.pid)  # type: ignore[arg-type]

    with pytest.raises(HoldBoardLost, match="the sweep's hold manager process") as caught:
        run_sweep(parse_sweep(raw, tmp_path / "lost.toml"), runs_dir=runs, on_run=kill_the_manager)
    assert f"pid {killed[0]}" in str(caught.value) and "run it again to resume" in str(caught.value)
    # no question was blamed on the model for the manager's death
    for checkpoint in runs.glob("*/checkpoint.json"):
        ck = read_checkpoint(checkpoint, strict=True)[0]
        for qid, q in ck.questions.items():
            phases = [q.phases.ingest, q.phases.indexing, q.phases.search, q.phases.answer, q.phases.evaluate]
            assert all(p.status != "failed" for p in phases), (checkpoint, qid)
