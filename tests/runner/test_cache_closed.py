"""A run, a rejudge and a reanswer close their LLM client when they end: no handle on the response cache's
SQLite file (nor an SDK client's socket) is left open in the process, so a notebook running many runs does not
pile them up. Against the local API server, its replies cached in the test's directory."""

from __future__ import annotations

import os
from pathlib import Path

from runner_fakes import CountingProvider, make_benchmark
from runner_llm import llm_env, llm_server

from bench_nb.runner import run_benchmark
from bench_nb.runner.reanswer import reanswer
from bench_nb.runner.rejudge import rejudge
from llm_server import LLMServer

__all__ = ["llm_env", "llm_server"]


def _open_in(folder: Path) -> list[str]:
    """The files under ``folder`` this process holds open (its /proc/self/fd links)."""
    targets = (os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd"))
    return sorted(t for t in targets if t.startswith(str(folder.resolve())))


def test_response_cache_closed_when_a_run_rejudge_or_reanswer_ends(
    llm_env: LLMServer, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    run_benchmark(
        CountingProvider(),
        make_benchmark(2, 2),
        answerer="gpt-4o-mini",
        judges="f1",
        run_id="llm",
        runs_dir=tmp_path / "runs",
        progress=False,
    )
    assert (cache / "llm.sqlite").is_file() and llm_env.count() > 0  # the run called and cached
    assert _open_in(cache) == []
    assert rejudge(tmp_path / "runs" / "llm", ["gpt-4o-mini"]).graded == {"gpt-4o-mini": 4}
    assert _open_in(cache) == []
    assert reanswer(tmp_path / "runs" / "llm", benchmark=make_benchmark(2, 2)).answered > 0
    assert _open_in(cache) == []
