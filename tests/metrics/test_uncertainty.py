"""``ClusterBootstrap`` computes each clustered statistic once for a report; its numbers are those of the
functions of the same names (``bench_nb.metrics.uncertainty``'s contract), whatever it shares between them."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from bench_nb.metrics.clustered import accuracy_intervals_frame
from bench_nb.metrics.clustered_paired import clustered_paired_comparisons_frame
from bench_nb.metrics.ranks import rank_intervals_frame
from bench_nb.metrics.uncertainty import ClusterBootstrap
from clustered_sim import LOCOMO_SIZES, frame


def _questions(sizes: np.ndarray, seed: int) -> pl.DataFrame:
    # Three runs on one question set, types spread over the haystacks, in an order where the runs first
    # appear in a different order for some types than overall.
    rng = np.random.default_rng(seed)
    n = int(sizes.sum())
    q = frame({run: rng.random(n) < p for run, p in (("b", 0.62), ("a", 0.7), ("c", 0.55))}, sizes)
    types = np.array(["single-hop", "multi-hop", "temporal"])[rng.integers(0, 3, n)]
    q = q.with_columns(question_type=pl.Series(np.tile(types, 3)))
    return q.sample(fraction=1.0, shuffle=True, seed=seed)


@pytest.mark.parametrize(
    ("sizes", "seed"), [(LOCOMO_SIZES, 1), (np.array([12, 13, 12, 13]), 2), (np.full(40, 3), 3)]
)
def test_cluster_bootstrap_gives_the_numbers_of_the_functions_of_the_same_names(
    sizes: np.ndarray, seed: int
) -> None:
    q = _questions(sizes, seed)
    boot = ClusterBootstrap(q, seed=7)
    for by in (None, "question_type"):
        for method in ("clustered", "wilson"):
            assert_frame_equal(boot.accuracy_intervals(method, by), accuracy_intervals_frame(q, method, by))
        assert_frame_equal(boot.rank_intervals(by), rank_intervals_frame(q, 7, by=by))
        assert_frame_equal(
            boot.clustered_paired_comparisons(by), clustered_paired_comparisons_frame(q, by=by)
        )
