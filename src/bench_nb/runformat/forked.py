"""Writing one part of a large file in a forked child process, on a second CPU.

``write_memorybench_report`` encodes the second half of a report's evaluations in a child while it encodes
the first half itself (encoding is most of a large report's time, and msgspec holds the interpreter lock
while it works, so threads would not help). A fork shares the decoded checkpoint copy-on-write: nothing is
pickled or read twice. The child writes its part to a file of its own, which the parent copies in after its
own part (``os.copy_file_range``: the kernel copies, no pass through Python).

A fork is used only where it is safe and worth it: a POSIX system, more than one CPU for this process and
one of them idle (``cpu_to_spare``), and no other thread in it (the command line; not a Jupyter kernel, whose threads a fork would copy in the middle of
whatever they hold). The child exits with ``os._exit`` (no atexit handlers, no flush of the parent's
buffers); if it fails for any reason, the parent writes that part itself, so a failure costs time, never
output. It dies with its parent (on Linux the kernel kills it, ``PR_SET_PDEATHSIG``; elsewhere it ends when its
part is written), and holds none of its parent's locks
(``runformat.lock`` closes their descriptors in a forked child): a killed ``bench-nb memorybench-report``
leaves the run free at once, its part file for the next writer to delete (``lock.RUN_TEMP_FILES``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def cpus() -> int:
    """CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cpu_to_spare() -> bool:
    """Whether a second CPU is likely idle: the 1-minute load average (this process included) below the CPUs
    this process may use, less a half. On a busy machine a forked child only competes with other jobs for a
    CPU, and costs CPU time of its own (its copy-on-write page faults, two processes sharing caches and memory
    bandwidth: about 30% more CPU time in all on a 2-CPU machine at load 12, for little less wall time)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this system: assume the CPUs are free
        return True
    return load < cpus() - 0.5


def fork_is_safe() -> bool:
    """Whether a child forked now could run Python safely and in parallel: POSIX, more than one CPU, one
    thread."""
    return hasattr(os, "fork") and cpus() > 1 and threading.active_count() == 1


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with(parent: int) -> None:
    """In a forked child: have the kernel kill it when ``parent`` dies (Linux), and leave at once if it already
    has (the child was re-parented before the request took hold)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes  # here: in the child only, the parent never pays for it

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


class ForkedWrite:
    """``write(file)`` run in a forked child on ``path``; ``join`` waits for it.

    Use as a context manager: leaving it early (an error or an interrupt in the parent) ends the child and
    removes its file.
    """

    def __init__(self, path: Path, write: Callable[[BinaryIO], None]) -> None:
        self.path = path
        self.pid: int | None = None
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: write, then leave without running any of the parent's cleanup
            code = 1
            try:
                _die_with(parent)
                with open(path, "wb") as f:
                    write(f)
                code = 0
            except BaseException:  # the parent writes this part itself, and meets the error there
                pass
            finally:
                os._exit(code)
        self.pid = pid

    def join(self) -> bool:
        """Wait for the child; True when it wrote its part completely."""
        if self.pid is None:
            return False
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return os.waitstatus_to_exitcode(status) == 0

    def copy_into(self, f: BinaryIO) -> None:
        """Append the child's file to ``f`` (flushed first): in the kernel where the system can
        (``os.copy_file_range``), else through a buffer."""
        f.flush()
        with open(self.path, "rb") as src:
            size = os.fstat(src.fileno()).st_size
            done = 0
            try:
                while done < size:
                    n = os.copy_file_range(src.fileno(), f.fileno(), size - done)
                    if n == 0:
                        break
                    done += n
            except (AttributeError, OSError):  # not on this system, or not between these files
                pass
            src.seek(done)
            f.seek(0, os.SEEK_END)
            shutil.copyfileobj(src, f)

    def __enter__(self) -> ForkedWrite:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pid is not None:  # left before join: end the child
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self.pid = None
        self.path.unlink(missing_ok=True)
