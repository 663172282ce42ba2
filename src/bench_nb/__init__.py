"""bench_nb: benchmark AI memory providers from Jupyter.

The public API; implementation lives in modules named after what they hold. Names are imported on first
use (``bench_nb.load_runs`` loads the frames, not the runner or altair), so ``import bench_nb`` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

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

# The public API, each name once, by the module that defines it (imported on first access).
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.benchmarks": ["list_benchmarks", "load_benchmark"],
        "bench_nb.benchmarks.errata": ["load_errata"],
        "bench_nb.errors": [
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
        "bench_nb.frames.judgments": ["disputed_questions", "judgments_df"],
        "bench_nb.frames.questions": ["questions_df", "runs_df"],
        "bench_nb.frames.store": ["StoredRuns", "export_runs", "load_runs"],
        "bench_nb.metrics.accuracy": ["accuracy", "accuracy_by_type", "success_rate"],
        "bench_nb.metrics.agreement": ["JudgeAgreement", "judge_agreement"],
        "bench_nb.metrics.beam": ["beam_scores"],
        "bench_nb.metrics.budget": ["budget_curve", "lafs"],
        "bench_nb.metrics.clustered": ["accuracy_intervals"],
        "bench_nb.metrics.clustered_paired": ["clustered_paired_comparisons", "tell_apart"],
        "bench_nb.metrics.errata": ["answer_key_ceiling", "regrade_with_errata"],
        "bench_nb.metrics.failures": ["failure_reasons", "failure_summary"],
        "bench_nb.metrics.intervals": ["wilson_interval"],
        "bench_nb.metrics.judge_quality": ["corrected_accuracy", "judge_audit"],
        "bench_nb.metrics.latency": ["latency_stats"],
        "bench_nb.metrics.memscore": ["memscore"],
        "bench_nb.metrics.paired": ["PairedComparison", "paired_comparison", "paired_comparisons"],
        "bench_nb.metrics.pareto": ["pareto_frontier"],
        "bench_nb.metrics.power": ["detectable_differences", "minimum_detectable_effect", "questions_needed"],
        "bench_nb.metrics.ranks": ["rank_intervals"],
        "bench_nb.metrics.repeats": ["pooled_paired_comparisons", "repeat_variance"],
        "bench_nb.metrics.replicates": ["replicate_summary"],
        "bench_nb.metrics.retrieval": ["retrieval_summary"],
        "bench_nb.metrics.tokens": ["token_summary"],
        "bench_nb.models.tokens": ["TokenCount", "count_tokens"],
        "bench_nb.providers": ["get_provider", "list_providers", "register_provider"],
        "bench_nb.receipts.gate": ["Gate", "gate"],
        "bench_nb.receipts.receipt": ["Receipt", "ReceiptCheck", "make_receipt", "verify_receipt"],
        "bench_nb.runformat.load": ["Run", "RunSet"],
        "bench_nb.runformat.report": ["memorybench_report"],
        "bench_nb.runformat.spec": ["check_like_for_like"],
        "bench_nb.runner.comparison": ["compare", "run_comparison"],
        "bench_nb.runner.rejudge": ["rejudge"],
        "bench_nb.runner.run": ["RunResult", "run_benchmark"],
    },
    # The subpackages a user reaches as ``bench_nb.NAME`` (docs/architecture.md), listed by ``dir(bench_nb)``.
    submodules=(
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
    ),
    listed=("__version__",),
)
__version__ = "0.1.0"
