"""The runner: benchmarks through memory providers, into MemoryBench-format run directories that resume.

    >>> from bench_nb.runner import run_benchmark
    >>> result = run_benchmark("sqlite", "sample", judges="contains,f1")
    >>> result.run_dir  # data/runs/<run id>: checkpoint.json, results/, judgments.jsonl, report.json

Names are imported on first use, so ``bench_nb.runformat.journal`` (which run loading needs) stays light.
See docs/runner.md.
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.runformat.journal import apply_journal
    from bench_nb.runformat.load import check_like_for_like
    from bench_nb.runner.comparison import CompareResult, run_comparison, write_compare_manifest
    from bench_nb.runner.maintenance import clean_run
    from bench_nb.runner.retry import RetryPolicy
    from bench_nb.runner.run import RunResult, run_benchmark, run_spec
    from bench_nb.runner.settings import ExecutionOptions

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.runformat.journal": ["apply_journal"],
        "bench_nb.runformat.load": ["check_like_for_like"],
        "bench_nb.runner.comparison": [
            "CompareResult",
            "run_comparison",
            "write_compare_manifest",
        ],
        "bench_nb.runner.maintenance": ["clean_run"],
        "bench_nb.runner.retry": ["RetryPolicy"],
        "bench_nb.runner.run": ["RunResult", "run_benchmark", "run_spec"],
        "bench_nb.runner.settings": ["ExecutionOptions"],
    },
)
