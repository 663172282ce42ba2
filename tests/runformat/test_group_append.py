"""``GroupAppender``: many threads appending to one JSON-lines file (the runner's evaluate workers and
``judgments.jsonl``), one write and one fsync for the lines that wait together, under ``append_lines``'
guarantees: every line whole, a thread's lines all written or none, and none lost that ``append`` returned for.

The kill test is a real process: threads append and report each line written on stdout as soon as ``append``
returns; the test kills the process with SIGKILL mid-stream and finds every reported line in the file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from bench_nb.runformat.jsonl import GroupAppender, append_lines, read_json_lines

SRC = Path(__file__).resolve().parents[2] / "src"


def _lines(thread: int, n: int) -> list[str]:
    return [json.dumps({"t": thread, "i": i, "text": "é" * (i % 7)}) + "\n" for i in range(n)]


def _records(path: Path) -> list[dict[str, object]]:
    records, problems = read_json_lines(path, lambda value: value)
    assert problems == []
    return records


def _whole_lines(path: Path) -> list[dict[str, object]]:
    """The file's records but a torn last line (a write the kill cut short, never reported written)."""
    data = path.read_bytes()
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


def test_every_threads_lines_written_whole_and_in_its_order(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    appender = GroupAppender(path)
    threads, calls = 12, 40

    def work(t: int) -> None:
        for i in range(calls):
            appender.append([_lines(t, 3)[i % 3], json.dumps({"t": t, "call": i}) + "\n"])

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    records = _records(path)
    assert len(records) == threads * calls * 2
    for t in range(threads):
        mine = [r for r in records if r["t"] == t]
        # one call's two lines stay together, and the calls keep the thread's order
        assert [r["call"] for r in mine[1::2]] == list(range(calls))
        assert [r.get("i") for r in mine[0::2]] == [i % 3 for i in range(calls)]


def test_a_failed_write_is_raised_in_every_waiting_thread_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "missing-dir" / "judgments.jsonl"
    appender = GroupAppender(path)
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def work() -> None:
        start.wait()
        try:
            appender.append(['{"a": 1}\n'])
        except OSError as err:
            errors.append(err)

    pool = [threading.Thread(target=work) for _ in range(6)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert len(errors) == 6
    assert all(str(path) in str(err) for err in errors)
    assert len({id(err) for err in errors}) == 6  # each thread its own exception object
    # the appender still works once the file can be written
    path.parent.mkdir()
    appender.append(['{"a": 2}\n'])
    assert _records(path) == [{"a": 2}]


def test_a_line_that_cannot_be_encoded_fails_its_own_call_only(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    appender = GroupAppender(path)
    with pytest.raises(UnicodeEncodeError):
        appender.append(['{"a": "\ud800"}\n'])
    appender.append(['{"a": 1}\n'])
    append_lines(path, ['{"a": 2}\n'])  # the file stays a plain JSON-lines file
    assert _records(path) == [{"a": 1}, {"a": 2}]


CHILD = """
import json, sys, threading
sys.path.insert(0, {src!r})
from pathlib import Path
from bench_nb.runformat.jsonl import GroupAppender

appender = GroupAppender(Path(sys.argv[1]))
out = threading.Lock()

def work(t):
    for i in range(100000):
        appender.append([json.dumps({{"t": t, "i": i, "pad": "x" * (i % 200)}}) + "\\n"])
        with out:
            sys.stdout.write(f"{{t}} {{i}}\\n")
            sys.stdout.flush()

for t in range(8):
    threading.Thread(target=work, args=(t,), daemon=True).start()
threading.Event().wait()
"""


@pytest.mark.parametrize("reported", [5, 300, 2000])
def test_sigkill_loses_no_line_an_append_returned_for(tmp_path: Path, reported: int) -> None:
    path = tmp_path / "judgments.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD.format(src=str(SRC))), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    done: set[tuple[int, int]] = set()
    try:
        while len(done) < reported:
            line = proc.stdout.readline()
            assert line, proc.stderr.read().decode() if proc.stderr else "child ended"
            t, i = line.split()
            done.add((int(t), int(i)))
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        rest, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err.decode()
    # what the child reported after the test stopped reading counts too
    done |= {(int(t), int(i)) for t, i in (x.split() for x in rest.decode().splitlines() if x.strip())}
    on_disk = [(r["t"], r["i"]) for r in _whole_lines(path)]
    assert len(on_disk) == len(set(on_disk))  # no line twice
    assert done <= set(on_disk), sorted(done - set(on_disk))[:5]
    # each thread's lines are on disk in order, without a gap
    for t in {t for t, _ in on_disk}:
        mine = [i for tt, i in on_disk if tt == t]
        assert mine == list(range(len(mine)))
