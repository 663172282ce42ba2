"""bench-nb run --repeat N: N runs with one set of settings, each repeat's LLM calls made afresh (its own
response cache), resumable, and their between-run variance; against the local API server."""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from runner_llm import llm_env, llm_server

import bench_nb
from bench_nb.cli import cli
from bench_nb.metrics.repeats import repeat_groups, repeat_variance
from llm_server import Fault, LLMServer

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


def test_two_runs_in_one_process_with_different_caches_never_share_a_client(
    llm_env: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each run resolves an LLM client of its own (``RunPlan.client``): a second run given another response
    cache writes to it and replays nothing of the first run's. The process-wide client it replaced was made
    once, so the second run replayed the first one's cache."""
    from bench_nb.runner.run import run_benchmark

    for run_id, cache, repeat in (("a", "a.sqlite", 1), ("b", "b.sqlite", 1), ("b", "b.sqlite", 2)):
        monkeypatch.setenv("BENCH_NB_LLM_CACHE", str(tmp_path / cache))
        result = run_benchmark(
            "no-memory",
            "sample",
            limit=2,
            answerer="gpt-4o-mini",
            judges="f1",
            repeat=repeat,
            run_id=f"{run_id}-r{repeat}",
            runs_dir=tmp_path / "runs",
            progress=False,
        )
        assert result.status == "completed"
    assert llm_env.count() == 6  # no run replayed another's replies
    assert {p.name for p in tmp_path.glob("*.sqlite")} == {"a.sqlite", "b.sqlite", "b.repeat-2.sqlite"}


def test_a_rejudge_or_reanswer_of_a_repeat_used_the_first_repeats_cache(
    llm_env: LLMServer, tmp_path: Path
) -> None:
    """A rejudge and a reanswer of repeat 2 read and write repeat 2's response cache, as its run did
    (``benchNb.repeat``). They made their model judge and answerer from the environment, so repeat 2's verdicts
    were replayed from repeat 1's cache when its answers were the same."""
    from bench_nb.runner.reanswer import reanswer
    from bench_nb.runner.rejudge import rejudge
    from bench_nb.runner.run import run_benchmark

    runs = []
    for repeat in (1, 2):  # the offline answerer: both repeats answer alike
        kwargs = dict(limit=2, answerer="extractive", judges="f1", runs_dir=tmp_path / "runs", progress=False)
        result = run_benchmark("no-memory", "sample", repeat=repeat, run_id=f"rep-r{repeat}", **kwargs)
        runs.append(result.run_dir)
    llm_env.responder = lambda path, body: '{"score": 0, "label": "incorrect"}'
    assert rejudge(runs[0], ["gpt-4o-mini"]).graded == {"gpt-4o-mini": 2}
    assert llm_env.count() == 2 and rows(tmp_path, "llm.sqlite") == 2
    assert rejudge(runs[1], ["gpt-4o-mini"]).graded == {"gpt-4o-mini": 2}
    assert (
        llm_env.count() == 4 and rows(tmp_path, "llm.repeat-2.sqlite") == 2
    )  # asked afresh, into repeat 2's cache
    rejudge(runs[1], ["gpt-4o-mini"], force=True)
    assert llm_env.count() == 4  # read back from repeat 2's cache
    again = reanswer(runs[1], answerer="gpt-4o-mini")
    assert again.answered > 0 and rows(tmp_path, "llm.repeat-2.sqlite") == 2 + again.answered
    assert rows(tmp_path, "llm.sqlite") == 2


def test_a_repeat_resumed_by_its_run_id_alone_used_the_first_repeats_cache(
    llm_env: LLMServer, tmp_path: Path
) -> None:
    """``bench-nb run -r RUN-r2`` (no ``--repeat``) resumes repeat 2 with repeat 2's response cache, which the
    run records (``benchNb.repeat``); it took repeat 1's, the default of ``--repeat``."""
    from bench_nb.runner.run import run_benchmark

    cache = tmp_path / "cache"
    llm_env.script(Fault("400"))  # one answer fails: the run is left to resume
    first = run_benchmark(
        "no-memory",
        "sample",
        limit=2,
        answerer="gpt-4o-mini",
        judges="f1",
        repeat=2,
        run_id="rep-r2",
        runs_dir=tmp_path / "runs",
        progress=False,
    )
    assert first.failed and [p.name for p in cache.glob("*.sqlite")] == ["llm.repeat-2.sqlite"]
    again = run_benchmark(run_id="rep-r2", runs_dir=tmp_path / "runs", progress=False)
    assert again.status == "completed" and not again.failed
    assert [p.name for p in cache.glob("*.sqlite")] == ["llm.repeat-2.sqlite"]


def test_a_rejudge_or_reanswer_of_a_repeat_made_before_runs_recorded_it_used_the_first_repeats_cache(
    llm_env: LLMServer, tmp_path: Path
) -> None:
    """A repeat made before runs recorded which repeat they are (``benchNb.version`` 1, no ``repeat``) is known
    by its run id's ``-r<i>``, the name ``--repeat`` and sweeps gave it, with repeat 1 beside it: a rejudge and
    a reanswer of old repeat 2 read and write repeat 2's response cache (they took repeat 1's); a run of
    version 2 that records no repeat is repeat 1, whatever its id."""
    from bench_nb.runner.reanswer import reanswer
    from bench_nb.runner.rejudge import rejudge
    from bench_nb.runner.run import run_benchmark

    kwargs = dict(limit=2, answerer="extractive", judges="f1", runs_dir=tmp_path / "runs", progress=False)
    for repeat in (1, 2):  # as --repeat made them: repeat 1 beside repeat 2
        old = run_benchmark("no-memory", "sample", repeat=repeat, run_id=f"rep-r{repeat}", **kwargs).run_dir
        _as_before_runs_recorded_their_repeat(old)
    plain = run_benchmark("no-memory", "sample", run_id="plain-r3", **kwargs).run_dir  # answers alike
    llm_env.responder = lambda path, body: '{"score": 0, "label": "incorrect"}'
    assert rejudge(plain, ["gpt-4o-mini"]).graded == {"gpt-4o-mini": 2}
    assert llm_env.count() == 2 and rows(tmp_path, "llm.sqlite") == 2
    assert rejudge(old, ["gpt-4o-mini"]).graded == {"gpt-4o-mini": 2}
    assert (
        llm_env.count() == 4 and rows(tmp_path, "llm.repeat-2.sqlite") == 2
    )  # asked afresh, into repeat 2's cache
    again = reanswer(old, answerer="gpt-4o-mini")
    assert again.answered > 0 and rows(tmp_path, "llm.repeat-2.sqlite") == 2 + again.answered
    assert rows(tmp_path, "llm.sqlite") == 2


def rows(tmp_path: Path, name: str) -> int:
    """How many responses the response cache ``name`` holds."""
    with contextlib.closing(sqlite3.connect(tmp_path / "cache" / name)) as db:
        return int(db.execute("SELECT count(*) FROM responses").fetchone()[0])


def _as_before_runs_recorded_their_repeat(run_dir: Path) -> None:
    """The run's checkpoint as bench_nb wrote it before runs recorded their repeat: version 1, no ``repeat``."""
    import json

    checkpoint = json.loads((run_dir / "checkpoint.json").read_text())
    checkpoint["benchNb"].pop("repeat", None)
    checkpoint["benchNb"]["version"] = 1
    (run_dir / "checkpoint.json").write_text(json.dumps(checkpoint))


def test_a_repeat_made_before_runs_recorded_it_resumed_by_its_run_id_alone_used_the_first_repeats_cache(
    llm_env: LLMServer, tmp_path: Path
) -> None:
    from bench_nb.runner.run import run_benchmark

    kwargs: dict[str, Any] = dict(answerer="gpt-4o-mini", judges="f1", limit=2, progress=False)
    for repeat in (1, 2):  # as --repeat made them: repeat 1 first, beside repeat 2
        if repeat == 2:
            llm_env.script(Fault("400"))  # one answer fails: the run is left to resume
        run = run_benchmark(
            "no-memory",
            "sample",
            repeat=repeat,
            run_id=f"rep-r{repeat}",
            runs_dir=tmp_path / "runs",
            **kwargs,
        )
        assert bool(run.failed) == (repeat == 2)
        _as_before_runs_recorded_their_repeat(run.run_dir)
    again = run_benchmark(run_id="rep-r2", runs_dir=tmp_path / "runs", progress=False)
    assert again.status == "completed" and not again.failed
    assert rows(tmp_path, "llm.repeat-2.sqlite") == 2 and rows(tmp_path, "llm.sqlite") == 2  # none replayed


def test_a_run_of_version_1_a_user_named_x_r2_was_read_as_repeat_2(
    llm_env: LLMServer, tmp_path: Path
) -> None:
    """A run of ``benchNb.version`` 1 records no repeat: it is repeat i > 1 only if ``--repeat`` or a sweep made
    it, and they leave what a run named ``x-r2`` by hand lacks: ``<id>-r1``, made first beside it with the same
    settings. A rejudge of a v1 ``x-r2`` alone, or of a v1 ``y-r2`` beside a ``y-r1`` on other questions, took
    repeat 2's response cache (its run id alone said repeat 2); they are repeat 1 and use the usual one."""
    from bench_nb.runner.rejudge import rejudge
    from bench_nb.runner.run import run_benchmark

    kwargs: dict[str, Any] = dict(
        answerer="extractive", judges="f1", runs_dir=tmp_path / "runs", progress=False
    )
    made = [
        run_benchmark("no-memory", "sample", limit=2, repeat=i, run_id=f"rep-r{i}", **kwargs) for i in (1, 2)
    ]
    named = run_benchmark("no-memory", "sample", limit=2, run_id="x-r2", **kwargs)
    other = [run_benchmark("no-memory", "sample", limit=1 + i, run_id=f"y-r{i}", **kwargs) for i in (1, 2)]
    for result in (*made, named, *other):
        _as_before_runs_recorded_their_repeat(result.run_dir)
    llm_env.responder = lambda path, body: '{"score": 0, "label": "incorrect"}'
    assert rejudge(named.run_dir, ["gpt-4o-mini"]).graded == {"gpt-4o-mini": 2}
    assert rows(tmp_path, "llm.sqlite") == 2 and not (tmp_path / "cache" / "llm.repeat-2.sqlite").exists()
    assert rejudge(other[1].run_dir, ["gpt-4o-mini"]).graded == {"gpt-4o-mini": 3}
    # x-r2's two verdicts replayed from the usual cache
    assert llm_env.count() == 3 and rows(tmp_path, "llm.sqlite") == 3
    assert rejudge(made[1].run_dir, ["gpt-4o-mini"]).graded == {"gpt-4o-mini": 2}
    assert llm_env.count() == 5 and rows(tmp_path, "llm.repeat-2.sqlite") == 2  # the repeat: its own cache


def test_a_rejudge_of_an_old_repeat_given_as_dot_or_a_link_took_repeat_1s_cache(
    llm_env: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of ``benchNb.version`` 1 is told a repeat by its folder's name (``<id>-r2`` beside ``<id>-r1``):
    a rejudge given ``.`` from inside the folder (its name ``""``) or a link to it (the link's name) read no
    such name, took old repeat 2 for repeat 1 and judged it with repeat 1's response cache."""
    from bench_nb.runner.rejudge import rejudge
    from bench_nb.runner.run import run_benchmark

    kwargs: dict[str, Any] = dict(
        limit=2, answerer="extractive", judges="f1", runs_dir=tmp_path / "runs", progress=False
    )
    for repeat in (1, 2):  # as --repeat made them: repeat 1 beside repeat 2
        old = run_benchmark("no-memory", "sample", repeat=repeat, run_id=f"rep-r{repeat}", **kwargs).run_dir
        _as_before_runs_recorded_their_repeat(old)
    llm_env.responder = lambda path, body: '{"score": 0, "label": "incorrect"}'
    monkeypatch.chdir(old)
    assert rejudge(Path("."), ["gpt-4o-mini"]).graded == {"gpt-4o-mini": 2}
    assert not (tmp_path / "cache" / "llm.sqlite").exists()  # was asked into repeat 1's cache
    assert rows(tmp_path, "llm.repeat-2.sqlite") == 2
    (tmp_path / "latest").symlink_to(old)
    rejudge(tmp_path / "latest", ["gpt-4o-mini"], force=True)
    assert llm_env.count() == 2  # read back from repeat 2's cache
    assert not (tmp_path / "cache" / "llm.sqlite").exists()


def test_an_old_repeat_whose_first_repeat_cannot_be_read_raised_instead_of_being_repeat_1() -> None:
    """``repeat_number`` takes a run of ``benchNb.version`` 1 whose repeat 1 does not read for repeat 1: a
    repeat 1 whose checkpoint this user may not read raised PermissionError instead, so its repeat 2 could be
    neither rejudged, reanswered nor resumed. Asked as a user who may not read it (``nobody`` under root, in
    a forked child: its Python is not that user's to start)."""
    from bench_nb.runformat.load import read_run
    from bench_nb.runformat.spec import read_spec
    from bench_nb.runner.repeats import repeat_number
    from bench_nb.runner.run import run_benchmark

    with tempfile.TemporaryDirectory() as tmp:  # not pytest's folder: that is its user's alone
        Path(tmp).chmod(0o755)
        kwargs: dict[str, Any] = dict(
            limit=2, answerer="extractive", judges="f1", runs_dir=Path(tmp), progress=False
        )
        for repeat in (1, 2):
            old = run_benchmark(
                "no-memory", "sample", repeat=repeat, run_id=f"rep-r{repeat}", **kwargs
            ).run_dir
            _as_before_runs_recorded_their_repeat(old)
        spec = read_spec(read_run(old))
        assert repeat_number(old, spec) == 2  # repeat 1 readable
        (Path(tmp) / "rep-r1" / "checkpoint.json").chmod(0)
        if os.geteuid() != 0:
            assert repeat_number(old, spec) == 1
            return
        pid = os.fork()
        if pid == 0:  # the child: as nobody, its answer as its exit status (99: it raised)
            code = 99
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                code = repeat_number(old, spec)
            finally:
                os._exit(code)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 1
