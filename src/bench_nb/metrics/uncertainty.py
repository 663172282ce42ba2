"""One questions frame's clustered statistics, each computed once and kept: ``ClusterBootstrap``.

The compare report's uncertainty, tell-apart and Pareto sections all resample the same haystacks: the accuracy
intervals feed the leaderboard, its chart and the Pareto frontier; the pairs' per-haystack sums feed the
paired comparisons and the rank groups. Given a ``ClusterBootstrap`` instead of the frame, the tables and
charts of those sections (``bench_nb.tables.uncertainty``, ``bench_nb.charts.uncertainty``) share one: the
frame is checked and summed per haystack once per ``by``, every statistic is computed once, and the resamples
of a set of haystacks are drawn once (``resampled_sums``). The numbers are those of the functions
of the same names (``accuracy_intervals``, ``rank_intervals``, ``clustered_paired_comparisons``,
``tell_apart``, ``pareto_frontier``) for the same seed. The budget section's table and charts
(``table_budget``, ``chart_budget_curve``) share its ``budget_curve`` the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar, cast

import polars as pl

from bench_nb.metrics import as_questions
from bench_nb.metrics.budget import budget_curve_frame
from bench_nb.metrics.clustered import (
    ClusterSums,
    IntervalMethod,
    grouped_cluster_sums,
    intervals_of,
    outcomes,
)
from bench_nb.metrics.clustered_paired import (
    PairKey,
    PairSums,
    largest_question_set,
    paired_cluster_sums,
    paired_of,
    same_questions,
    tell_apart_of,
)
from bench_nb.metrics.pareto import frontier_of
from bench_nb.metrics.ranks import ranks_of

T = TypeVar("T")
By = Literal["question_type"] | None  # None (every question) or per question type


def _keys(by: By) -> list[str]:
    """The groups of a statistic: each run, or each run and question type."""
    return ["run_id"] + ([] if by is None else ["question_type"])


class ClusterBootstrap:
    """The clustered statistics of one questions frame (or run sources), each computed on first use.

    Every method returns a polars frame, the one its namesake in ``bench_nb.metrics`` returns with
    ``backend="polars"`` at this object's ``seed`` and ``resamples`` (confidence 95%; ``resamples`` None:
    the rank bootstrap's own default, ``ranks.rank_resamples``)."""

    def __init__(self, questions: Any, *, seed: int = 0, resamples: int | None = None) -> None:
        self.questions = as_questions(questions)
        self.seed = seed
        self.resamples = resamples
        self._kept: dict[tuple[Any, ...], Any] = {}

    def _once(self, key: tuple[Any, ...], make: Callable[[], T]) -> T:
        if key not in self._kept:
            self._kept[key] = make()
        return cast(T, self._kept[key])  # each key names one method, whose make() gives a T

    def comparable(self) -> tuple[ClusterBootstrap, list[str]]:
        """``(paired, left_out)``: the statistics of the runs that hold one question set
        (``largest_question_set``), for ranks and paired verdicts, and the runs left out of them. ``self``
        when every run holds the same questions."""

        def make() -> tuple[ClusterBootstrap, list[str]]:
            kept, left_out = largest_question_set(self.questions)
            if not left_out:
                return self, []
            sub = self.questions.filter(pl.col("run_id").is_in(kept))
            return ClusterBootstrap(sub, seed=self.seed, resamples=self.resamples), left_out

        return self._once(("comparable",), make)

    def outcomes(self, by: By = None) -> pl.DataFrame:
        """``outcomes(questions, by)``: the questions that count, with their values."""
        return self._once(("outcomes", by), lambda: outcomes(self.questions, by))

    def cluster_sums(self, by: By = None) -> list[tuple[tuple[Any, ...], ClusterSums]]:
        """``grouped_cluster_sums``: each run's (and type's) per-haystack sums, shared by both interval
        methods and the rank intervals."""
        return self._once(("sums", by), lambda: grouped_cluster_sums(self.outcomes(by), _keys(by)))

    def pair_sums(self, by: By = None) -> dict[PairKey, PairSums]:
        """``paired_cluster_sums``: every pair of runs summed per haystack (overall or per type)."""
        return self._once(("pairs", by), lambda: self._paired_sums(by))

    def _paired_sums(self, by: By) -> dict[PairKey, PairSums]:
        same_questions(self.questions)  # runs on different question sets are refused, never intersected
        return paired_cluster_sums(self.outcomes(by), by)

    def accuracy_intervals(self, method: IntervalMethod = "clustered", by: By = None) -> pl.DataFrame:
        """``accuracy_intervals`` of the frame, by run (and by question type with ``by``)."""
        return self._once(
            ("intervals", method, by),
            lambda: intervals_of(self.outcomes(by), _keys(by), method, groups=self.cluster_sums(by)),
        )

    def rank_intervals(self, by: By = None, alpha: float = 0.05) -> pl.DataFrame:
        """``rank_intervals`` of the frame: each run's plausible ranks from the shared resamples."""
        return self._once(
            ("ranks", by, alpha),
            lambda: ranks_of(
                self.outcomes(by),
                by,
                self.pair_sums(by),
                self.seed,
                alpha,
                self.resamples,
                self.cluster_sums(by),
            ),
        )

    def clustered_paired_comparisons(self, by: By = None, alpha: float = 0.05) -> pl.DataFrame:
        """``clustered_paired_comparisons`` of the frame: every pair of runs, overall or per question type."""
        return self._once(("paired", by, alpha), lambda: paired_of(self.pair_sums(by), alpha))

    def tell_apart(self, alpha: float = 0.05) -> pl.DataFrame:
        """``tell_apart`` of the frame: the clustered paired verdict of every pair beside the Wilson-overlap
        rule."""
        return self._once(
            ("tell_apart", alpha),
            lambda: tell_apart_of(
                self.clustered_paired_comparisons(None, alpha),
                self.clustered_paired_comparisons("question_type", alpha),
                alpha,
            ),
        )

    def budget_curve(self, by: str = "latency_ms") -> pl.DataFrame:
        """``budget_curve`` of the frame by ``by`` on its default budgets: computed once, shared by the budget
        table's break-even columns and the budget charts."""
        return self._once(("budget", by), lambda: budget_curve_frame(self.questions, by))

    def pareto_frontier(self) -> pl.DataFrame:
        """``pareto_frontier`` of the frame, over the clustered accuracy intervals."""
        return self._once(("pareto",), lambda: frontier_of(self.questions, self.accuracy_intervals()))


def cluster_bootstrap(data: Any, seed: int = 0) -> ClusterBootstrap:
    """``data`` itself when it is a ``ClusterBootstrap`` (it keeps its own seed), else a new one over it."""
    return data if isinstance(data, ClusterBootstrap) else ClusterBootstrap(data, seed=seed)
