"""Issue 27's "Done when" for accuracy intervals and the clustered paired test, over the designs of the coverage
sweep (tests/clustered_sim.py: 5/10/20 haystacks; equal, moderately and very unequal sizes; one haystack holding
50% or 65% of the questions; ICC 0.1 and 0.3). The full sweep with more benchmarks per cell, and its table in
docs/statistics.md, is bench/coverage.py; this is a smaller seeded version of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench_nb.metrics.clustered import ClusterSums, clustered_interval
from bench_nb.metrics.sign_flip import sign_flip_p
from clustered_sim import SHAPES, cluster_rates, design_sizes, paired_null_counts

pytestmark = pytest.mark.slow
REPS = 400


def _mc(p: float) -> float:
    """Two Monte Carlo standard errors of a rate near ``p`` over ``REPS`` benchmarks."""
    return 2 * math.sqrt(p * (1 - p) / REPS)


@pytest.mark.parametrize("clusters", [5, 10, 20])
@pytest.mark.parametrize("shape", SHAPES)
def test_accuracy_intervals_cover_92_percent_or_warn(clusters: int, shape: str) -> None:
    # Accuracy ≤ 0.9: covers at least 92% (less two Monte Carlo SEs), or at least 85% of the results carry
    # the warning (which names the effective haystacks).
    sizes = design_sizes(clusters, shape)
    counts = sizes.astype(float)
    for icc in (0.1, 0.3):
        for p in (0.5, 0.7, 0.9):
            rng = np.random.default_rng([clusters, SHAPES.index(shape), int(icc * 10), int(p * 10)])
            sums = rng.binomial(sizes, cluster_rates(rng, p, icc, (REPS, clusters))).astype(float)
            covered = warned = 0
            for s in sums:
                n, total = counts.sum(), s.sum()
                cs = ClusterSums(
                    np.arange(clusters).astype(object), s, counts, n * (total / n) * (1 - total / n)
                )
                got = clustered_interval(cs)
                covered += got.low <= p <= got.high
                if got.warning:
                    warned += 1
                    assert f"effective haystacks of {clusters}" in got.warning
            assert covered / REPS >= 0.92 - _mc(0.92) or warned / REPS >= 0.85, (icc, p, covered, warned)


@pytest.mark.parametrize("clusters", [10, 20])
@pytest.mark.parametrize("shape", SHAPES)
def test_the_clustered_paired_test_holds_its_level(clusters: int, shape: str) -> None:
    sizes = design_sizes(clusters, shape)
    for icc in (0.1, 0.3):
        rng = np.random.default_rng([clusters, SHAPES.index(shape), int(icc * 10)])
        a_only, b_only, _ = paired_null_counts(rng, 0.7, icc, sizes, REPS)
        assert (sign_flip_p(a_only - b_only) < 0.05).mean() <= 0.05 + _mc(0.05)
