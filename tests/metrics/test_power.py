"""Power and sample size: the closed forms against statsmodels' NormalIndPower, and the design effect."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.power import NormalIndPower

from bench_nb import minimum_detectable_effect, questions_needed
from bench_nb.metrics.power import cluster_design_effect, detectable_differences
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
    deff = 1 + (m - 1) * icc
    d = NormalIndPower().solve_power(effect_size=None, nobs1=n / deff, alpha=alpha, power=power, ratio=1.0)
    ours = minimum_detectable_effect(n, p, alpha, power, cluster_size=m, icc=icc)
    # statsmodels also counts the far rejection tail (a ~1e-5 share of the power): agreement to 1e-4
    assert math.isclose(ours, d * math.sqrt(p * (1 - p)), rel_tol=1e-4)


@pytest.mark.parametrize(
    ("delta", "p", "m", "icc"), [(0.05, 0.75, 1, 0.0), (0.03, 0.8, 154, 0.02), (0.1, 0.5, 30, 0.1)]
)
def test_questions_needed_equals_statsmodels_and_inverts_the_mde(
    delta: float, p: float, m: int, icc: float
) -> None:
    deff = cluster_design_effect(m, icc)
    n_eff = NormalIndPower().solve_power(
        effect_size=delta / math.sqrt(p * (1 - p)), nobs1=None, alpha=0.05, power=0.8
    )
    n = questions_needed(delta, p, cluster_size=m, icc=icc)
    assert abs(n - n_eff * deff) <= 1 + 1e-3 * n
    assert minimum_detectable_effect(n, p, cluster_size=m, icc=icc) <= delta
    assert minimum_detectable_effect(n - 1, p, cluster_size=m, icc=icc) > delta


def test_paired_design_equals_the_one_sample_test_of_differences() -> None:
    p, rho, n = 0.75, 0.6, 1540
    sd = math.sqrt(2 * p * (1 - p) * (1 - rho))
    d = NormalIndPower().solve_power(
        effect_size=None, nobs1=n, alpha=0.05, power=0.8, ratio=0.0
    )  # one sample
    assert math.isclose(minimum_detectable_effect(n, p, paired=True, correlation=rho), d * sd, rel_tol=1e-4)
    # the closed form: (z_.975 + z_.8) · sd / √n
    assert math.isclose(
        minimum_detectable_effect(n, p, paired=True, correlation=rho),
        (1.959964 + 0.841621) * sd / math.sqrt(n),
        rel_tol=1e-5,
    )
    assert questions_needed(0.03, p, paired=True, correlation=rho) < questions_needed(0.03, p)
    assert minimum_detectable_effect(n, p, paired=True) == minimum_detectable_effect(
        n, p
    )  # ρ = 0 gains nothing


def test_design_effect_and_bad_arguments() -> None:
    assert cluster_design_effect(154, 0.05) == pytest.approx(8.65)
    assert minimum_detectable_effect(1540, 0.75, cluster_size=154, icc=0.05) == pytest.approx(
        minimum_detectable_effect(1540, 0.75) * math.sqrt(8.65)
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


def test_no_paired_difference_is_detectable_over_five_haystacks_or_fewer() -> None:
    # The paired test's 2^K sign patterns allow no p below 2/2^K: 0.0625 with 5 haystacks, 0.03 with 6.
    rng = np.random.default_rng(1)
    for k, detectable in ((4, False), (5, False), (6, True)):
        sizes = np.full(k, 40)
        hay = np.repeat(np.arange(k), sizes)
        a = (rng.random(len(hay)) < 0.6 + rng.normal(0, 0.1, k)[hay]).astype(float)
        b = np.where(rng.random(len(hay)) < 0.8, a, 1 - a)
        q = frame({"a": a, "b": b}, sizes, question_type="x")
        row = detectable_differences(q, backend="polars").row(0, named=True)
        assert row["clusters"] == k and not math.isnan(row["mde"])
        assert math.isnan(row["mde_paired"]) != detectable
