"""One writer per run directory: the run's lock (``<run_dir>/.lock``, ``runformat.lock``) for as long as a
process writes it. ``lock_run`` takes it or refuses at once (``RunLockedError``) naming the holder's pid,
host and start time; a run killed with SIGKILL leaves no lock behind, and ``FileLock.stale`` says who held it.
``open_run`` is how a run starts: its directory made and locked, then the run read back once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from bench_nb.errors import BenchNbError, RunFormatError
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.journal import CHECKPOINT
from bench_nb.runformat.load import read_resumed
from bench_nb.runformat.lock import FileLock, take_lock
from bench_nb.runformat.spec import RunSpec

log = logging.getLogger(__name__)

LOCK = ".lock"


class RunLockedError(BenchNbError):
    """Another process is writing the run directory."""

    def __init__(self, run_dir: Path, holder: dict[str, Any]) -> None:
        self.run_dir = run_dir
        self.holder = holder
        who = f"process {holder.get('pid', '?')}"
        if holder.get("host"):
            who += f" on {holder['host']}"
        super().__init__(
            f"{run_dir} is being written by {who}, started {holder.get('startedAt', 'at an unknown time')} "
            f"({holder.get('command', 'bench-nb')}); one process writes a run at a time: wait for it to "
            "finish, or stop it and run again to resume"
        )


def lock_run(run_dir: str | os.PathLike[str], command: str = "bench-nb run") -> FileLock:
    """Take the run directory's lock, or raise ``RunLockedError`` at once if a live process holds it; then
    delete the temporary files a killed writer left (no live writer owns them now), whatever it was doing
    (a run, rejudge, reanswer, clean).

    Args:
        run_dir: an existing run directory.
        command: what the holder is doing, shown to a process that is refused.
    """
    run_dir = Path(run_dir)

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
    for folder in (run_dir, run_dir / "results"):
        for path in folder.glob("*.tmp"):
            path.unlink(missing_ok=True)
    return lock


@contextlib.contextmanager
def open_run(run_dir: Path) -> Iterator[tuple[Checkpoint, RunSpec] | None]:
    """The run directory made and locked (``lock_run``) for the block, and the run read back once under the
    lock: its checkpoint with its journal replayed and its settings (``runformat.load.read_resumed``), ``None``
    for a new run. A directory made here is removed again if the block fails before the run's checkpoint is
    written (and the folders made above it, left empty)."""
    made = [p for p in (run_dir, *run_dir.parents) if not p.exists()]  # the run's folder and those above it
    run_dir.mkdir(parents=True, exist_ok=True)
    with lock_run(run_dir):
        (run_dir / "results").mkdir(exist_ok=True)
        try:
            yield read_resumed(run_dir)
        except BaseException:
            if made and not (run_dir / CHECKPOINT).exists():  # leave no empty run directory behind
                shutil.rmtree(run_dir, ignore_errors=True)
                for folder in made[1:]:  # nor the folders made for it, if nothing else is in them now
                    with contextlib.suppress(OSError):
                        folder.rmdir()
            raise
