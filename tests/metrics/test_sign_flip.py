"""The haystack sign-flip p (the clustered signed-rank test's below 30 haystacks): exact against brute force
and scipy's permutation test, and seeded simulations of its type-I error. The paired test of the mean
difference is the CR2 t since issue 39: tests/metrics/test_paired_test.py."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from bench_nb.metrics.sign_flip import (
    sign_flip_p,
    smallest_p,
)
from bench_nb.metrics.signed_rank import clustered_signed_rank
from clustered_sim import LOCOMO_SIZES, graded_pairs, paired_null


def _brute_p(d: np.ndarray, n: np.ndarray, delta: float = 0.0) -> float:
    """The definition: the share of the 2^K sign vectors s with |Σ sₖ(Dₖ − δnₖ)| ≥ |Σ (Dₖ − δnₖ)|."""
    e = d - delta * n
    signs = np.array(list(itertools.product((1, -1), repeat=len(e))), dtype=float)
    return float((np.abs(signs @ e) >= abs(e.sum()) - 1e-12).mean())


def test_exact_p_is_the_brute_force_count_over_every_sign_vector() -> None:
    rng = np.random.default_rng(21)
    for k in (2, 3, 5, 7, 9):
        for _ in range(10):
            n = rng.integers(3, 40, k).astype(float)
            d = np.round(rng.normal(0.1, 0.25, k) * n)  # sums of 0/±1 differences
            assert sign_flip_p(d) == pytest.approx(_brute_p(d, n), abs=1e-12)


def test_exact_p_equals_scipy_permutation_test_on_the_cluster_sums() -> None:
    rng = np.random.default_rng(22)
    for k in (4, 6, 10, 12):
        d = np.round(rng.normal(0.3, 1.0, k) * rng.integers(5, 30, k))
        ref = stats.permutation_test(
            (d,), np.sum, permutation_type="samples", alternative="two-sided", n_resamples=np.inf
        )
        assert sign_flip_p(d) == pytest.approx(ref.pvalue, rel=1e-9)


def _listed(d: np.ndarray) -> float:
    """p from the 2^K patterns listed one by one (the definition, vectorised)."""
    k = len(d)
    keep = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(float)
    plus = keep @ d
    return float((plus * (d.sum() - plus) <= 1e-12 * np.abs(d).sum()).mean())


def test_beyond_fourteen_haystacks_the_p_is_still_exact() -> None:
    # Until session 9, 15-29 haystacks drew 2,000 patterns; now every pattern counts, without listing them.
    rng = np.random.default_rng(24)
    for k in (15, 16, 18):
        for shift in (0.0, 0.1, 0.3):
            n = rng.integers(3, 40, k).astype(float)
            d = np.round(rng.normal(shift, 0.3, k) * n * 2) / 2  # sums of 0/±0.5/±1 differences
            assert float(sign_flip_p(d)) == pytest.approx(_listed(d), abs=1e-12)


@pytest.mark.parametrize("k", [15, 20, 25, 29])
def test_false_alarms_at_most_alpha_from_fifteen_to_twenty_nine_haystacks(k: int) -> None:
    # Seeded clustered nulls (tests/clustered_sim.py: two equally good providers, a per-run effect per
    # conversation, LoCoMo's sizes cycled); the exact p at alpha 0.05.
    rng = np.random.default_rng(400 + k)
    sizes = np.resize(LOCOMO_SIZES, k) // 4  # 20-50 questions a haystack
    hay = np.repeat(np.arange(k), sizes)
    trials = 1000
    sums = np.empty((trials, k))
    for i in range(trials):
        ya, yb = paired_null(rng, sizes)
        sums[i] = np.bincount(hay, weights=ya - yb, minlength=k)
    p = sign_flip_p(sums)
    assert (p >= smallest_p(k)).all()
    assert (p < 0.05).mean() <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / trials)


def _sizes(k: int) -> np.ndarray:
    """k conversation sizes in LoCoMo's range (its own 10 sizes, repeated)."""
    return np.resize(LOCOMO_SIZES, k)


def test_the_signed_rank_test_uses_sign_flips_below_thirty_haystacks() -> None:
    # Four haystacks whose signed-rank scores all agree and are equal: z = 2, the normal p 0.046.
    diff = np.array([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5])
    z, p = clustered_signed_rank(diff, np.repeat(np.arange(4), 2))
    assert float(z) == pytest.approx(2.0) and 2 * stats.norm.sf(2.0) < 0.05
    assert float(p) == 0.125
    # Its p is the sign-flip p of the haystacks' scores Tᵢ (brute force over the 2^K sign vectors).
    rng = np.random.default_rng(28)
    codes = np.repeat(np.arange(7), rng.integers(2, 6, 7))
    d = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], len(codes), p=[0.15, 0.2, 0.2, 0.25, 0.2])
    z, p = clustered_signed_rank(d, codes)
    z0, p0 = clustered_signed_rank(d[None, :].repeat(3, axis=0), codes)  # vectorised: the same
    assert np.allclose(z0, z) and np.allclose(p0, p)
    scores = _signed_rank_scores(d, codes)
    brute = np.mean(
        [
            abs((np.array(s) * scores).sum()) >= abs(scores.sum()) - 1e-12
            for s in itertools.product((1, -1), repeat=7)
        ]
    )
    assert float(p) == pytest.approx(brute, abs=1e-12)


def _signed_rank_scores(d: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Datta & Satten's Tᵢ from their definition (docs/statistics.md), loop by loop."""
    k = int(codes.max()) + 1
    a = np.abs(d)

    def f(c: int, x: float) -> float:
        own = a[codes == c]
        return float(((own < x).sum() + (own <= x).sum()) / (2 * len(own)))

    out = np.zeros(k)
    for i in range(k):
        members = np.flatnonzero(codes == i)
        for j in members:
            rank = 1 + sum(f(c, a[j]) for c in range(k) if c != i)
            out[i] += np.sign(d[j]) * rank / len(members)
    return out


@pytest.mark.parametrize("k", [4, 6, 10])
def test_signed_rank_type_one_error_with_few_haystacks(k: int) -> None:
    rng = np.random.default_rng(200 + k)
    sizes = _sizes(k)
    a, b = graded_pairs(rng, 1000, sizes)
    _, p = clustered_signed_rank(a - b, np.repeat(np.arange(k), sizes))
    assert (p < 0.05).mean() <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 1000)
    assert (p >= smallest_p(k)).all()
