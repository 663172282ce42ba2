"""``compare_runs``: the one way to compare runs question by question (the regression gate, ``bench_nb.gate``,
is the other: a verdict against a margin).

It runs the paired tests of ``metrics.paired``, ``metrics.clustered_paired`` and ``metrics.repeats`` (their
definitions: docs/statistics.md) and returns one result type, ``Comparison``: ``.frame`` (pandas, or polars
with ``backend="polars"``) and an HTML view in notebooks. The functions it replaces as public spellings
(``paired_comparison``, ``paired_comparisons``, ``clustered_paired_comparisons``, ``pooled_paired_comparisons``,
``tell_apart``) still work from ``bench_nb`` and ``bench_nb.metrics`` with a ``DeprecationWarning`` naming the
``compare_runs`` call that gives the same numbers.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, cast

import polars as pl

from bench_nb.frames.backend import Backend, Frame, to_backend
from bench_nb.frames.questions import QuestionsLike
from bench_nb.metrics.clustered_paired import clustered_paired_comparisons_frame, tell_apart_frame
from bench_nb.metrics.intervals import check_level
from bench_nb.metrics.paired import (
    METHOD_NOTES,
    PairedComparison,
    PairedMethod,
    paired_comparison,
    paired_comparisons_frame,
)
from bench_nb.metrics.repeats import pooled_paired_comparisons_frame

CompareMethod = Literal["clustered", "independent", "signed-rank", "pooled", "tell-apart"]
METHODS: tuple[CompareMethod, ...] = ("clustered", "independent", "signed-rank", "pooled", "tell-apart")
_NOTES: dict[str, str] = {k: v for k, v in METHOD_NOTES.items()} | {
    "pooled": "Groups of repeated runs (bench-nb run --repeat), each question's score its mean over the "
    "group's repeats, compared with the clustered paired test.",
    "tell-apart": "The clustered paired verdict for every pair, overall and per question type, beside the "
    "Wilson-overlap rule (unpaired, ignores the haystacks) and whether the two agree.",
}


@dataclass(frozen=True)
class Comparison:
    """What ``compare_runs`` found: ``frame`` has one row per pair of runs (and per ``by`` value), in
    ``backend`` (pandas by default; ``polars`` holds it in polars whatever the backend); with one pair asked
    for (``a``, ``b``), ``pair`` holds the paired comparison (its per-type frame: ``pair.by_type``)."""

    method: CompareMethod
    polars: pl.DataFrame = field(repr=False)
    pair: PairedComparison | None = None
    backend: Backend = field(default="pandas", repr=False)

    @cached_property
    def frame(self) -> Frame:
        """One row per pair of runs (and per ``by`` value), in ``backend``."""
        return to_backend(self.polars, self.backend)

    def _repr_html_(self) -> str:
        if self.pair is not None:
            return self.pair._repr_html_()
        table = cast(Any, self.frame)._repr_html_()
        return f"{table}<p><small>{html.escape(_NOTES[self.method])}</small></p>"


def compare_runs(
    runs: QuestionsLike,
    a: str | None = None,
    b: str | None = None,
    *,
    method: CompareMethod = "clustered",
    by: Literal["question_type"] | None = None,
    judge: str | None = None,
    alpha: float = 0.05,
    backend: Backend = "pandas",
) -> Comparison:
    """Compare runs question by question: every pair of runs, or the pair ``a`` vs ``b`` (difference A − B).

    Args:
        runs: run directories or anything ``load_runs`` takes, or a questions frame (``questions_df``);
            with ``judge``, or one pair, a judgments frame too.
        a, b: the run ids of one pair to compare (``Comparison.pair``); default every pair, in order of
            appearance.
        method: ``"clustered"`` (default): the clustered paired test over the haystacks and the interval
            that inverts it; ``"independent"``: McNemar's test and Newcombe's interval (every question
            independent); ``"signed-rank"``: the clustered signed-rank test (graded scores); ``"pooled"``:
            groups of repeated runs, each pooled, with the clustered test; ``"tell-apart"``: the clustered
            verdict beside the Wilson-overlap rule, overall and per question type.
        by: ``"question_type"`` to compare within each normalised question type as well
            (``question_type_norm``).
        judge: grade with this judge's verdicts (judgments.jsonl) instead of the primary one.
        alpha: the test's level (``"clustered"`` and ``"tell-apart"``).
        backend: ``"pandas"`` or ``"polars"`` for ``frame``.

    Raises:
        ValueError: an unknown ``method``, or an argument the method does not take.
        ComparisonError: runs that cannot be compared (different questions, no shared question, ...).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}: use one of {', '.join(map(repr, METHODS))}")
    check_level("alpha", alpha, "0.05")
    if (a is None) != (b is None):
        raise ValueError("compare one pair with both a and b, or every pair with neither")
    if a is not None and b is not None:
        if method in ("pooled", "tell-apart"):
            raise ValueError(f"method={method!r} compares every pair: leave out a and b")
        pair = paired_comparison(runs, a, b, judge=judge, method=cast(PairedMethod, method), backend=backend)
        return Comparison(method, pl.DataFrame([pair.as_dict()]), pair, backend)
    if method == "tell-apart":
        if by is not None or judge is not None:
            raise ValueError("method='tell-apart' is overall and per question type: leave out by and judge")
        frame = tell_apart_frame(runs, alpha=alpha)
    elif method == "pooled":
        if judge is not None:
            raise ValueError("method='pooled' grades with the primary judge: leave out judge")
        frame = pooled_paired_comparisons_frame(runs, by=by)
    elif method == "clustered" and judge is None:
        frame = clustered_paired_comparisons_frame(runs, by=by, alpha=alpha)
    else:
        frame = paired_comparisons_frame(runs, judge=judge, by_type=by is not None, method=method)
    return Comparison(method, frame, backend=backend)
