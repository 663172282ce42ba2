"""One writer at a time: an exclusive ``flock`` on a lock file, held for as long as a process writes. The one
lock implementation of bench_nb: a run directory's (``<run_dir>/.lock``, ``lock_run``) and a run
store's (``STORE/.lock``, ``frames.store.lock_store``).

The holder writes its pid, host, start time and command into the file right after taking the lock, so a
process that finds the lock held can name it. The kernel releases a ``flock`` when its process dies, so a
writer killed with SIGKILL leaves no lock behind: the next process takes it over, and ``FileLock.stale`` says
who held it (a clean release empties the file). A forked child closes its copy of a held lock's descriptor at
once (``os.register_at_fork``: a ``flock`` is the open file's, which a fork shares), so a killed holder's
children do not keep its lock. A run directory's file is never deleted (a process that
opened it just before a deletion would lock a file nobody else sees); a store's is, on release, and a process
that waited on the removed file takes the lock again on the new one.

A ``flock`` is shared between processes of one machine (and over NFS only where the server supports it);
two machines writing one directory on a network disk are not guarded. ``filelock`` is not used: its lock
file holds its own record of the holder, and the guarantees above (the holder named at once, the stale
holder reported, a run's file never removed) are this module's, tested in tests/runner/test_run_lock.py and
tests/frames/test_store_lock_file.py.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from bench_nb.errors import RunFormatError, RunLockedError
from bench_nb.runformat.journal import CHECKPOINT

log = logging.getLogger(__name__)


@dataclass
class FileLock:
    """A held lock; ``release`` (or leaving the ``with`` block) gives it up.

    Attributes:
        path: the lock file.
        stale: what the file said when the lock was taken over from a process that died holding it, else None.
        remove: delete the file on release (a store keeps no ``.lock`` between writers).
    """

    path: Path
    fd: int
    stale: dict[str, Any] | None = None
    remove: bool = False

    def release(self) -> None:
        """Give the lock up, leaving its file empty (or removed); a second call does nothing."""
        if self.fd < 0:
            return
        _HELD.pop(self.fd, None)
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)  # a clean release: the next holder finds nothing stale
        if self.remove:
            with contextlib.suppress(OSError):
                if same_file(self.path, self.fd):
                    self.path.unlink()
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = -1

    def __enter__(self) -> FileLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_HELD: dict[int, FileLock] = {}  # the locks this process holds, by file descriptor


def _drop_in_child() -> None:
    """In a forked child: close its copies of the held locks' descriptors, without unlocking them.

    A ``flock`` belongs to the open file, which a fork shares: the lock lasts until every process holding a
    descriptor of it has closed it or died. A child (``runformat.forked``'s, which encodes half a report) kept
    the run's lock for as long as it lived after its parent was killed; it never writes as the lock's holder,
    so it drops its copy at once (``LOCK_UN`` would release the parent's lock, so only ``close``).
    """
    for lock in _HELD.values():
        with contextlib.suppress(OSError):
            os.close(lock.fd)
        lock.fd = -1  # its release does nothing in the child
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_in_child)


def read_holder(fd: int, *, wait: bool = True) -> dict[str, Any]:
    """Who the lock file names (``pid``, ``host``, ``startedAt``, ``command``), ``{}`` if nobody; with ``wait``,
    up to a second for a holder that has just taken the lock to write its name."""
    for _ in range(50 if wait else 1):
        with contextlib.suppress(OSError, ValueError):
            data = os.pread(fd, 4096, 0)
            holder = json.loads(data) if data.strip() else None
            if isinstance(holder, dict):
                return holder
        if wait:
            time.sleep(0.02)
    return {}


def take_lock(
    path: Path, command: str, on_held: Callable[[dict[str, Any]], None], *, remove: bool = False
) -> FileLock:
    """Lock ``path`` (created if absent) and write this process into it. When another process holds it,
    ``on_held(holder)`` is called: it raises to refuse, or returns to wait until the holder lets go.

    Raises:
        OSError: the file cannot be opened (the caller names it).
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            on_held(read_holder(fd))
            fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    stale = read_holder(fd, wait=False) or None
    me = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "startedAt": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "command": command,
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(me).encode("utf-8"), 0)
    lock = _HELD[fd] = FileLock(path, fd, stale, remove)
    return lock


def same_file(path: Path, fd: int) -> bool:
    """``path`` is still the file open as ``fd`` (not removed, nor replaced by a new one)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


LOCK = ".lock"

#: A run directory holds one of these (what ``load.read_run`` reads as a run: a report-only run is MemoryBench's
#: report.json alone, which ``rejudge`` grades into judgments.jsonl beside it).
RUN_FILES = (CHECKPOINT, "report.json")


def is_run_dir(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` is a run directory: it holds one of ``RUN_FILES`` (the one rule, which ``lock_run``
    enforces and ``load`` and the writers into a run read)."""
    return any((Path(folder) / name).is_file() for name in RUN_FILES)


def run_containing(
    path: str | os.PathLike[str], run_dir: str | os.PathLike[str] | None = None
) -> Path | None:
    """The run a file written to ``path`` lands in, whose lock the write holds: ``run_dir`` (the run the file
    is made of) when ``path`` is anywhere inside it, else the folder ``path`` is in when that is a run; None
    when neither is a run (``is_run_dir``).

    Only these two: every folder above ``path`` is not searched, since a stray report.json (``/tmp/report.json``)
    would make its folder a run holding all below it, locked and its temporary files deleted under another
    writer's feet.
    """
    out = Path(path)
    if run_dir is not None and is_run_dir(run_dir) and out.resolve().is_relative_to(Path(run_dir).resolve()):
        return Path(run_dir)
    return out.parent if is_run_dir(out.parent) else None


#: ``report.write_memorybench_report``'s (``bench-nb memorybench-report``) temporary files in a run, whatever its
#: output is called and wherever in the run it goes: the new report, and the part its forked child encodes.
REPORT_TEMP = "report.json.tmp"
REPORT_PART_TEMP = "report.json.part.tmp"
#: ``receipts.Receipt.write``'s temporary file in a run (``bench-nb receipt -o`` anywhere in the run).
RECEIPT_TEMP = "receipt.json.tmp"

#: The temporary files bench-nb's own writers make in a run directory (glob patterns relative to it): what a writer
#: killed mid-write leaves, and all that ``lock_run`` deletes (a user's own ``notes.tmp`` stays). A writer that
#: makes another name adds it here, and to docs/runner.md ("What a kill can lose").
RUN_TEMP_FILES = (
    ".checkpoint.json.*.tmp",  # journal.write_atomic: checkpoint.json (the runner's compaction, rejudge)
    ".report.json.*.tmp",  # journal.write_atomic: report.json at the end of a run (runner/report.py)
    "results/.*.json.*.tmp",  # journal.write_atomic: results/<questionId>.json (the search phase, a resume)
    REPORT_TEMP,  # bench-nb memorybench-report: the new report (-o anywhere in the run)
    REPORT_PART_TEMP,  # ... and the part its forked child encodes (runformat/forked.py)
    "checkpoint.json.tmp",  # an audit set's checkpoint, written so before 5002f9a (runs of earlier releases)
    RECEIPT_TEMP,  # bench-nb receipt: a receipt written anywhere in the run (receipts.Receipt.write)
    ".receipt.json.*.tmp",  # ... written by earlier versions as write_atomic names it (RUN/receipt.json only)
)


def nearest_run(name: str, folder: Path) -> str:
    """`` (did you mean 'x'?)`` for the run directory in ``folder`` nearest ``name`` (a typo in a run's path
    or id), or ``""``."""
    from bench_nb.registry import did_you_mean

    try:
        runs = [p.name for p in folder.iterdir() if is_run_dir(p)]
    except OSError:  # no such folder either
        return ""
    return did_you_mean(name, runs)


def lock_run(
    run_dir: str | os.PathLike[str], command: str = "bench-nb run", *, new: bool = False
) -> FileLock:
    """Take the run directory's lock, or raise ``RunLockedError`` at once if a live process holds it; then
    delete the temporary files a killed writer left (``RUN_TEMP_FILES``: no live writer owns them now),
    whatever it was doing (a run, rejudge, reanswer, clean, memorybench-report).

    Args:
        run_dir: an existing run directory (its ``checkpoint.json``, or a report-only run's ``report.json``, in it).
        command: what the holder is doing, shown to a process that is refused.
        new: the directory need hold no run yet (``runner.lock.open_run``, which starts or resumes one).

    Raises:
        RunFormatError: ``run_dir`` is no run (neither file of ``RUN_FILES``; and not ``new``), refused before anything in it is touched (no
            ``.lock`` made there, nothing deleted); or it cannot hold the lock file.
        RunLockedError: another process holds the lock.
    """
    run_dir = Path(run_dir)
    if not new and not is_run_dir(run_dir):
        what = (
            "not a run directory"
            if run_dir.is_dir()
            else f"no such run directory{nearest_run(run_dir.name, run_dir.parent)}"
        )
        raise RunFormatError(run_dir, f"{what}: no {' and no '.join(RUN_FILES)}")

    def refuse(holder: dict[str, Any]) -> NoReturn:
        raise RunLockedError(run_dir, holder)

    try:
        lock = take_lock(run_dir / LOCK, command, refuse)
    except OSError as err:
        raise RunFormatError(run_dir, f"cannot open the run's lock file {LOCK}: {err.strerror}") from None
    if lock.stale:
        log.warning(
            "%s: took over the lock of process %s (started %s), which is gone",
            run_dir,
            lock.stale.get("pid"),
            lock.stale.get("startedAt"),
        )
    try:
        for pattern in RUN_TEMP_FILES:
            for path in run_dir.glob(pattern):
                path.unlink(missing_ok=True)
    except BaseException:  # a left-over that cannot be deleted: the run is not left locked by this process
        lock.release()
        raise
    return lock
