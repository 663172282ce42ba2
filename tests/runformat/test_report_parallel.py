"""``write_memorybench_report`` with the second half of the evaluations encoded in a forked child
(``runformat.forked``): the same bytes as one process, and a child that fails or a parent that is
interrupted loses nothing and leaves nothing behind."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench_nb.runformat import report as report_module
from bench_nb.runformat.report import write_memorybench_report

RUN = ("data", "runs", "fx-compare-supermemory")
DATASET = ("data", "benchmarks", "locomo", "locomo10.json")

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")


@pytest.fixture
def big_run(mb_example: Path, tmp_path: Path) -> Path:
    """The example run's questions copied under new ids until there are three batches of evaluations."""
    run = tmp_path / "run"
    shutil.copytree(mb_example.joinpath(*RUN), run)
    data = json.loads((run / "checkpoint.json").read_text(encoding="utf-8"))
    originals = list(data["questions"].values())
    questions = {}
    for i in range(700):
        q = json.loads(json.dumps(originals[i % len(originals)]))
        q["questionId"] = f"{q['questionId']}-copy{i}"
        questions[q["questionId"]] = q
    data["questions"] = questions
    data["targetQuestionIds"] = list(questions)
    (run / "checkpoint.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    return run


def _spy_on_writers(monkeypatch: pytest.MonkeyPatch, log: Path, fail_in_child: bool = False) -> int:
    """Record which process writes each part of the evaluations; optionally make the child's fail."""
    parent = os.getpid()
    real = report_module._write_items

    def spy(f, items, first):  # type: ignore[no-untyped-def]
        with open(log, "a") as out:
            out.write(f"{os.getpid()}\n")
        if fail_in_child and os.getpid() != parent:
            raise OSError("disk full (in the child)")
        real(f, items, first)

    monkeypatch.setattr(report_module, "_write_items", spy)
    return parent


def test_a_forked_report_is_byte_identical_to_one_written_in_one_process(
    big_run: Path, mb_example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = mb_example.joinpath(*DATASET)
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    write_memorybench_report(big_run, dataset, one, timestamp="t", parallel=False)
    log = tmp_path / "writers.log"
    parent = _spy_on_writers(monkeypatch, log)
    head = write_memorybench_report(big_run, dataset, two, timestamp="t", parallel=True)
    writers = log.read_text().split()
    assert len(writers) == 2 and str(parent) in writers and len(set(writers)) == 2  # the child wrote half
    assert two.read_bytes() == one.read_bytes()
    evaluations = json.loads(two.read_bytes())["evaluations"]
    assert (
        len(evaluations) == head["summary"]["totalQuestions"] > 2 * 256
    )  # three batches: the child wrote two
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("two")) == ["two.json"]


def test_a_child_that_fails_costs_time_not_output(
    big_run: Path, mb_example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = mb_example.joinpath(*DATASET)
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    write_memorybench_report(big_run, dataset, one, timestamp="t", parallel=False)
    log = tmp_path / "writers.log"
    parent = _spy_on_writers(monkeypatch, log, fail_in_child=True)
    write_memorybench_report(big_run, dataset, two, timestamp="t", parallel=True)
    writers = log.read_text().split()
    # the child tried and failed; the parent wrote its own half and then the child's
    assert writers.count(str(parent)) == 2 and len(writers) == 3
    assert two.read_bytes() == one.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("two")) == ["two.json"]


def test_an_interrupted_parent_ends_its_child_and_leaves_no_files(
    big_run: Path, mb_example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = os.getpid()
    real = report_module._write_items

    def interrupted(f, items, first):  # type: ignore[no-untyped-def]
        if os.getpid() == parent:
            raise KeyboardInterrupt
        real(f, items, first)

    children: list[int] = []

    class Recorded(report_module.ForkedWrite):  # type: ignore[misc,name-defined]
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            children.append(self.pid)

    monkeypatch.setattr(report_module, "_write_items", interrupted)
    monkeypatch.setattr(report_module, "ForkedWrite", Recorded)
    out = tmp_path / "out" / "report.json"
    with pytest.raises(KeyboardInterrupt):
        write_memorybench_report(big_run, mb_example.joinpath(*DATASET), out, parallel=True)
    assert len(children) == 1
    with pytest.raises(ChildProcessError):  # the child was ended and reaped: no zombie left
        os.waitpid(children[0], os.WNOHANG)
    assert list(out.parent.iterdir()) == []  # neither half's file, nor a report


_SLOW_CHILD = """
import os, sys, time
from bench_nb.runformat import report
parent, real = os.getpid(), report._write_items
def slow(f, items, first):  # the forked child says who it is, then takes its time
    if os.getpid() != parent:
        print(os.getpid(), flush=True)
        time.sleep(120)
    real(f, items, first)
report._write_items = slow
report.write_memorybench_report(sys.argv[1], sys.argv[2], sys.argv[1] + "/report.json", parallel=True)
"""


def _dead(pid: int) -> bool:
    """The process is gone, or a zombie nobody has reaped yet (it holds nothing)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def test_a_killed_parents_child_does_not_keep_the_runs_lock(big_run: Path, mb_example: Path) -> None:
    """``bench-nb memorybench-report`` into a run holds the run's lock and forks a child to encode half the
    evaluations; the ``flock`` is the open file's, which the fork shared, so a ``kill -9`` of the parent left
    the run locked for as long as the child lived. The child now drops its copy of the lock at once and dies
    with its parent (Linux: ``PR_SET_PDEATHSIG``)."""
    from bench_nb.errors import RunLockedError
    from bench_nb.runformat.lock import lock_run

    command = [sys.executable, "-c", _SLOW_CHILD, str(big_run), str(mb_example.joinpath(*DATASET))]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())  # the child is encoding: the parent holds the lock
        with pytest.raises(RunLockedError, match=rf"process {proc.pid} .*bench-nb memorybench-report"):
            lock_run(big_run, "test")
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15  # a bound far above the kernel's time to act, far below the child's
        taken = None
        while taken is None and time.monotonic() < deadline:
            try:
                taken = lock_run(big_run, "test")  # the next writer: free, once nothing holds the lock
            except RunLockedError:
                time.sleep(0.05)
        assert taken is not None, "the run stayed locked after its writer was killed"
        taken.release()
        if sys.platform.startswith("linux"):
            while not _dead(child) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _dead(child), "the forked child outlived its parent"
    finally:
        if child and not _dead(child):
            os.kill(child, signal.SIGKILL)  # the child this test made
        proc.kill()
        if proc.stdout:
            proc.stdout.close()
        proc.wait(timeout=30)


def test_small_reports_and_threaded_processes_are_written_in_one_process(
    big_run: Path, mb_example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "writers.log"
    parent = _spy_on_writers(monkeypatch, log)
    dataset = mb_example.joinpath(*DATASET)
    write_memorybench_report(big_run, dataset, tmp_path / "auto.json")  # 3 batches: below the threshold
    monkeypatch.setattr(report_module, "_PARALLEL_BATCHES", 2)
    monkeypatch.setattr(report_module, "fork_is_safe", lambda: False)  # as in a Jupyter kernel
    write_memorybench_report(big_run, dataset, tmp_path / "threaded.json")
    assert log.read_text().split() == [str(parent)] * 2


def test_the_childs_part_is_copied_through_a_buffer_where_the_kernel_cannot_copy_it(
    big_run: Path, mb_example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = mb_example.joinpath(*DATASET)
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    write_memorybench_report(big_run, dataset, one, timestamp="t", parallel=False)

    def unsupported(*args: object) -> int:
        raise OSError(18, "Invalid cross-device link")  # as between two file systems

    monkeypatch.setattr(os, "copy_file_range", unsupported, raising=False)
    write_memorybench_report(big_run, dataset, two, timestamp="t", parallel=True)
    assert two.read_bytes() == one.read_bytes()


@pytest.mark.parametrize(("load", "writers"), [(0.0, 2), (64.0, 1)])
def test_the_report_forks_only_with_a_cpu_to_spare(
    big_run: Path,
    mb_example: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    load: float,
    writers: int,
) -> None:
    # On a busy machine (load average at or above the CPUs less a half) the child would only compete with
    # other jobs and cost CPU time of its own: the report is written in one process, the same bytes.
    from bench_nb.runformat import forked

    log = tmp_path / "writers.log"
    parent = _spy_on_writers(monkeypatch, log)
    monkeypatch.setattr(report_module, "_PARALLEL_BATCHES", 2)
    monkeypatch.setattr(report_module, "fork_is_safe", lambda: True)
    monkeypatch.setattr(forked, "cpus", lambda: 2)
    monkeypatch.setattr(forked.os, "getloadavg", lambda: (load, load, load))
    write_memorybench_report(big_run, mb_example.joinpath(*DATASET), tmp_path / "auto.json", timestamp="t")
    pids = log.read_text().split()
    assert len(pids) == writers and str(parent) in pids
    write_memorybench_report(
        big_run, mb_example.joinpath(*DATASET), tmp_path / "one.json", timestamp="t", parallel=False
    )
    assert (tmp_path / "auto.json").read_bytes() == (tmp_path / "one.json").read_bytes()
