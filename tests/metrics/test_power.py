"""Power and sample size: the t forms against statsmodels' t-test power, the design effect, the fewest haystacks
the paired test can reject with, and the paired power checked by simulating the test itself (issue 27, item 6)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.power import NormalIndPower, TTestIndPower, TTestPower

from bench_nb import minimum_detectable_effect, questions_needed
from bench_nb.metrics.clustered_paired import paired_difference_test
from bench_nb.metrics.power import (
    cluster_design_effect,
    detectable_differences,
    paired_test_multiplier,
)
from clustered_sim import LOCOMO_SIZES, frame


@pytest.mark.parametrize(
    ("n", "p", "alpha", "power", "m", "icc"),
    [
        (1540, 0.75, 0.05, 0.8, 1, 0.0),
        (1540, 0.75, 0.05, 0.8, 154, 0.05),
        (500, 0.5, 0.01, 0.9, 1, 0.0),
        (300, 0.9, 0.1, 0.7, 20, 0.2),
    ],
)
def test_minimum_detectable_effect_equals_statsmodels(
    n: int, p: float, alpha: float, power: float, m: int, icc: float
) -> None:
    # independent samples: a two-sample t on the K = n/m haystack means of each run (2K − 2 df); statsmodels
    # solves the noncentral t exactly, ours is t_{1−α/2} + t_{power}: within 1.5% (1e-4 from 1,000 df)
    deff = 1 + (m - 1) * icc
    k = n // m
    d = TTestIndPower().solve_power(effect_size=None, nobs1=k, alpha=alpha, power=power, ratio=1.0)
    sd_mean = math.sqrt(p * (1 - p) * deff / m)  # of one haystack's mean
    ours = minimum_detectable_effect(n, p, alpha, power, cluster_size=m, icc=icc)
    assert math.isclose(ours, d * sd_mean, rel_tol=1e-4 if k >= 1000 else 0.015)
    # never below the normal approximation, which ignores that the haystacks are few
    normal = NormalIndPower().solve_power(effect_size=None, nobs1=n / deff, alpha=alpha, power=power)
    assert ours >= normal * math.sqrt(p * (1 - p))


@pytest.mark.parametrize(
    ("delta", "p", "m", "icc"), [(0.05, 0.75, 1, 0.0), (0.03, 0.8, 154, 0.02), (0.1, 0.5, 30, 0.1)]
)
def test_questions_needed_inverts_the_mde(delta: float, p: float, m: int, icc: float) -> None:
    deff = cluster_design_effect(m, icc)
    n_eff = NormalIndPower().solve_power(
        effect_size=delta / math.sqrt(p * (1 - p)), nobs1=None, alpha=0.05, power=0.8
    )
    n = questions_needed(delta, p, cluster_size=m, icc=icc)
    assert n >= n_eff * deff - 1  # the normal approximation is a lower bound
    assert minimum_detectable_effect(n, p, cluster_size=m, icc=icc) <= delta
    assert minimum_detectable_effect(n - 1, p, cluster_size=m, icc=icc) > delta


def _t_effect(nobs: int) -> float:
    """statsmodels' effect size a one-sample t-test of nobs detects at 5% with power 0.8 (its root's sign is
    arbitrary)."""
    return float(np.squeeze(TTestPower().solve_power(effect_size=None, nobs=nobs, alpha=0.05, power=0.8)))


def test_paired_design_equals_the_one_sample_t_test_of_differences() -> None:
    p, rho, n = 0.75, 0.6, 1540
    sd = math.sqrt(2 * p * (1 - p) * (1 - rho))
    d = abs(_t_effect(n))  # the one-sample t-test of the n differences, n − 1 df
    assert math.isclose(minimum_detectable_effect(n, p, paired=True, correlation=rho), d * sd, rel_tol=1e-4)
    assert questions_needed(0.03, p, paired=True, correlation=rho) < questions_needed(0.03, p)
    assert math.isclose(  # ρ = 0 gains nothing (n − 1 against 2n − 2 degrees of freedom)
        minimum_detectable_effect(n, p, paired=True), minimum_detectable_effect(n, p), rel_tol=1e-3
    )


def test_design_effect_and_bad_arguments() -> None:
    assert cluster_design_effect(154, 0.05) == pytest.approx(8.65)
    # 10 haystacks of 154 against 1,540 of 1: √deff, and the t multipliers of 18 and 3,078 df
    from bench_nb.metrics.intervals import student_t_quantile as tq

    assert minimum_detectable_effect(1540, 0.75, cluster_size=154, icc=0.05) == pytest.approx(
        minimum_detectable_effect(1540, 0.75)
        * math.sqrt(8.65)
        * (tq(0.975, 18) + tq(0.8, 18))
        / (tq(0.975, 3078) + tq(0.8, 3078))
    )
    with pytest.raises(ValueError, match=r"p \(the accuracy"):
        minimum_detectable_effect(100, 1.2)
    with pytest.raises(ValueError, match="icc must be in"):
        questions_needed(0.05, 0.7, icc=-0.1)
    with pytest.raises(ValueError, match="delta"):
        questions_needed(0, 0.7)
    with pytest.raises(ValueError, match="cluster_size"):
        minimum_detectable_effect(100, 0.7, cluster_size=0)


def test_detectable_differences_from_runs() -> None:
    rng = np.random.default_rng(0)
    n = LOCOMO_SIZES.sum()
    hay = np.repeat(np.arange(10), LOCOMO_SIZES)
    level = rng.normal(0, 0.1, 10)[hay]
    a = (rng.random(n) < 0.7 + level).astype(float)
    b = np.where(rng.random(n) < 0.9, a, 1 - a)
    q = frame({"a": a, "b": b}).with_columns(
        question_type=pl.Series(np.tile(np.where(np.arange(n) % 2 == 0, "x", "y"), 2))
    )
    table = detectable_differences(q, backend="polars")
    assert table["question_type"].to_list() == ["all", "x", "y"]
    row = table.row(0, named=True)
    assert (row["n"], row["clusters"], row["cluster_size"]) == (1540, 10, 154.0)
    assert row["icc"] > 0 and 0.5 < row["correlation"] < 1
    assert row["mde_naive"] < row["mde"]  # clustering costs precision
    assert row["mde_paired"] < row["mde"]  # pairing buys it back
    assert math.isclose(
        row["mde"], minimum_detectable_effect(1540, row["accuracy"], cluster_size=154, icc=row["icc"])
    )


def test_a_paired_difference_is_detectable_from_two_haystacks() -> None:
    # The clustered paired test (a CR2 t) compares 2 haystacks at least; until issue 39 the sign-flip test's
    # 2^K patterns allowed no p below 2/2^K, so nothing was detectable over 5 haystacks or fewer.
    rng = np.random.default_rng(1)
    for k in (1, 2, 4, 6):
        sizes = np.full(k, 40)
        hay = np.repeat(np.arange(k), sizes)
        a = (rng.random(len(hay)) < 0.6 + rng.normal(0, 0.1, k)[hay]).astype(float)
        b = np.where(rng.random(len(hay)) < 0.8, a, 1 - a)
        q = frame({"a": a, "b": b}, sizes, question_type="x")
        row = detectable_differences(q, backend="polars").row(0, named=True)
        assert row["clusters"] == k
        assert math.isnan(row["mde_paired"]) == (k == 1)


def test_planning_never_goes_below_two_haystacks_and_the_planned_size_rejects() -> None:
    for delta, m in ((0.5, 20), (0.3, 40), (0.2, 154)):
        n = questions_needed(delta, 0.7, cluster_size=m, icc=0.05, paired=True)
        assert n >= 2 * m
        assert minimum_detectable_effect(n, 0.7, cluster_size=m, icc=0.05, paired=True) <= delta
        assert minimum_detectable_effect(n - 1, 0.7, cluster_size=m, icc=0.05, paired=True) > delta
    # one question per haystack, sd of a difference √(2·0.25·0.1) = 0.224: c_3 · 0.224/√3 = 0.73 ≤ 0.9 < c_2 · 0.158
    assert questions_needed(0.9, 0.5, paired=True, correlation=0.9) == 3
    assert math.isnan(minimum_detectable_effect(20, 0.7, cluster_size=20, icc=0.05, paired=True))  # 1
    assert not math.isnan(minimum_detectable_effect(40, 0.7, cluster_size=20, icc=0.05, paired=True))
    assert math.isnan(minimum_detectable_effect(20, 0.7, cluster_size=20, icc=0.05))  # one haystack each


@pytest.mark.parametrize("k", [2, 3, 4, 8, 12, 30, 100])
def test_the_paired_multiplier_is_statsmodels_one_sample_t_power(k: int) -> None:
    """On K equal haystacks the CR2 t is the one-sample t of the haystack means (Bell-McCaffrey df K − 1),
    so its multiplier is the effect statsmodels' TTestPower solves for, times √K (noncentral t; the old
    t-quantile sum was 14% short at K = 2)."""
    assert paired_test_multiplier(k) == pytest.approx(abs(_t_effect(k)) * math.sqrt(k), rel=1e-5)
    assert paired_test_multiplier(1) == math.inf


def test_the_paired_multiplier_is_scipys_root() -> None:
    """The bisection (here so that a report's kernel does not import scipy.optimize for one root) finds the
    root scipy.optimize.brentq finds, to 1e-11, at every K up to 60 and larger ones, at several levels and
    powers."""
    from scipy import optimize, special, stats

    for k in [*range(2, 61), 100, 154, 500, 1999]:
        for alpha, power in ((0.05, 0.8), (0.01, 0.9), (0.1, 0.5), (0.2, 0.95)):
            crit = stats.t.ppf(1 - alpha / 2, k - 1)

            def short(c: float, df: int = k - 1, crit: float = crit, power: float = power) -> float:
                far = float(special.nctdtr(df, c, -crit))  # nan where it underflows: 0
                return (0.0 if math.isnan(far) else far) + 1 - float(special.nctdtr(df, c, crit)) - power

            high = 1.0
            while short(high) < 0:
                high *= 1.25
            root = optimize.brentq(short, 0.0, high, xtol=1e-13, rtol=1e-13)
            assert paired_test_multiplier(k, alpha, power) == pytest.approx(root, rel=1e-11, abs=1e-12)


def _beta(rng: np.random.Generator, mean: float, icc: float, k: int) -> np.ndarray:
    s = 1 / icc - 1
    return rng.beta(mean * s, (1 - mean) * s, k)


@pytest.mark.parametrize(("k", "m", "p", "icc"), [(6, 20, 0.6, 0.1), (8, 30, 0.5, 0.1), (10, 150, 0.7, 0.05)])
def test_paired_power_holds_when_the_clustered_test_is_simulated(
    k: int, m: int, p: float, icc: float
) -> None:
    """Two runs on the same k haystacks of m questions, each with beta-binomial haystack effects (ICC icc, the
    ICC of the differences too), A better by the MDE: the clustered paired test tell_apart runs (the CR2
    t) finds it in about 80% of 800 seeded benchmarks (81%, 78%, 84%; binomial noise ±1.4
    points). The normal formula's MDE gave 41%, 64% and 70% here: optimistic by 10-39 points."""
    mde = minimum_detectable_effect(k * m, p, cluster_size=m, icc=icc, paired=True)
    rng = np.random.default_rng(27)
    counts = np.full(k, float(m))
    found = 0
    for _ in range(800):
        a = rng.binomial(m, _beta(rng, p + mde / 2, icc, k))
        b = rng.binomial(m, _beta(rng, p - mde / 2, icc, k))
        found += paired_difference_test((a - b).astype(float), counts).p < 0.05
    assert found / 800 >= 0.73


def _keyed_bits(table: pl.DataFrame) -> dict[tuple[frozenset[str], str], tuple[object, ...]]:
    """Each row's numbers, to the bit (floats as their 8 bytes), keyed by its runs (as a set: their order is
    the frame's order of appearance) and question type."""
    out = {}
    for r in table.iter_rows(named=True):
        key = (frozenset(r["runs"].split(", ")), r["question_type"])
        out[key] = tuple(
            float(v).hex() if isinstance(v, float) else v
            for c, v in r.items()
            if c not in ("question_set", "runs", "question_type")
        )
    return out


def test_detectable_differences_is_bit_identical_under_any_row_order() -> None:
    """Issue 39, item 8: the per-run means, ICCs and correlations were summed in the rows' order (polars'
    mean, numpy's bincount and corrcoef, the runs in order of appearance), so a shuffle moved the last bits."""
    rng = np.random.default_rng(39)
    sizes = np.array([60, 12, 7, 30, 25, 9, 44, 18])
    n = int(sizes.sum())
    hay = np.repeat(np.arange(len(sizes)), sizes)
    level = rng.normal(0, 0.6, len(sizes))[hay]
    runs = {
        name: (rng.random(n) < 1 / (1 + np.exp(-(0.8 + lift + level + rng.normal(0, 0.3, n))))).astype(float)
        for name, lift in (("a", 0.0), ("b", 0.3), ("c", -0.2), ("d", 0.1))
    }
    types = np.array(["single-hop", "multi-hop", "temporal"])[rng.integers(0, 3, n)]
    q = frame(runs, sizes).with_columns(
        question_type=pl.Series(np.tile(types, len(runs))), score=pl.Series(rng.integers(0, 5, n * 4) / 4)
    )
    want = _keyed_bits(detectable_differences(q, backend="polars"))
    for seed in range(6):
        shuffled = q.sample(fraction=1.0, shuffle=True, seed=seed)
        assert _keyed_bits(detectable_differences(shuffled, backend="polars")) == want
