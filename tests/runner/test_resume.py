"""Resume: results files a kill lost are rewritten from the checkpoint; a finished run is left as it is; a
notebook (`run_benchmark(run_id=...)`) and the CLI (`bench-nb run -r`) resume alike, from the run directory."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from cli_helpers import exit_code
from click.testing import CliRunner
from runner_fakes import CountingProvider, call_log, completed_phases, make_benchmark, pet_question, touched

from bench_nb.cli import cli
from bench_nb.errors import BenchNbError, ComparisonError, ProviderError, RunLockedError
from bench_nb.runformat.format import DECODE_COUNTS, PHASES
from bench_nb.runformat.lock import lock_run
from bench_nb.runformat.spec import RunRequest, check_resume
from bench_nb.runner import RetryPolicy, run_benchmark
from bench_nb.runner.lock import open_run

FAST_RETRY = RetryPolicy(max_attempts=2, initial_s=0.001, max_s=0.002, jitter_s=0.001)


def _run(tmp_path: Path, provider: CountingProvider):  # type: ignore[no-untyped-def]
    return run_benchmark(
        provider,
        make_benchmark(2, 4),
        judges="contains,f1",
        runs_dir=tmp_path / "runs",
        run_id="r1",
        retry=FAST_RETRY,
        progress=False,
    )


def _stamps(run_dir: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(run_dir)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def test_a_no_op_resume_of_a_finished_run_rebuilds_nothing(tmp_path: Path) -> None:
    first = _run(tmp_path, CountingProvider())
    before = _stamps(first.run_dir)
    assert {"checkpoint.json", "report.json"} <= set(before)
    again = CountingProvider()
    result = _run(tmp_path, again)
    assert (result.status, result.evaluated, result.failed, result.report_path) == (
        "completed",
        8,
        0,
        first.report_path,
    )
    assert not again.calls
    assert _stamps(first.run_dir) == before  # not one file rewritten, not even with the same bytes


def test_a_finished_run_without_its_report_gets_it_back(tmp_path: Path) -> None:
    first = _run(tmp_path, CountingProvider())
    report = json.loads((first.run_dir / "report.json").read_text())
    (first.run_dir / "report.json").unlink()
    _run(tmp_path, CountingProvider())
    rebuilt = json.loads((first.run_dir / "report.json").read_text())
    assert rebuilt["summary"] == report["summary"] and rebuilt["evaluations"] == report["evaluations"]


def test_missing_results_files_are_rewritten_from_the_checkpoint(tmp_path: Path) -> None:
    bad = pet_question(1, 2)
    failing = CountingProvider(fail={"search": lambda q: ProviderError("boom") if q == bad else None})
    first = _run(tmp_path, failing)
    assert first.failed == 1
    results = first.run_dir / "results"
    files = {p.name: p.read_bytes() for p in results.iterdir()}
    assert len(files) == 7
    lost = sorted(files)[:3]  # a kill after the search was journaled, before its file was written
    for name in lost:
        (results / name).unlink()
    second = _run(tmp_path, CountingProvider())
    assert (second.evaluated, second.failed) == (8, 0)
    now = {p.name: p.read_bytes() for p in results.iterdir()}
    assert len(now) == 8
    assert {name: now[name] for name in files} == files  # byte for byte what the search phase wrote


def test_missing_results_files_of_a_finished_run_are_rewritten(tmp_path: Path) -> None:
    first = _run(tmp_path, CountingProvider())
    results = first.run_dir / "results"
    files = {p.name: p.read_bytes() for p in results.iterdir()}
    for name in list(files)[::2]:
        (results / name).unlink()
    _run(tmp_path, CountingProvider())
    assert {p.name: p.read_bytes() for p in results.iterdir()} == files


def test_temporary_files_a_killed_writer_left_are_removed_on_the_next_start(tmp_path: Path) -> None:
    first = _run(tmp_path, CountingProvider())
    left = [
        first.run_dir / ".checkpoint.json.4242.140.tmp",
        first.run_dir / ".report.json.4242.140.tmp",
        first.run_dir / "results" / ".h0-q0.json.4242.141.tmp",
    ]
    for path in left:
        path.write_bytes(b"x" * 1000)
    _run(tmp_path, CountingProvider())
    assert not [p for p in left if p.exists()]


# -- a notebook resume and a CLI resume are one resume ---------------------------------------------------------

HERE = Path(__file__).resolve().parent
RUN_ID = "killed"
# Settings that are none of the defaults, so a resume given nothing must read every one from the run.
STARTED_WITH = ["-k", "4", "--sample", "2", "--judge-replicates", "2", "--isolate-per-question"]
TIMING = frozenset({"startedAt", "completedAt", "durationMs", "createdAt", "updatedAt", "at", "latency"})


def _env(log: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "BENCH_NB_TEST_CALL_LOG": str(log),
        "BENCH_NB_QUIET": "1",
        **extra,
    }


def _bench_nb(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", "run", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _timeless(value: Any, runs: Path) -> Any:
    """``value`` without what a clock decides (times, durations, latencies), and with ``runs`` written RUNS."""
    if isinstance(value, dict):
        return {k: _timeless(v, runs) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_timeless(v, runs) for v in value]
    if isinstance(value, str):
        return value.replace(str(runs), "RUNS")
    return value


def _outcome(runs: Path) -> dict[str, Any]:
    """What a finished run holds, clock left out: checkpoint, report.json, judgments.jsonl, results files."""
    run_dir = runs / RUN_ID
    report = json.loads((run_dir / "report.json").read_text())
    for key in ("timestamp", "memscore", "memscoreComponents"):  # the MemScore holds a latency
        del report[key]
    for evaluation in report["evaluations"]:
        for key in ("searchDurationMs", "answerDurationMs", "totalDurationMs"):
            del evaluation[key]
    results = {p.name: json.loads(p.read_text()) for p in sorted((run_dir / "results").iterdir())}
    for body in results.values():
        del body["timestamp"]
    judgments = [json.loads(line) for line in (run_dir / "judgments.jsonl").read_text().splitlines()]
    return {
        "checkpoint": _timeless(json.loads((run_dir / "checkpoint.json").read_text()), runs),
        "report": _timeless(report, runs),
        "judgments": sorted(json.dumps(_timeless(j, runs), sort_keys=True) for j in judgments),
        "results": _timeless(results, runs),
    }


def _work(log: Path, run_dir: Path) -> Counter[tuple[str, str]]:
    """The (question, phase) pairs the calls in ``log`` worked on, with how often."""
    ck = json.loads((run_dir / "checkpoint.json").read_text())
    by_container: dict[str, list[str]] = {}
    for qid, q in ck["questions"].items():
        by_container.setdefault(q["containerTag"], []).append(qid)
    by_search = {f"{q['containerTag']}\t{q['question']}": qid for qid, q in ck["questions"].items()}
    return Counter(pair for call in call_log(log) for pair in touched(call, by_container, by_search))


@pytest.mark.slow
def test_a_killed_run_resumes_the_same_from_a_notebook_and_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    killed = tmp_path / "killed-runs"
    start = [
        *("-p", "runner_fakes:LoggedProvider", "-b", "sample", "-m", "runner_fakes:LoggedAnswerer"),
        *("-j", "runner_fakes:LoggedJudge,f1", "-r", RUN_ID, "--runs-dir", str(killed), "--concurrency", "3"),
        *STARTED_WITH,
    ]
    # The run kills itself (SIGKILL) at its 25th provider/answerer/judge call, with others in flight.
    first = _bench_nb(
        *start,
        env=_env(tmp_path / "killed.jsonl", BENCH_NB_TEST_DIE_AFTER="25", BENCH_NB_TEST_DELAY_S="0.005"),
    )
    assert first.returncode == -signal.SIGKILL, first.stderr[-2000:]
    done = completed_phases(killed / RUN_ID)
    assert 0 < len(done) < 12 * len(PHASES)
    notebook, cli_runs = tmp_path / "notebook", tmp_path / "cli"
    for runs in (notebook, cli_runs):
        shutil.copytree(killed, runs)

    # A notebook: the run id and where runs live, nothing else.
    monkeypatch.setenv("BENCH_NB_TEST_CALL_LOG", str(tmp_path / "notebook.jsonl"))
    monkeypatch.delenv("BENCH_NB_TEST_DIE_AFTER", raising=False)
    monkeypatch.delenv("BENCH_NB_TEST_DELAY_S", raising=False)
    monkeypatch.setenv("BENCH_NB_QUIET", "1")
    result = run_benchmark(run_id=RUN_ID, runs_dir=notebook)
    assert (result.status, result.evaluated, result.failed, result.target) == ("completed", 12, 0, 12)
    # The command line: -r alone, in its own process.
    second = _bench_nb("-r", RUN_ID, "--runs-dir", str(cli_runs), env=_env(tmp_path / "cli.jsonl"))
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"{RUN_ID}: completed, 12 evaluated, 0 failed" in second.stdout

    # Both resumed with the run's own settings ...
    ck = json.loads((notebook / RUN_ID / "checkpoint.json").read_text())
    assert len(ck["targetQuestionIds"]) == 12 and ck["benchNb"]["judgeReplicates"] == 2
    assert max(len(q["phases"]["search"]["results"]) for q in ck["questions"].values()) == 4  # k
    assert len({q["containerTag"] for q in ck["questions"].values()}) == 12  # one container per question
    # ... into the same run, byte for byte but for the clock.
    assert _outcome(notebook) == _outcome(cli_runs)
    # The same work, each piece once, none of it done before the kill, and nothing left undone.
    work = _work(tmp_path / "notebook.jsonl", notebook / RUN_ID)
    assert work == _work(tmp_path / "cli.jsonl", cli_runs / RUN_ID)
    assert max(work.values()) == 1 and not set(work) & done
    every = {(qid, phase) for qid in ck["targetQuestionIds"] for phase in PHASES}
    assert done | set(work) == every

    # Resuming the finished run from a notebook does nothing: no call, not one file rewritten.
    before = _stamps(notebook / RUN_ID)
    calls = len(call_log(tmp_path / "notebook.jsonl"))
    again = run_benchmark(run_id=RUN_ID, runs_dir=notebook)
    assert (again.status, again.evaluated) == ("completed", 12)
    assert len(call_log(tmp_path / "notebook.jsonl")) == calls
    assert _stamps(notebook / RUN_ID) == before


@pytest.fixture(scope="module")
def finished_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run ``s`` made by ``bench-nb run`` with settings that are not all the defaults."""
    runs = tmp_path_factory.mktemp("finished") / "runs"
    args = ["run", "-p", "sqlite", "-b", "sample", "--sample", "1", "-k", "4", "-r", "s", "--no-progress"]
    result = CliRunner().invoke(cli, [*args, "--runs-dir", str(runs)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return runs


CONFLICTS = [
    (["-k", "5"], {"k": 5}, "retrieval limit k: 4 in the run, 5 now"),
    (["-p", "no-memory"], {"provider": "no-memory"}, "provider: 'sqlite' in the run, 'no-memory' now"),
    (["-j", "f1,contains"], {"judges": "f1,contains"}, "primary judge: 'contains' in the run, 'f1' now"),
    (["--limit", "2"], {"limit": 2}, "question set: "),
    (["--isolate-per-question"], {"isolate_per_question": True}, "isolate per question: False in the run"),
    (["--judge-replicates", "3"], {"judge_replicates": 3}, "judge replicates: 1 in the run, 3 now"),
]


@pytest.mark.parametrize(("typed", "given", "expected"), CONFLICTS, ids=[c[0][0] for c in CONFLICTS])
def test_a_setting_the_run_was_not_made_with_is_refused_alike(
    finished_runs: Path, typed: list[str], given: dict[str, Any], expected: str
) -> None:
    before = _stamps(finished_runs / "s")
    with pytest.raises(ComparisonError) as notebook:
        run_benchmark(run_id="s", runs_dir=finished_runs, progress=False, **given)
    result = CliRunner().invoke(cli, ["run", "-r", "s", "--runs-dir", str(finished_runs), *typed])
    assert isinstance(result.exception, ComparisonError)
    assert str(result.exception) == str(notebook.value)
    assert expected in str(notebook.value) and "cannot be resumed with these" in str(notebook.value)
    assert _stamps(finished_runs / "s") == before  # refused before anything was written


def test_what_may_change_on_a_resume_is_taken_alike(finished_runs: Path) -> None:
    before = _stamps(finished_runs / "s")
    result = run_benchmark(
        run_id="s",
        runs_dir=finished_runs,
        concurrency=2,
        phase_concurrency={"answer": 1},
        retry=RetryPolicy(max_attempts=1),
        indexing_timeout_s=30,
        question_timeout_s=30,
        fail_fast=True,
        progress=False,
    )
    assert (result.status, result.evaluated, result.target) == ("completed", 6, 6)
    typed = ["--concurrency", "2", "--retries", "0", "--question-timeout", "30", "--fail-fast", "-k", "4"]
    out = CliRunner().invoke(cli, ["run", "-r", "s", "--runs-dir", str(finished_runs), *typed])
    assert out.exit_code == 0, out.output
    assert "s: completed, 6 evaluated" in out.output
    assert _stamps(finished_runs / "s") == before  # a finished run: nothing to do, by either path


def test_a_resumed_run_is_read_once_under_its_lock_each_question_decoded_once(finished_runs: Path) -> None:
    run_dir = finished_runs / "s"
    with open_run(run_dir) as resumed:
        assert DECODE_COUNTS.questions == 6  # the one read: every question decoded once
        with pytest.raises(RunLockedError):  # read under the lock, one writer per run
            lock_run(run_dir)
        assert resumed is not None
        checkpoint, stored = resumed
    assert len(checkpoint.questions) == 6
    request = RunRequest().resumed(stored, where=str(run_dir))
    assert (request.provider, request.benchmark, request.k, request.sample_per_type) == (
        "sqlite",
        "sample",
        4,
        1,
    )
    wanted = msgspec.structs.replace(stored, k=5)
    with pytest.raises(ComparisonError, match="retrieval limit k: 4 in the run, 5 now"):
        check_resume(checkpoint, wanted, str(run_dir))
    check_resume(checkpoint, stored, str(run_dir))  # the run's own settings resume it


def test_a_run_made_with_objects_needs_them_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, CountingProvider())
    runs = tmp_path / "runs"
    # the message names both ways to give it again: in Python and on the command line
    with pytest.raises(
        BenchNbError, match=r"run r1 .* provider object \('counting'\).*provider=\.\.\..*-p NAME"
    ):
        run_benchmark(run_id="r1", runs_dir=runs)
    with pytest.raises(BenchNbError, match=r"loaded Benchmark \('synthetic'\).*benchmark=\.\.\..*-b NAME"):
        run_benchmark(CountingProvider(), run_id="r1", runs_dir=runs)
    assert exit_code(["run", "-r", "r1", "--runs-dir", runs]) == 1
    assert "-p NAME or -p module:attribute to bench-nb run -r" in capsys.readouterr().err
    again = CountingProvider()
    result = run_benchmark(again, make_benchmark(2, 4), run_id="r1", runs_dir=runs, progress=False)
    assert (result.status, result.evaluated) == ("completed", 8) and not again.calls  # judges: the run's


def test_resuming_a_run_that_is_not_there_says_so_alike(tmp_path: Path) -> None:
    with pytest.raises(BenchNbError) as notebook:
        run_benchmark(run_id="nope", runs_dir=tmp_path)
    assert "there is no run 'nope' in" in str(notebook.value) and "-p and -b" in str(notebook.value)
    result = CliRunner().invoke(cli, ["run", "-r", "nope", "--runs-dir", str(tmp_path)])
    assert isinstance(result.exception, BenchNbError) and str(result.exception) == str(notebook.value)
    assert not (tmp_path / "nope").exists()


def test_resuming_a_run_that_is_not_there_leaves_no_runs_folder_behind(tmp_path: Path) -> None:
    # a mistyped --runs-dir: the folders made to lock the run are removed with it
    with pytest.raises(BenchNbError, match="there is no run 'nope' in"):
        run_benchmark(run_id="nope", runs_dir=tmp_path / "typo" / "runs")
    assert list(tmp_path.iterdir()) == []
