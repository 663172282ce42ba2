"""Metrics over the questions frame: MemScore, accuracy per type, latency, success rate, tokens, retrieval.

Every function takes a questions frame (pandas or polars, as ``questions_df`` returns it) or anything
``load_runs`` accepts, and returns pandas by default or polars with ``backend="polars"``; its polars twin
``<name>_frame``, in the same module (``metrics.memscore.memscore_frame``, ``metrics.accuracy.accuracy_frame``),
is what code inside bench_nb calls (the rule: ``bench_nb.frames.backend``). The metrics are computed in polars;
pandas is imported only when a pandas frame is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench_nb.frames.questions import as_questions
from bench_nb.metrics.accuracy import accuracy, accuracy_by_type, success_rate
from bench_nb.metrics.intervals import wilson_interval
from bench_nb.metrics.latency import latency_stats
from bench_nb.metrics.memscore import format_memscore, memscore
from bench_nb.metrics.retrieval import retrieval_summary
from bench_nb.metrics.tokens import token_summary
from bench_nb.runformat.latency import memorybench_stats
from bench_nb.runformat.rounding import js_round

if TYPE_CHECKING:
    from bench_nb.metrics.beam import beam_scores
    from bench_nb.metrics.clustered import accuracy_intervals
    from bench_nb.metrics.clustered_paired import clustered_paired_comparisons, tell_apart
    from bench_nb.metrics.pareto import pareto_frontier
    from bench_nb.metrics.power import detectable_differences, minimum_detectable_effect, questions_needed
    from bench_nb.metrics.ranks import rank_intervals
    from bench_nb.metrics.repeats import pooled_paired_comparisons, repeat_variance

# The uncertainty metrics resample with numpy: they are imported on first use, so that reading runs and the
# tables that need no resampling never import numpy (a quarter of a second).
_NUMPY_BACKED: dict[str, str] = {
    "beam_scores": "bench_nb.metrics.beam",
    "accuracy_intervals": "bench_nb.metrics.clustered",
    "clustered_paired_comparisons": "bench_nb.metrics.clustered_paired",
    "tell_apart": "bench_nb.metrics.clustered_paired",
    "pareto_frontier": "bench_nb.metrics.pareto",
    "detectable_differences": "bench_nb.metrics.power",
    "minimum_detectable_effect": "bench_nb.metrics.power",
    "questions_needed": "bench_nb.metrics.power",
    "rank_intervals": "bench_nb.metrics.ranks",
    "repeat_variance": "bench_nb.metrics.repeats",
    "pooled_paired_comparisons": "bench_nb.metrics.repeats",
}


def __getattr__(name: str) -> Any:
    module = _NUMPY_BACKED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "accuracy",
    "accuracy_by_type",
    "accuracy_intervals",
    "as_questions",
    "beam_scores",
    "clustered_paired_comparisons",
    "detectable_differences",
    "format_memscore",
    "js_round",
    "latency_stats",
    "memorybench_stats",
    "memscore",
    "minimum_detectable_effect",
    "pareto_frontier",
    "pooled_paired_comparisons",
    "questions_needed",
    "rank_intervals",
    "repeat_variance",
    "retrieval_summary",
    "success_rate",
    "tell_apart",
    "token_summary",
    "wilson_interval",
]
