"""bench_nb: benchmark AI memory providers from Jupyter.

The public API; implementation lives in modules named after what they hold. Names are imported on first
use (``bench_nb.load_runs`` loads the frames, not the runner or altair), so ``import bench_nb`` is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench_nb.benchmarks import list_benchmarks, load_benchmark
    from bench_nb.benchmarks.errata import load_errata
    from bench_nb.errors import (
        BenchNbError,
        ComparisonError,
        DatasetError,
        JudgeError,
        ModelError,
        Problem,
        ProviderError,
        ReceiptError,
        ReportError,
        RunFormatError,
        RunFormatWarning,
    )
    from bench_nb.frames.judgments import disputed_questions, judgments_df
    from bench_nb.frames.questions import questions_df, runs_df
    from bench_nb.frames.store import StoredRuns, export_runs, load_runs
    from bench_nb.metrics.accuracy import accuracy, accuracy_by_type, success_rate
    from bench_nb.metrics.agreement import JudgeAgreement, judge_agreement
    from bench_nb.metrics.beam import beam_scores
    from bench_nb.metrics.budget import budget_curve, lafs
    from bench_nb.metrics.clustered import accuracy_intervals
    from bench_nb.metrics.clustered_paired import clustered_paired_comparisons, tell_apart
    from bench_nb.metrics.errata import answer_key_ceiling, regrade_with_errata
    from bench_nb.metrics.failures import failure_reasons, failure_summary
    from bench_nb.metrics.intervals import wilson_interval
    from bench_nb.metrics.judge_quality import corrected_accuracy, judge_audit
    from bench_nb.metrics.latency import latency_stats
    from bench_nb.metrics.memscore import memscore
    from bench_nb.metrics.paired import PairedComparison, paired_comparison, paired_comparisons
    from bench_nb.metrics.pareto import pareto_frontier
    from bench_nb.metrics.power import detectable_differences, minimum_detectable_effect, questions_needed
    from bench_nb.metrics.ranks import rank_intervals
    from bench_nb.metrics.repeats import pooled_paired_comparisons, repeat_variance
    from bench_nb.metrics.replicates import replicate_summary
    from bench_nb.metrics.retrieval import retrieval_summary
    from bench_nb.metrics.tokens import token_summary
    from bench_nb.models.tokens import TokenCount, count_tokens
    from bench_nb.providers import get_provider, list_providers, register_provider
    from bench_nb.receipts.gate import Gate, gate
    from bench_nb.receipts.receipt import Receipt, ReceiptCheck, make_receipt, verify_receipt
    from bench_nb.runformat.load import Run, RunSet
    from bench_nb.runformat.report import memorybench_report
    from bench_nb.runformat.spec import check_like_for_like
    from bench_nb.runner.comparison import compare, run_comparison
    from bench_nb.runner.rejudge import rejudge
    from bench_nb.runner.run import RunResult, run_benchmark

# Public name -> the module that defines it (imported on first access).
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(["list_benchmarks", "load_benchmark"], "bench_nb.benchmarks"),
    "load_errata": "bench_nb.benchmarks.errata",
    **dict.fromkeys(["answer_key_ceiling", "regrade_with_errata"], "bench_nb.metrics.errata"),
    **dict.fromkeys(
        [
            "BenchNbError",
            "ComparisonError",
            "DatasetError",
            "JudgeError",
            "ModelError",
            "Problem",
            "ProviderError",
            "ReceiptError",
            "ReportError",
            "RunFormatError",
            "RunFormatWarning",
        ],
        "bench_nb.errors",
    ),
    **dict.fromkeys(["disputed_questions", "judgments_df"], "bench_nb.frames.judgments"),
    **dict.fromkeys(["Run", "RunSet"], "bench_nb.runformat.load"),
    **dict.fromkeys(["StoredRuns", "export_runs", "load_runs"], "bench_nb.frames.store"),
    **dict.fromkeys(["questions_df", "runs_df"], "bench_nb.frames.questions"),
    "rejudge": "bench_nb.runner.rejudge",
    "memorybench_report": "bench_nb.runformat.report",
    **dict.fromkeys(["accuracy", "accuracy_by_type", "success_rate"], "bench_nb.metrics.accuracy"),
    "beam_scores": "bench_nb.metrics.beam",
    "accuracy_intervals": "bench_nb.metrics.clustered",
    **dict.fromkeys(["clustered_paired_comparisons", "tell_apart"], "bench_nb.metrics.clustered_paired"),
    "wilson_interval": "bench_nb.metrics.intervals",
    "latency_stats": "bench_nb.metrics.latency",
    "memscore": "bench_nb.metrics.memscore",
    "pareto_frontier": "bench_nb.metrics.pareto",
    **dict.fromkeys(["budget_curve", "lafs"], "bench_nb.metrics.budget"),
    **dict.fromkeys(["failure_reasons", "failure_summary"], "bench_nb.metrics.failures"),
    **dict.fromkeys(
        ["detectable_differences", "minimum_detectable_effect", "questions_needed"], "bench_nb.metrics.power"
    ),
    "rank_intervals": "bench_nb.metrics.ranks",
    **dict.fromkeys(["pooled_paired_comparisons", "repeat_variance"], "bench_nb.metrics.repeats"),
    "retrieval_summary": "bench_nb.metrics.retrieval",
    "token_summary": "bench_nb.metrics.tokens",
    **dict.fromkeys(["JudgeAgreement", "judge_agreement"], "bench_nb.metrics.agreement"),
    **dict.fromkeys(["corrected_accuracy", "judge_audit"], "bench_nb.metrics.judge_quality"),
    **dict.fromkeys(
        ["PairedComparison", "paired_comparison", "paired_comparisons"], "bench_nb.metrics.paired"
    ),
    "replicate_summary": "bench_nb.metrics.replicates",
    **dict.fromkeys(["TokenCount", "count_tokens"], "bench_nb.models.tokens"),
    **dict.fromkeys(["get_provider", "list_providers", "register_provider"], "bench_nb.providers"),
    **dict.fromkeys(["Gate", "gate"], "bench_nb.receipts.gate"),
    **dict.fromkeys(
        ["Receipt", "ReceiptCheck", "make_receipt", "verify_receipt"], "bench_nb.receipts.receipt"
    ),
    "check_like_for_like": "bench_nb.runformat.spec",
    "compare": "bench_nb.runner.comparison",
    "run_comparison": "bench_nb.runner.comparison",
    **dict.fromkeys(["RunResult", "run_benchmark"], "bench_nb.runner.run"),
}

__all__ = [
    "BenchNbError",
    "ComparisonError",
    "DatasetError",
    "Gate",
    "JudgeAgreement",
    "JudgeError",
    "ModelError",
    "PairedComparison",
    "Problem",
    "ProviderError",
    "Receipt",
    "ReceiptCheck",
    "ReceiptError",
    "ReportError",
    "Run",
    "RunFormatError",
    "RunFormatWarning",
    "RunResult",
    "RunSet",
    "StoredRuns",
    "TokenCount",
    "accuracy",
    "accuracy_by_type",
    "accuracy_intervals",
    "answer_key_ceiling",
    "beam_scores",
    "budget_curve",
    "check_like_for_like",
    "clustered_paired_comparisons",
    "compare",
    "corrected_accuracy",
    "count_tokens",
    "detectable_differences",
    "disputed_questions",
    "export_runs",
    "failure_reasons",
    "failure_summary",
    "gate",
    "get_provider",
    "judge_agreement",
    "judge_audit",
    "judgments_df",
    "lafs",
    "latency_stats",
    "list_benchmarks",
    "list_providers",
    "load_benchmark",
    "load_errata",
    "load_runs",
    "make_receipt",
    "memorybench_report",
    "memscore",
    "minimum_detectable_effect",
    "paired_comparison",
    "paired_comparisons",
    "pareto_frontier",
    "pooled_paired_comparisons",
    "questions_df",
    "questions_needed",
    "rank_intervals",
    "register_provider",
    "regrade_with_errata",
    "rejudge",
    "repeat_variance",
    "replicate_summary",
    "retrieval_summary",
    "run_benchmark",
    "run_comparison",
    "runs_df",
    "success_rate",
    "tell_apart",
    "token_summary",
    "verify_receipt",
    "wilson_interval",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Import a public name, or a subpackage (``bench_nb.charts``), on first access."""
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


# The subpackages a user reaches as ``bench_nb.NAME`` (docs/architecture.md), listed by ``dir(bench_nb)``.
_SUBPACKAGES = (
    "benchmarks",
    "charts",
    "judges",
    "metrics",
    "models",
    "providers",
    "receipts",
    "reports",
    "roi",
    "runner",
    "tables",
    "widgets",
)


def __dir__() -> list[str]:
    """The public API only (what tab completion offers): ``__all__``, ``__version__`` and the subpackages."""
    return sorted({*__all__, "__version__", *_SUBPACKAGES})
