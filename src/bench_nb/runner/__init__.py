"""The runner: benchmarks through memory providers, into MemoryBench-format run directories that resume.

    >>> from bench_nb.runner import run_benchmark
    >>> result = run_benchmark("sqlite", "sample", judges="contains,f1")
    >>> result.run_dir  # data/runs/<run id>: checkpoint.json, results/, judgments.jsonl, report.json

Names are imported on first use, so ``bench_nb.runformat.journal`` (which run loading needs) stays light.
See docs/runner.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench_nb.runformat.journal import apply_journal
    from bench_nb.runformat.spec import check_like_for_like
    from bench_nb.runner.comparison import CompareResult, compare, run_comparison, write_compare_manifest
    from bench_nb.runner.maintenance import clean_run
    from bench_nb.runner.retry import RetryPolicy
    from bench_nb.runner.run import RunResult, run_benchmark, run_spec
    from bench_nb.runner.settings import ExecutionOptions, RunSettings

_EXPORTS = {
    "CompareResult": "bench_nb.runner.comparison",
    "check_like_for_like": "bench_nb.runformat.spec",
    "compare": "bench_nb.runner.comparison",
    "run_comparison": "bench_nb.runner.comparison",
    "write_compare_manifest": "bench_nb.runner.comparison",
    "apply_journal": "bench_nb.runformat.journal",
    "clean_run": "bench_nb.runner.maintenance",
    "RetryPolicy": "bench_nb.runner.retry",
    "RunResult": "bench_nb.runner.run",
    "run_benchmark": "bench_nb.runner.run",
    "run_spec": "bench_nb.runner.run",
    "ExecutionOptions": "bench_nb.runner.settings",
    "RunSettings": "bench_nb.runner.settings",
}
__all__ = [
    "CompareResult",
    "ExecutionOptions",
    "RetryPolicy",
    "RunResult",
    "RunSettings",
    "apply_journal",
    "check_like_for_like",
    "clean_run",
    "compare",
    "run_benchmark",
    "run_comparison",
    "run_spec",
    "write_compare_manifest",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bench_nb.runner' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
