"""One writer per run directory: the run's lock (``<run_dir>/.lock``, ``runformat.lock``) for as long as a
process writes it. ``lock_run`` takes it or refuses at once (``RunLockedError``) naming the holder's pid,
host and start time; a run killed with SIGKILL leaves no lock behind, and ``FileLock.stale`` says who held it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

from bench_nb.errors import BenchNbError, RunFormatError
from bench_nb.runformat.lock import FileLock, take_lock

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
    """Take the run directory's lock, or raise ``RunLockedError`` at once if a live process holds it.

    Args:
        run_dir: an existing run directory.
        command: what the holder is doing, shown to a process that is refused.
    """
    run_dir = Path(run_dir)

    def refuse(holder: dict[str, Any]) -> NoReturn:
        raise RunLockedError(run_dir, holder)

    try:
        return take_lock(run_dir / LOCK, command, refuse)
    except OSError as err:
        raise RunFormatError(run_dir, f"cannot open the run's lock file {LOCK}: {err.strerror}") from None


def remove_temporary_files(run_dir: str | os.PathLike[str]) -> None:
    """Delete the temporary files a killed writer left (``*.tmp`` in the run directory and ``results/``).

    Only call it holding the run's lock: then no live writer owns any of them.
    """
    run_dir = Path(run_dir)
    for folder in (run_dir, run_dir / "results"):
        for path in folder.glob("*.tmp"):
            path.unlink(missing_ok=True)
