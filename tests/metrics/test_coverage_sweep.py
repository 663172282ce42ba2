"""Issue 27's "Done when" for accuracy intervals and the clustered paired test, over the designs of the coverage
sweep (tests/clustered_sim.py: 5/10/20 haystacks; equal, moderately and very unequal sizes; one haystack holding
50% or 65% of the questions; ICC 0.1 and 0.3). The full sweep with more benchmarks per cell, and its table in
docs/statistics.md, is bench/coverage.py; this is a smaller seeded version of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench_nb import accuracy_intervals
from bench_nb.metrics.clustered import ClusterSums, clustered_interval
from bench_nb.metrics.clustered_paired import paired_difference_test
from clustered_sim import (
    LOCOMO_SIZES,
    SHAPES,
    Design,
    audit_designs,
    cluster_rates,
    design_sizes,
    frame,
    paired_null_counts,
)

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
    """The CR2 t on Bell-McCaffrey df is not exact (the sign-flip test it replaced in issue 39 was, below 30
    haystacks, and 46-58% wrong above): over 4,000 benchmarks a cell it rejects 3.7-5.9% at 10 haystacks, the
    most with very unequal sizes. Asserted: issue 39's 7% on 1,000 seeded benchmarks a cell."""
    sizes = design_sizes(clusters, shape)
    for icc in (0.1, 0.3):
        rng = np.random.default_rng([clusters, SHAPES.index(shape), int(icc * 10)])
        a_only, b_only, _ = paired_null_counts(rng, 0.7, icc, sizes, 1000)
        counts = sizes.astype(float)
        p = np.array([paired_difference_test(d, counts).p for d in a_only - b_only])
        assert (p < 0.05).mean() <= 0.07


def _audit(design: Design, reps: int) -> tuple[float, float, float]:
    """Coverage, the share of the non-covering results that warn, and the share of all results that warn."""
    rng = design.rng()
    counts = design.sizes.astype(float)
    covered = np.zeros(reps, dtype=bool)
    warned = np.zeros(reps, dtype=bool)
    for i, s in enumerate(design.sums(rng, reps)):
        n, total = counts.sum(), s.sum()
        cs = ClusterSums(np.arange(len(s)).astype(object), s, counts, n * (total / n) * (1 - total / n))
        got = clustered_interval(cs)
        covered[i] = got.low <= design.p <= got.high
        warned[i] = got.warning is not None
    missed = ~covered
    return float(covered.mean()), float(warned[missed].mean()) if missed.any() else 1.0, float(warned.mean())


AUDIT_REPS = 1000


# A bad dominant haystack (one holding 60% of the questions at 60-75% accuracy) drags the accuracy down with
# nothing in the data to tell it from a design at that accuracy: the interval warns on every result resting on
# fewer than 3.5 effective haystacks (clustered.FEW_EFFECTIVE_CLUSTERS), which those designs are.
@pytest.mark.parametrize("design", audit_designs(), ids=Design.label)
def test_accuracy_intervals_on_the_audit_designs_cover_92_percent_or_warn_where_they_miss(
    design: Design,
) -> None:
    # Issue 39: 4-8 LoCoMo-sized haystacks, accuracy 0.9-0.98, ICC 0.3-0.6, one haystack holding 60%,
    # logit-normal haystack effects; 1,000 benchmarks each. A design under 92% warns on at least 90% of the
    # results that miss; one that covers at least 92% warns on fewer than 20% of its results. A design within
    # two Monte Carlo SEs of 92% (1.7 points) cannot be told from either by simulation (one measured 91.8% at
    # one seed and 92.8% at another): there the warning still catches at least 80% of the misses.
    coverage, caught, warned = _audit(design, AUDIT_REPS)
    band = 2 * math.sqrt(0.92 * 0.08 / AUDIT_REPS)
    if coverage < 0.92 - band:
        assert caught >= 0.9, (coverage, caught, warned)
    elif coverage >= 0.92 + band:
        assert warned < 0.2, (coverage, caught, warned)
    else:
        assert caught >= 0.8, (coverage, caught, warned)


def test_the_audit_warning_names_how_low_coverage_may_be() -> None:
    # 8 haystacks of LoCoMo's sizes, every answer right but 3 in one haystack: no bad haystack among those seen
    sizes = LOCOMO_SIZES[:8]
    y = np.ones(sizes.sum(), dtype=bool)
    y[:3] = False
    row = accuracy_intervals(frame({"r": y}, sizes), backend="polars").row(0, named=True)
    assert row["warning"].startswith("may cover less than 95% (down to 36% in simulations): ")
    assert (
        "one more haystack of 153 questions at 50% would move accuracy to 0.942, below the interval"
        in (row["warning"])
    )
    assert row["warning"].endswith("; in 7.6 effective haystacks of 8") and row["ci_low"] > 0.942
