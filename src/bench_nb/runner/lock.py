"""``open_run``: how a run starts: its directory made and locked (``runformat.lock.lock_run``), then the run
read back once.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.journal import CHECKPOINT
from bench_nb.runformat.load import read_resumed
from bench_nb.runformat.lock import lock_run
from bench_nb.runformat.spec import RunSpec


@contextlib.contextmanager
def open_run(run_dir: Path) -> Iterator[tuple[Checkpoint, RunSpec] | None]:
    """The run directory made and locked (``lock_run``) for the block, and the run read back once under the
    lock: its checkpoint with its journal replayed and its settings (``runformat.load.read_resumed``), ``None``
    for a new run. A directory made here is removed again if the block fails before the run's checkpoint is
    written (and the folders made above it, left empty)."""
    made = [p for p in (run_dir, *run_dir.parents) if not p.exists()]  # the run's folder and those above it
    run_dir.mkdir(parents=True, exist_ok=True)
    with lock_run(run_dir, new=True):
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
