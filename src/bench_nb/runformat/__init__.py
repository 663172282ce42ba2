"""The run format: MemoryBench's run directories read and written, and the settings a run is run under.

Public here: ``Run`` and ``RunSet`` (what ``bench_nb.load_runs`` reads a run directory into), ``RunSpec`` and
``read_spec`` (a run's recorded settings), ``check_like_for_like`` (do runs share them) and
``memorybench_report`` (the report.json MemoryBench would write). The other modules are internal.
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.runformat.load import Run, RunSet, check_like_for_like
    from bench_nb.runformat.report import memorybench_report
    from bench_nb.runformat.spec import RunSpec, read_spec

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.runformat.load": ["Run", "RunSet", "check_like_for_like"],
        "bench_nb.runformat.report": ["memorybench_report"],
        "bench_nb.runformat.spec": ["RunSpec", "read_spec"],
    },
)
