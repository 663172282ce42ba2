"""One writer per run directory: an exclusive ``flock`` on ``<run_dir>/.lock`` for as long as a process writes it.

``lock_run`` takes the lock or refuses at once (``RunLockedError``) naming the holder's pid, host and start
time, which the holder writes into the lock file. The kernel releases a ``flock`` when its process dies, so a
run killed with SIGKILL leaves no lock behind: the next process takes it over, and ``RunLock.stale`` says who
held it (the file still names the dead holder; a clean release empties it). The file itself is never deleted:
a process that opened it just before a deletion would lock a file nobody else sees.

A ``flock`` is shared between processes of one machine (and over NFS only where the server supports it);
two machines writing one run directory on a network disk are not guarded.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from bench_nb.errors import BenchNbError, RunFormatError

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


@dataclass
class RunLock:
    """A held run lock; ``release`` (or leaving the ``with`` block) gives it up.

    Attributes:
        path: the lock file.
        stale: what the lock file said when it was taken over from a process that died holding it
            (its ``pid``, ``host``, ``startedAt``, ``command``), else None.
    """

    path: Path
    fd: int
    stale: dict[str, Any] | None = None

    def release(self) -> None:
        """Give the lock up, leaving its file empty for the next holder; a second call does nothing."""
        if self.fd < 0:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)  # a clean release: the next holder finds nothing stale
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = -1

    def __enter__(self) -> RunLock:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        data = os.pread(fd, 4096, 0)
        holder = json.loads(data) if data.strip() else {}
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def lock_run(run_dir: str | os.PathLike[str], command: str = "bench-nb run") -> RunLock:
    """Take the run directory's lock, or raise ``RunLockedError`` at once if a live process holds it.

    Args:
        run_dir: an existing run directory.
        command: what the holder is doing, shown to a process that is refused.
    """
    run_dir = Path(run_dir)
    path = run_dir / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise RunFormatError(run_dir, f"cannot open the run's lock file {LOCK}: {err.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_holder(fd)
        for _ in range(50):  # the holder writes its name right after taking the lock
            if holder:
                break
            time.sleep(0.02)
            holder = _read_holder(fd)
        os.close(fd)
        raise RunLockedError(run_dir, holder) from None
    except BaseException:
        os.close(fd)
        raise
    stale = _read_holder(fd) or None
    me = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "startedAt": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "command": command,
    }
    data = json.dumps(me).encode("utf-8")
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
    return RunLock(path, fd, stale)


def remove_temporary_files(run_dir: str | os.PathLike[str]) -> list[Path]:
    """Delete the temporary files a killed writer left (``*.tmp`` in the run directory and ``results/``).

    Only call it holding the run's lock: then no live writer owns any of them. Returns what was deleted.
    """
    run_dir = Path(run_dir)
    removed = []
    for folder in (run_dir, run_dir / "results"):
        for path in folder.glob("*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(path)
    return removed
