"""The arguments that changed nothing are gone in 0.2 (they had warned since the intervals and the paired tests
became deterministic, docs/statistics.md): passing one is a TypeError naming it, not a silent no-op. The
functions that really resample (``rank_intervals``, ``ClusterBootstrap``) keep their seed."""

from __future__ import annotations

import inspect

import pytest

from bench_nb.charts.budget import chart_budget_curve
from bench_nb.metrics.beam import beam_scores, beam_scores_frame
from bench_nb.metrics.budget import budget_curve, budget_curve_frame
from bench_nb.metrics.clustered import accuracy_intervals, accuracy_intervals_frame
from bench_nb.metrics.clustered_paired import (
    clustered_paired_comparisons,
    clustered_paired_comparisons_frame,
    paired_difference_test,
    tell_apart,
    tell_apart_frame,
)
from bench_nb.metrics.gate import non_inferiority
from bench_nb.metrics.paired import paired_comparison, paired_comparisons, paired_comparisons_frame
from bench_nb.metrics.pareto import pareto_frontier, pareto_frontier_frame
from bench_nb.metrics.ranks import rank_intervals
from bench_nb.metrics.repeats import pooled_paired_comparisons, pooled_paired_comparisons_frame
from bench_nb.metrics.signed_rank import clustered_signed_rank
from bench_nb.receipts.gate import gate
from bench_nb.tables.beam import table_beam
from bench_nb.tables.budget import table_budget

NO_LONGER = [
    accuracy_intervals,
    accuracy_intervals_frame,
    beam_scores,
    beam_scores_frame,
    budget_curve,
    budget_curve_frame,
    chart_budget_curve,
    clustered_paired_comparisons,
    clustered_paired_comparisons_frame,
    clustered_signed_rank,
    gate,
    non_inferiority,
    paired_comparison,
    paired_comparisons,
    paired_comparisons_frame,
    paired_difference_test,
    pareto_frontier,
    pareto_frontier_frame,
    pooled_paired_comparisons,
    pooled_paired_comparisons_frame,
    table_beam,
    table_budget,
    tell_apart,
    tell_apart_frame,
]


@pytest.mark.parametrize("fn", NO_LONGER, ids=lambda fn: f"{fn.__module__}.{fn.__name__}")
def test_the_no_op_seed_and_resamples_are_gone(fn: object) -> None:
    params = inspect.signature(fn).parameters  # type: ignore[arg-type]
    assert not {"seed", "resamples", "draws"} & set(params)
    with pytest.raises(TypeError, match="unexpected keyword argument 'seed'"):
        fn(None, seed=1)  # type: ignore[operator]


def test_a_seed_that_changes_the_draws_stays() -> None:
    assert "seed" in inspect.signature(rank_intervals).parameters
