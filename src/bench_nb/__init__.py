"""bench_nb: benchmark AI memory providers from Jupyter.

The public API; implementation lives in modules named after what they hold.
"""

from __future__ import annotations

from bench_nb.benchmarks import list_benchmarks, load_benchmark
from bench_nb.errors import (
    BenchNbError,
    ComparisonError,
    DatasetError,
    JudgeError,
    ModelError,
    Problem,
    ProviderError,
    ReportError,
    RunFormatError,
)
from bench_nb.frames.judgments import disputed_questions, judgments_df
from bench_nb.frames.load import Run, RunSet, load_runs
from bench_nb.frames.questions import questions_df, runs_df
from bench_nb.judges.rejudge import rejudge
from bench_nb.memorybench.report import memorybench_report
from bench_nb.metrics import (
    accuracy,
    accuracy_by_type,
    latency_stats,
    memscore,
    success_rate,
    token_summary,
    wilson_interval,
)
from bench_nb.metrics.agreement import JudgeAgreement, judge_agreement
from bench_nb.metrics.paired import PairedComparison, paired_comparison, paired_comparisons
from bench_nb.models.tokens import TokenCount, count_tokens
from bench_nb.providers import get_provider, list_providers, register_provider
from bench_nb.runner.comparison import check_like_for_like, compare
from bench_nb.runner.run import RunResult, run_benchmark

__all__ = [
    "BenchNbError",
    "ComparisonError",
    "DatasetError",
    "JudgeAgreement",
    "JudgeError",
    "ModelError",
    "PairedComparison",
    "Problem",
    "ProviderError",
    "ReportError",
    "Run",
    "RunFormatError",
    "RunResult",
    "RunSet",
    "TokenCount",
    "accuracy",
    "accuracy_by_type",
    "check_like_for_like",
    "compare",
    "count_tokens",
    "disputed_questions",
    "get_provider",
    "judge_agreement",
    "judgments_df",
    "latency_stats",
    "list_benchmarks",
    "list_providers",
    "load_benchmark",
    "load_runs",
    "memorybench_report",
    "memscore",
    "paired_comparison",
    "paired_comparisons",
    "questions_df",
    "register_provider",
    "rejudge",
    "run_benchmark",
    "runs_df",
    "success_rate",
    "token_summary",
    "wilson_interval",
]
__version__ = "0.1.0"
