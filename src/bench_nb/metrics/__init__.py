"""Metrics over the questions frame: MemScore, accuracy per type, latency, success rate, tokens, retrieval.

Every function takes a questions frame (pandas or polars, as ``questions_df`` returns it) or anything
``load_runs`` accepts, and returns pandas by default or polars with ``backend="polars"``; its polars twin
``<name>_frame`` (``memscore_frame``, ``accuracy_frame``, ...) is what code inside bench_nb calls (the rule:
``bench_nb.frames.backend``). The metrics are computed in polars; pandas is imported only when a pandas frame
is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from bench_nb.frames.backend import Backend, to_backend
from bench_nb.frames.questions import as_questions
from bench_nb.metrics.accuracy import accuracy_by_type_frame, accuracy_frame, success_rate_frame
from bench_nb.metrics.intervals import wilson_interval
from bench_nb.metrics.latency import latency_stats_frame
from bench_nb.metrics.memscore import format_memscore, memscore_frame
from bench_nb.metrics.retrieval import retrieval_summary_frame
from bench_nb.metrics.tokens import token_summary_frame
from bench_nb.runformat.latency import memorybench_stats
from bench_nb.runformat.rounding import js_round

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from bench_nb.metrics.beam import PartialCredit
    from bench_nb.metrics.clustered import accuracy_intervals
    from bench_nb.metrics.clustered_paired import clustered_paired_comparisons, tell_apart
    from bench_nb.metrics.pareto import pareto_frontier
    from bench_nb.metrics.power import detectable_differences, minimum_detectable_effect, questions_needed
    from bench_nb.metrics.ranks import rank_intervals
    from bench_nb.metrics.repeats import pooled_paired_comparisons, repeat_variance

# The uncertainty metrics resample with numpy: they are imported on first use, so that reading runs and the
# tables that need no resampling never import numpy (a quarter of a second).
_NUMPY_BACKED: dict[str, str] = {
    "beam_scores_frame": "bench_nb.metrics.beam",
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


@overload
def memscore(data: Any, *, backend: Literal["pandas"] = ...) -> pd.DataFrame: ...
@overload
def memscore(data: Any, *, backend: Literal["polars"]) -> pl.DataFrame: ...
def memscore(data: Any, *, backend: Backend = "pandas") -> pd.DataFrame | pl.DataFrame:
    """MemScore per run (``quality``, ``latency_ms``, ``context_tokens``, ``memscore``) with the accuracy's
    Wilson 95% interval and the counts behind it."""
    return to_backend(memscore_frame(data), backend)


@overload
def accuracy(data: Any, *, by: Sequence[str] = ..., backend: Literal["pandas"] = ...) -> pd.DataFrame: ...
@overload
def accuracy(data: Any, *, by: Sequence[str] = ..., backend: Literal["polars"]) -> pl.DataFrame: ...
def accuracy(
    data: Any, *, by: Sequence[str] = ("run_id",), backend: Backend = "pandas"
) -> pd.DataFrame | pl.DataFrame:
    """Accuracy per group with Wilson 95% intervals (unscored answers excluded and counted)."""
    return to_backend(accuracy_frame(data, by=by), backend)


@overload
def accuracy_by_type(
    data: Any, *, raw: bool = ..., by: Sequence[str] = ..., backend: Literal["pandas"] = ...
) -> pd.DataFrame: ...
@overload
def accuracy_by_type(
    data: Any, *, raw: bool = ..., by: Sequence[str] = ..., backend: Literal["polars"]
) -> pl.DataFrame: ...
def accuracy_by_type(
    data: Any, *, raw: bool = False, by: Sequence[str] = ("run_id",), backend: Backend = "pandas"
) -> pd.DataFrame | pl.DataFrame:
    """Accuracy per run and question type (normalised, or the run's raw labels with ``raw=True``)."""
    return to_backend(accuracy_by_type_frame(data, raw=raw, by=by), backend)


@overload
def latency_stats(
    data: Any, *, by: Sequence[str] = ..., backend: Literal["pandas"] = ...
) -> pd.DataFrame: ...
@overload
def latency_stats(data: Any, *, by: Sequence[str] = ..., backend: Literal["polars"]) -> pl.DataFrame: ...
def latency_stats(
    data: Any, *, by: Sequence[str] = ("run_id",), backend: Backend = "pandas"
) -> pd.DataFrame | pl.DataFrame:
    """Latency per phase: MemoryBench's statistics and interpolated p50/p95, each clearly named."""
    return to_backend(latency_stats_frame(data, by=by), backend)


@overload
def success_rate(data: Any, *, by: Sequence[str] = ..., backend: Literal["pandas"] = ...) -> pd.DataFrame: ...
@overload
def success_rate(data: Any, *, by: Sequence[str] = ..., backend: Literal["polars"]) -> pl.DataFrame: ...
def success_rate(
    data: Any, *, by: Sequence[str] = ("run_id",), backend: Backend = "pandas"
) -> pd.DataFrame | pl.DataFrame:
    """Evaluated / target per run, with failed, in-progress, pending and unscored counts."""
    return to_backend(success_rate_frame(data, by=by), backend)


@overload
def token_summary(
    data: Any, *, by: Sequence[str] = ..., backend: Literal["pandas"] = ...
) -> pd.DataFrame: ...
@overload
def token_summary(data: Any, *, by: Sequence[str] = ..., backend: Literal["polars"]) -> pl.DataFrame: ...
def token_summary(
    data: Any, *, by: Sequence[str] = ("run_id",), backend: Backend = "pandas"
) -> pd.DataFrame | pl.DataFrame:
    """Prompt, base-prompt and context token totals and means per run."""
    return to_backend(token_summary_frame(data, by=by), backend)


@overload
def retrieval_summary(
    data: Any, *, by: Sequence[str] = ..., backend: Literal["pandas"] = ...
) -> pd.DataFrame: ...
@overload
def retrieval_summary(data: Any, *, by: Sequence[str] = ..., backend: Literal["polars"]) -> pl.DataFrame: ...
def retrieval_summary(
    data: Any, *, by: Sequence[str] = ("run_id",), backend: Backend = "pandas"
) -> pd.DataFrame | pl.DataFrame:
    """Retrieval metrics per run (hit, precision, recall, F1 at k, MRR, nDCG): means over the evaluated
    questions that have them, with the level they were computed at (see ``bench_nb.metrics.retrieval``)."""
    return to_backend(retrieval_summary_frame(data, by=by), backend)


@overload
def beam_scores(
    data: Any,
    partial_credit: PartialCredit = ...,
    *,
    resamples: int = ...,
    confidence: float = ...,
    seed: int = ...,
    backend: Literal["pandas"] = ...,
) -> pd.DataFrame: ...
@overload
def beam_scores(
    data: Any,
    partial_credit: PartialCredit = ...,
    *,
    resamples: int = ...,
    confidence: float = ...,
    seed: int = ...,
    backend: Literal["polars"],
) -> pl.DataFrame: ...
def beam_scores(
    data: Any,
    partial_credit: PartialCredit = "float",
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    backend: Backend = "pandas",
) -> pd.DataFrame | pl.DataFrame:
    """BEAM's scores by its own rules: one row per run and ability (``run_id, ability, score, ci_low, ci_high,
    chats, questions``, and ``partial``, ``comparable``, ``reading``) plus an ``overall`` row per run: per
    ability the mean over chats of each chat's mean question score, overall the ten abilities weighted
    equally, intervals by a seeded bootstrap over chats (``bench_nb.metrics.beam``).

    Args:
        data: BEAM runs, or a questions frame (runs of other benchmarks in it are left out).
        partial_credit: ``"float"`` (a rubric item's 0.5 counts 0.5) or ``"as-published"`` (BEAM's own code:
            each item's 0.5 counts 0). Every row says which in ``reading``.
        resamples, confidence, seed: the bootstrap's.
    """
    from bench_nb.metrics.beam import beam_scores_frame

    frame = beam_scores_frame(data, partial_credit, resamples=resamples, confidence=confidence, seed=seed)
    return to_backend(frame, backend)
