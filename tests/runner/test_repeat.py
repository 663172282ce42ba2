"""bench-nb run --repeat N: N runs with one set of settings, each repeat's LLM calls made afresh (its own
response cache), resumable, and their between-run variance; against the local API server."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from runner_llm import llm_env, llm_server

import bench_nb
from bench_nb.cli import cli
from bench_nb.metrics.repeats import repeat_groups, repeat_variance
from llm_server import LLMServer

__all__ = ["llm_env", "llm_server"]


def test_repeat_makes_fresh_calls_per_repeat_and_resumes(llm_env: LLMServer, tmp_path: Path) -> None:
    server = llm_env
    counter = itertools.count()

    def responder(path: str, body: dict[str, Any]) -> str:
        return f"answer {next(counter)}"  # a different reply to every call

    server.responder = responder
    args = [
        "run",
        "-p",
        "no-memory",
        "-b",
        "sample",
        "--limit",
        "3",
        "-m",
        "gpt-4o-mini",
        "-j",
        "f1",
        "--runs-dir",
        str(tmp_path / "runs"),
        "-r",
        "rep",
        "--repeat",
        "2",
        "--no-progress",
    ]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert server.count() == 6  # 3 answers per repeat: repeat 2 did not replay repeat 1's replies
    cache = tmp_path / "cache"
    assert (cache / "llm.sqlite").is_file() and (cache / "llm.repeat-2.sqlite").is_file()
    runs = [tmp_path / "runs" / "rep-r1", tmp_path / "runs" / "rep-r2"]
    q = bench_nb.questions_df(runs, backend="polars")
    first, second = (q.filter(q["run_id"] == r)["hypothesis"].to_list() for r in ("rep-r1", "rep-r2"))
    assert set(first).isdisjoint(second)
    assert set(repeat_groups(q).values()) == {"rep-r1"}  # one group: the same settings
    assert "2 repeats: accuracy" in result.output

    again = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert server.count() == 6  # both repeats were complete: nothing asked again
    table = repeat_variance(runs, backend="polars")
    assert table["runs"].to_list() == [2] and table["replicates"].to_list() == [1]


def test_a_repeat_run_has_its_own_client_and_leaves_the_process_one_alone(
    llm_env: LLMServer, tmp_path: Path
) -> None:
    """The repeat's response cache belongs to its run (``ExecutionOptions.repeat``): the process-wide client,
    which ``--repeat`` used to swap for the length of a repeat, is the same object before and after."""
    from bench_nb.models.client import default_client
    from bench_nb.runner.run import run_benchmark

    before = default_client()
    for repeat in (1, 2):
        result = run_benchmark(
            "no-memory",
            "sample",
            limit=2,
            answerer="gpt-4o-mini",
            judges="f1",
            repeat=repeat,
            run_id=f"own-r{repeat}",
            runs_dir=tmp_path / "runs",
            progress=False,
        )
        assert result.status == "completed" and default_client() is before
    assert llm_env.count() == 4  # repeat 2 replayed nothing of repeat 1
    assert (tmp_path / "cache" / "llm.repeat-2.sqlite").is_file()
