"""bench_nb: benchmark AI memory providers from Jupyter.

The front door: the names the README uses, about 40 (load runs, read their frames, the metrics, compare runs,
the gate and receipts, run a benchmark). Everything else lives in its package (``bench_nb.charts``,
``bench_nb.tables``, ``bench_nb.metrics``, ``bench_nb.runner``, ...); a name asked for at the wrong level says
where it lives, and a name that left the top level still works with a ``DeprecationWarning`` naming its new
spelling. Names are imported on first use (``bench_nb.load_runs`` loads the frames, not the runner or
altair), so ``import bench_nb`` is cheap.
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.benchmarks import list_benchmarks, load_benchmark
    from bench_nb.benchmarks.errata import load_errata
    from bench_nb.errors import BenchNbError
    from bench_nb.frames.judgments import disputed_questions, judgments_df
    from bench_nb.frames.questions import questions_df, runs_df
    from bench_nb.frames.store import export_runs, load_runs
    from bench_nb.metrics.accuracy import accuracy_by_type, success_rate
    from bench_nb.metrics.agreement import judge_agreement
    from bench_nb.metrics.beam import beam_scores
    from bench_nb.metrics.budget import budget_curve, lafs
    from bench_nb.metrics.clustered import accuracy_intervals
    from bench_nb.metrics.compare import compare_runs
    from bench_nb.metrics.errata import answer_key_ceiling, regrade_with_errata
    from bench_nb.metrics.failures import failure_reasons
    from bench_nb.metrics.judge_quality import corrected_accuracy, judge_audit
    from bench_nb.metrics.latency import latency_stats
    from bench_nb.metrics.memscore import memscore
    from bench_nb.metrics.pareto import pareto_frontier
    from bench_nb.metrics.power import minimum_detectable_effect, questions_needed
    from bench_nb.metrics.ranks import rank_intervals
    from bench_nb.metrics.repeats import repeat_variance
    from bench_nb.metrics.replicates import replicate_summary
    from bench_nb.metrics.retrieval import retrieval_summary
    from bench_nb.receipts.gate import gate
    from bench_nb.receipts.receipt import make_receipt, verify_receipt
    from bench_nb.runner.rejudge import rejudge
    from bench_nb.runner.run import run_benchmark
    from bench_nb.tables.frame import show

# Names that left the top level in 0.2 -> the package that now holds them (the old spelling warns; it goes
# in 0.3). ``run_comparison`` (``compare`` until 0.2) runs providers, making runs: the runner keeps it.
_MOVED: dict[str, str] = {
    "bench_nb.errors": "ComparisonError DatasetError JudgeError ModelError Problem ProviderError ReceiptError "
    "ReportError RunFormatError RunFormatWarning",
    "bench_nb.frames": "StoredRuns",
    "bench_nb.metrics": "JudgeAgreement accuracy detectable_differences failure_summary token_summary wilson_interval",
    "bench_nb.models": "TokenCount count_tokens",
    "bench_nb.providers": "get_provider list_providers register_provider",
    "bench_nb.receipts": "Gate Receipt ReceiptCheck",
    "bench_nb.runformat": "Run RunSet check_like_for_like memorybench_report",
    "bench_nb.runner": "RunResult run_comparison",
}
# The comparison functions compare_runs replaces: old name -> (its module, the compare_runs call).
_COMPARISONS: dict[str, tuple[str, str]] = {
    "PairedComparison": ("paired", "compare_runs(runs, a, b).pair"),
    "paired_comparison": ("paired", "compare_runs(runs, a, b)"),
    "paired_comparisons": ("paired", "compare_runs(runs, method=...)"),
    "clustered_paired_comparisons": ("clustered_paired", "compare_runs(questions, by=...)"),
    "pooled_paired_comparisons": ("repeats", "compare_runs(questions, method='pooled')"),
    "tell_apart": ("clustered_paired", "compare_runs(questions, method='tell-apart')"),
}

# The public API, each name once, by the module that defines it (imported on first access).
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.benchmarks": ["list_benchmarks", "load_benchmark"],
        "bench_nb.benchmarks.errata": ["load_errata"],
        "bench_nb.errors": ["BenchNbError"],
        "bench_nb.frames.judgments": ["disputed_questions", "judgments_df"],
        "bench_nb.frames.questions": ["questions_df", "runs_df"],
        "bench_nb.frames.store": ["export_runs", "load_runs"],
        "bench_nb.metrics.accuracy": ["accuracy_by_type", "success_rate"],
        "bench_nb.metrics.agreement": ["judge_agreement"],
        "bench_nb.metrics.beam": ["beam_scores"],
        "bench_nb.metrics.budget": ["budget_curve", "lafs"],
        "bench_nb.metrics.clustered": ["accuracy_intervals"],
        "bench_nb.metrics.compare": ["compare_runs"],
        "bench_nb.metrics.errata": ["answer_key_ceiling", "regrade_with_errata"],
        "bench_nb.metrics.failures": ["failure_reasons"],
        "bench_nb.metrics.judge_quality": ["corrected_accuracy", "judge_audit"],
        "bench_nb.metrics.latency": ["latency_stats"],
        "bench_nb.metrics.memscore": ["memscore"],
        "bench_nb.metrics.pareto": ["pareto_frontier"],
        "bench_nb.metrics.power": ["minimum_detectable_effect", "questions_needed"],
        "bench_nb.metrics.ranks": ["rank_intervals"],
        "bench_nb.metrics.repeats": ["repeat_variance"],
        "bench_nb.metrics.replicates": ["replicate_summary"],
        "bench_nb.metrics.retrieval": ["retrieval_summary"],
        "bench_nb.receipts.gate": ["gate"],
        "bench_nb.receipts.receipt": ["make_receipt", "verify_receipt"],
        "bench_nb.runner.rejudge": ["rejudge"],
        "bench_nb.runner.run": ["run_benchmark"],
        "bench_nb.tables.frame": ["show"],
    },
    # The subpackages a user reaches as ``bench_nb.NAME`` (docs/architecture.md), listed by ``dir(bench_nb)``.
    submodules=(
        "benchmarks",
        "charts",
        "frames",
        "judges",
        "metrics",
        "models",
        "providers",
        "receipts",
        "reports",
        "roi",
        "runformat",
        "runner",
        "tables",
        "widgets",
    ),
    deprecated={
        **{
            name: (
                f"{home}.{name}",
                f"bench_nb.{name} moved to {home}.{name} (the top level keeps the names the README uses); "
                "the old spelling goes in 0.3",
            )
            for home, names in _MOVED.items()
            for name in names.split()
        },
        **{
            name: (
                f"bench_nb.metrics.{module}.{name}",
                f"bench_nb.{name} is deprecated: use bench_nb.{call} (one comparison function, and the gate); "
                "the old spelling goes in 0.3",
            )
            for name, (module, call) in _COMPARISONS.items()
        },
        "compare": (
            "bench_nb.runner.run_comparison",
            "bench_nb.compare is renamed bench_nb.runner.run_comparison (it runs providers, as bench-nb compare "
            "does; the runs' numbers are compared by bench_nb.compare_runs); the old spelling goes in 0.3",
        ),
    },
    listed=("__version__",),
)
__version__ = "0.1.0"
