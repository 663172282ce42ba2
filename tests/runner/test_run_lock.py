"""One writer per run directory, with real processes: a second ``bench-nb run`` on a run being written is
refused at once naming the holder; a lock left by a SIGKILL'd process is taken over, and the temporary files
the killed writer left are deleted."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from bench_nb.errors import RunLockedError
from bench_nb.runformat.lock import LOCK, lock_run

HERE = Path(__file__).resolve().parent


def _env(log: Path, delay: float, gate: Path | None = None) -> dict[str, str]:
    return {
        **({"BENCH_NB_TEST_GATE": str(gate)} if gate else {}),
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "BENCH_NB_TEST_CALL_LOG": str(log),
        "BENCH_NB_TEST_DELAY_S": str(delay),
        "BENCH_NB_QUIET": "1",
    }


def _command(runs: Path) -> list[str]:
    return [
        *(sys.executable, "-m", "bench_nb", "run", "-p", "runner_fakes:LoggedProvider", "-b", "sample"),
        *("-m", "runner_fakes:LoggedAnswerer", "-j", "runner_fakes:LoggedJudge,f1", "-r", "locked"),
        *("--runs-dir", str(runs), "--concurrency", "2"),
    ]


def _wait_for(predicate: object, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while not predicate():  # type: ignore[operator]
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()[1].decode()[-2000:]}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.is_file() else 0


@pytest.mark.slow
def test_a_second_run_of_the_same_run_directory_is_refused_naming_the_holder(tmp_path: Path) -> None:
    runs, log, gate = tmp_path / "runs", tmp_path / "calls.jsonl", tmp_path / "gate"
    lock = runs / "locked" / LOCK
    # The first run's searches wait at the gate until the second run has been refused: on a busy machine the
    # second interpreter can take longer to start than the whole first run would.
    first = subprocess.Popen(
        _command(runs), env=_env(log, 0.1, gate), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    _wait_for(lambda: _calls(log) >= 3, first, "the first run started working")
    holder = json.loads(lock.read_text())  # written right after the lock was taken, before any call
    second = subprocess.run(_command(runs), env=_env(log, 0), capture_output=True, text=True, timeout=60)
    assert first.poll() is None, "the first run ended before the second one was refused"
    gate.touch()
    assert second.returncode == 1, f"the second run was not refused: {second.stdout}"
    assert f"process {first.pid}" in second.stderr and holder["startedAt"] in second.stderr, second.stderr
    assert holder["pid"] == first.pid
    _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()[-2000:]
    # Only the first process worked on the run: every question judged once by each judge, in one process.
    assert {json.loads(line)["pid"] for line in log.read_text().splitlines()} == {first.pid}
    verdicts = Counter(
        (v["questionId"], v["judge"])
        for v in map(json.loads, (runs / "locked" / "judgments.jsonl").read_text().splitlines())
    )
    assert len(verdicts) == 100 and set(verdicts.values()) == {1}
    report = json.loads((runs / "locked" / "report.json").read_text())
    assert report["summary"]["totalQuestions"] == 50
    assert lock.read_text() == ""  # released cleanly: nothing stale for the next process


@pytest.mark.slow
def test_a_lock_left_by_a_killed_run_is_taken_over_and_its_temporary_files_removed(tmp_path: Path) -> None:
    runs, log = tmp_path / "runs", tmp_path / "calls.jsonl"
    run_dir = runs / "locked"
    # The run kills itself at its 20th call should this process be too slow to kill it first (a busy machine).
    first = subprocess.Popen(
        _command(runs),
        env={**_env(log, 0.02), "BENCH_NB_TEST_DIE_AFTER": "20"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _wait_for(lambda: _calls(log) >= 5, first, "the first run started working")
    os.kill(first.pid, signal.SIGKILL)  # a zombie is still a process: no error if it killed itself
    first.communicate(timeout=60)
    assert first.returncode == -signal.SIGKILL
    assert json.loads((run_dir / LOCK).read_text())["pid"] == first.pid  # the dead holder's name is left
    # What a writer killed mid-write leaves (write_atomic's and rejudge's temporary names).
    left = [
        run_dir / f".checkpoint.json.{first.pid}.140.tmp",
        run_dir / f".report.json.{first.pid}.140.tmp",
        run_dir / "checkpoint.json.tmp",
        run_dir / "results" / f".conv-1-q1.json.{first.pid}.141.tmp",
    ]
    for path in left:
        path.write_bytes(b"{partial")
    second = subprocess.run(_command(runs), env=_env(log, 0), capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"took over the lock of process {first.pid}" in second.stderr
    assert not [p for p in left if p.exists()]
    assert not list(run_dir.rglob("*.tmp"))
    assert json.loads((run_dir / "report.json").read_text())["summary"]["totalQuestions"] == 50


def test_the_lock_refuses_a_second_holder_in_another_process(tmp_path: Path) -> None:
    (tmp_path / "checkpoint.json").write_text("{}")  # a run (lock_run refuses a folder that is none)
    held = lock_run(tmp_path, command="test")
    code = (
        "import sys; from bench_nb.errors import RunLockedError; from bench_nb.runformat.lock import lock_run\n"
        "try:\n    lock_run(sys.argv[1]).release()\nexcept RunLockedError as e:\n    print(e.holder['pid'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == str(os.getpid())
    held.release()
    again = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert again.stdout.strip() == ""  # free once released
    with lock_run(tmp_path) as lock:
        assert lock.stale is None  # a clean release leaves nothing stale
        with pytest.raises(RunLockedError, match=f"process {os.getpid()}"):
            lock_run(tmp_path)  # a second open file in the same process is refused too


def test_rejudge_is_refused_while_the_run_is_written(tmp_path: Path) -> None:
    from bench_nb.runner import run_benchmark
    from bench_nb.runner.rejudge import rejudge

    result = run_benchmark("sqlite", "sample", limit=3, runs_dir=tmp_path, run_id="r", progress=False)
    before = (result.run_dir / "judgments.jsonl").read_bytes()
    with (
        lock_run(result.run_dir, command="bench-nb run"),
        pytest.raises(RunLockedError, match="bench-nb run"),
    ):
        rejudge(result.run_dir, ["f1"], force=True)
    assert (result.run_dir / "judgments.jsonl").read_bytes() == before
    assert rejudge(result.run_dir, ["f1"], force=True).graded == {"f1": 3}  # free again


def test_clean_is_refused_while_the_run_is_written(tmp_path: Path) -> None:
    from bench_nb.providers.sqlite import SqliteProvider
    from bench_nb.runner import run_benchmark
    from bench_nb.runner.maintenance import clean_run

    result = run_benchmark("sqlite", "sample", limit=3, runs_dir=tmp_path, run_id="r", progress=False)
    tag = json.loads((result.run_dir / "checkpoint.json").read_text())["questions"]["conv-1-q1"][
        "containerTag"
    ]
    stored = SqliteProvider(result.run_dir).store.count(tag)
    assert stored > 0
    with lock_run(result.run_dir), pytest.raises(RunLockedError):
        clean_run(result.run_dir)
    assert SqliteProvider(result.run_dir).store.count(tag) == stored
    assert clean_run(result.run_dir) == [tag]
    assert not SqliteProvider(result.run_dir).store.path(tag).is_file()


def test_a_run_directory_that_cannot_hold_a_lock_file_is_a_clear_error(tmp_path: Path) -> None:
    from bench_nb.errors import RunFormatError

    missing = tmp_path / "not-made"
    with pytest.raises(RunFormatError, match=r"cannot open the run's lock file \.lock"):
        lock_run(missing, new=True)  # a new run's (open_run makes the folder first)
    with pytest.raises(RunFormatError, match=r"not-made: no such run directory: no checkpoint\.json"):
        lock_run(missing)


def test_a_run_and_a_store_are_locked_by_the_one_implementation(tmp_path: Path) -> None:
    """lock_run and frames.store both hold runformat.lock's FileLock: the same holder record, the run's file
    kept and emptied on release, the store's removed."""
    from bench_nb.frames.store import lock_store
    from bench_nb.runformat.lock import FileLock

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with lock_run(run_dir, new=True) as run_lock, lock_store(tmp_path / "store") as store_lock:
        assert isinstance(run_lock, FileLock) and isinstance(store_lock, FileLock)
        run_holder = json.loads((run_dir / LOCK).read_text())
        store_holder = json.loads((tmp_path / "store" / ".lock").read_text())
        assert set(run_holder) == set(store_holder) == {"pid", "host", "startedAt", "command"}
        assert run_holder["pid"] == store_holder["pid"] == os.getpid()
        assert (run_holder["command"], store_holder["command"]) == ("bench-nb run", "bench-nb export")
    assert (run_dir / LOCK).read_text() == "" and not (tmp_path / "store" / ".lock").exists()


@pytest.mark.parametrize("writer", ["rejudge", "clean"])
def test_a_killed_rejudges_temporary_files_are_deleted_by_the_next_writer(
    tmp_path: Path, writer: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Every writer that takes the run's lock (not only a resumed run) clears what a killed one left."""
    from bench_nb.runner import run_benchmark
    from bench_nb.runner.maintenance import clean_run
    from bench_nb.runner.rejudge import rejudge

    run_dir = run_benchmark(
        "sqlite", "sample", limit=3, runs_dir=tmp_path, run_id="r", progress=False
    ).run_dir
    code = "import sys, runner_fakes as f, bench_nb.runner.rejudge as r; r.rejudge(sys.argv[1], [f.LoggedJudge()], force=True)"
    command = [sys.executable, "-c", code, str(run_dir)]
    env = {**_env(tmp_path / "calls.jsonl", 0), "BENCH_NB_TEST_DIE_AFTER": "2"}  # SIGKILLs itself mid-way
    killed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    pid = json.loads((run_dir / LOCK).read_text())["pid"]
    left = [
        run_dir / f".checkpoint.json.{pid}.140.tmp",  # a primary switch killed mid-write
        run_dir / "results" / f".conv-1-q1.json.{pid}.141.tmp",
    ]
    for path in left:
        path.write_bytes(b"{partial")
    if writer == "rejudge":
        assert rejudge(run_dir, ["f1"], primary="f1").primary_changed
    else:
        assert clean_run(run_dir)
    assert not list(run_dir.rglob("*.tmp"))
    assert f"took over the lock of process {pid}" in caplog.text


@pytest.mark.parametrize("writer", ["rejudge", "reanswer"])
def test_a_rejudge_or_reanswer_of_a_folder_that_is_no_run_deleted_its_tmp_files(
    not_a_run: Path, writer: str
) -> None:
    """A folder without a checkpoint is no run: it is refused naming it, and left as it was. Both took the
    run's lock before reading it, so the lock deleted every *.tmp in the folder and its results/ (a writer
    killed there left them, it took) and left a .lock behind first."""
    from bench_nb.errors import RunFormatError
    from bench_nb.runner.reanswer import reanswer
    from bench_nb.runner.rejudge import rejudge

    folder = not_a_run  # left as it was: the fixture checks it after the test
    with pytest.raises(RunFormatError, match=r"downloads: not a run directory"):
        if writer == "rejudge":
            rejudge(folder, ["f1"])
        else:
            reanswer(folder, answerer="extractive")


@pytest.mark.parametrize("writer", ["rejudge", "resume", "reanswer", "clean"])
def test_a_users_tmp_files_in_a_run_survive_a_writer_taking_its_lock(tmp_path: Path, writer: str) -> None:
    """``lock_run`` deletes only the temporary names bench-nb's writers make (``RUN_TEMP_FILES``: what a killed
    writer left), not every ``*.tmp``: a user's own files in the run folder and its results/ stay."""
    from bench_nb.runner import run_benchmark
    from bench_nb.runner.maintenance import clean_run
    from bench_nb.runner.reanswer import reanswer
    from bench_nb.runner.rejudge import rejudge

    run_dir = run_benchmark(
        "sqlite", "sample", limit=3, runs_dir=tmp_path, run_id="r", progress=False
    ).run_dir
    mine = [run_dir / "notes.tmp", run_dir / ".draft.tmp", run_dir / "results" / "notes.tmp"]
    left = [  # one of each name a killed writer leaves (runformat.lock.RUN_TEMP_FILES; process 4242, thread 140)
        *(run_dir / f".{name}.4242.140.tmp" for name in ("checkpoint.json", "report.json")),  # write_atomic's
        run_dir / "results" / ".conv-1-q1.json.4242.140.tmp",
        *(run_dir / name for name in ("report.json.tmp", "report.json.part.tmp", "checkpoint.json.tmp")),
    ]
    for path in [*mine, *left]:
        path.write_text("mine" if path in mine else "{partial")
    if writer == "rejudge":
        assert rejudge(run_dir, ["f1"], force=True).graded == {"f1": 3}
    elif writer == "resume":
        run_benchmark("sqlite", "sample", limit=3, runs_dir=tmp_path, run_id="r", progress=False)
    elif writer == "reanswer":
        reanswer(run_dir)
    else:
        assert clean_run(run_dir)
    assert [p.read_text() for p in mine] == ["mine"] * len(mine)
    assert [p.name for p in left if p.exists()] == []  # what a killed writer left is still deleted


_FORKS = """
import os, sys, time
from bench_nb.runformat.lock import lock_run
lock = lock_run(sys.argv[1], "bench-nb test")
child = os.fork()
if child == 0:  # a child that outlives its parent (not runformat.forked's, which dies with it)
    time.sleep(120)
    os._exit(0)
print(child, flush=True)
time.sleep(120)
"""


def test_a_forked_child_of_the_holder_does_not_keep_the_lock_after_the_holder_dies(tmp_path: Path) -> None:
    """A ``flock`` is the open file's, which a fork shares: a child of the holder kept the run locked after the
    holder was killed, for as long as it lived. A forked child now closes its copy at once
    (``os.register_at_fork`` in ``runformat.lock``), without unlocking the parent's."""
    (tmp_path / "checkpoint.json").write_text("{}")
    proc = subprocess.Popen([sys.executable, "-c", _FORKS, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())
        with pytest.raises(RunLockedError, match=rf"process {proc.pid} "):
            lock_run(tmp_path)  # the child's closing its copy left its parent's lock held
        proc.kill()
        proc.wait(timeout=30)
        deadline, taken = time.monotonic() + 15, None
        while taken is None and time.monotonic() < deadline:
            try:
                taken = lock_run(tmp_path)
            except RunLockedError:
                time.sleep(0.05)
        assert taken is not None, "the holder's forked child kept the run locked"
        taken.release()
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
        if child:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)  # the child this test made


def test_a_left_over_that_cannot_be_deleted_does_not_leave_the_run_locked(tmp_path: Path) -> None:
    """``lock_run`` deletes a killed writer's temporary files once it holds the lock; when one cannot be
    deleted (here a folder by a temporary file's name), the error is raised and the lock given up: it stayed
    held by the process (a notebook kernel kept the run locked until it exited)."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "checkpoint.json").write_text("{}")
    stuck = run / ".checkpoint.json.4242.140.tmp"
    stuck.mkdir()
    with pytest.raises(OSError):
        lock_run(run, "bench-nb rejudge")
    stuck.rmdir()
    with lock_run(run, "bench-nb rejudge"):  # free again: not RunLockedError
        pass
