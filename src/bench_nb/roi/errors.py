"""Errors of the ROI benchmark, all under ``BenchNbError``."""

from __future__ import annotations

from pathlib import Path

from bench_nb.errors import BenchNbError


class RoiError(BenchNbError):
    """Something in the ROI benchmark failed."""


class MemoryImportError(RoiError):
    """A memory file (JSONL line or export zip entry) that cannot be read.

    The message names the file, the line or archive entry, and the field at fault.
    """

    def __init__(self, where: str | Path, message: str, field: str | None = None) -> None:
        self.where = str(where)
        self.field = field
        place = self.where + (f" (field {field})" if field else "")
        super().__init__(f"{place}: {message}" if place else message)


class StoreError(RoiError):
    """The ROI store cannot be opened or is of an unknown schema version."""


class RunInProgressError(RoiError):
    """A run is already in progress for this owner (in this or another process)."""

    def __init__(self, owner: str, run_id: str, phase: str | None, holder: str | None = None) -> None:
        self.owner = owner
        self.run_id = run_id
        self.phase = phase
        self.holder = holder
        held = f"; {holder}" if holder else ""
        super().__init__(
            f"a ROI run is in progress for owner {owner!r} ({run_id}, {phase or 'starting'}{held}); "
            "wait for it to finish, then run again (or `bench-nb roi run --force` if that process hangs)"
        )
