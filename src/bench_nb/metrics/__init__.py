"""Metrics over the questions frame: MemScore, accuracy per type, latency, success rate, tokens, retrieval.

Every function takes a questions frame (pandas or polars, as ``questions_df`` returns it) or anything
``load_runs`` accepts, and returns pandas by default or polars with ``backend="polars"``; its polars core
``<name>_frame``, in the same module (``metrics.memscore.memscore_frame``, ``metrics.accuracy.accuracy_frame``),
is what code inside bench_nb calls (the rule, written once: ``bench_nb.frames.backend.with_backend``). The metrics are computed in polars;
pandas is imported only when a pandas frame is asked for.
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.frames.questions import as_questions
from bench_nb.lazy import attach
from bench_nb.metrics.accuracy import accuracy, accuracy_by_type, success_rate
from bench_nb.metrics.intervals import wilson_interval
from bench_nb.metrics.latency import latency_stats
from bench_nb.metrics.memscore import memscore
from bench_nb.metrics.retrieval import retrieval_summary
from bench_nb.metrics.tokens import token_summary
from bench_nb.runformat.latency import memorybench_stats
from bench_nb.runformat.report import format_memscore
from bench_nb.runformat.rounding import js_round

if TYPE_CHECKING:
    from bench_nb.metrics.agreement import JudgeAgreement, judge_agreement
    from bench_nb.metrics.beam import beam_scores
    from bench_nb.metrics.clustered import accuracy_intervals
    from bench_nb.metrics.compare import Comparison, compare_runs
    from bench_nb.metrics.failures import failure_reasons, failure_summary
    from bench_nb.metrics.pareto import pareto_frontier
    from bench_nb.metrics.power import detectable_differences, minimum_detectable_effect, questions_needed
    from bench_nb.metrics.ranks import rank_intervals
    from bench_nb.metrics.repeats import repeat_variance

# The uncertainty metrics resample with numpy: they are imported on first use, so that reading runs and the
# tables that need no resampling never import numpy (a quarter of a second). The others are imported above.
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.frames.questions": ["as_questions"],
        "bench_nb.metrics.accuracy": ["accuracy", "accuracy_by_type", "success_rate"],
        "bench_nb.metrics.beam": ["beam_scores"],
        "bench_nb.metrics.clustered": ["accuracy_intervals"],
        "bench_nb.metrics.agreement": ["JudgeAgreement", "judge_agreement"],
        "bench_nb.metrics.compare": ["Comparison", "compare_runs"],
        "bench_nb.metrics.failures": ["failure_reasons", "failure_summary"],
        "bench_nb.metrics.intervals": ["wilson_interval"],
        "bench_nb.metrics.latency": ["latency_stats"],
        "bench_nb.metrics.memscore": ["memscore"],
        "bench_nb.metrics.pareto": ["pareto_frontier"],
        "bench_nb.metrics.power": ["detectable_differences", "minimum_detectable_effect", "questions_needed"],
        "bench_nb.metrics.ranks": ["rank_intervals"],
        "bench_nb.metrics.repeats": ["repeat_variance"],
        "bench_nb.metrics.retrieval": ["retrieval_summary"],
        "bench_nb.metrics.tokens": ["token_summary"],
        "bench_nb.runformat.latency": ["memorybench_stats"],
        "bench_nb.runformat.report": ["format_memscore"],
        "bench_nb.runformat.rounding": ["js_round"],
    },
    # The comparison functions compare_runs replaces (their modules keep them, unwarned, for bench_nb's own use).
    deprecated={
        name: (
            f"bench_nb.metrics.{module}.{name}",
            f"bench_nb.metrics.{name} is deprecated: use bench_nb.{call}; the old spelling goes in 0.3",
        )
        for name, module, call in (
            ("clustered_paired_comparisons", "clustered_paired", "compare_runs(questions, by=...)"),
            ("pooled_paired_comparisons", "repeats", "compare_runs(questions, method='pooled')"),
            ("tell_apart", "clustered_paired", "compare_runs(questions, method='tell-apart')"),
        )
    },
)
