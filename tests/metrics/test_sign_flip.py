"""The haystack sign-flip test of paired differences, for few haystacks: exact against brute force and
scipy's permutation test, its inverted interval against a grid inversion, seeded simulations of its type-I
error at 4 to 30 haystacks, and interval and verdict agreeing on every row of generated comparisons."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from scipy import stats

from bench_nb.metrics.clustered_paired import (
    clustered_paired_comparisons,
    clustered_paired_test,
    paired_difference_test,
)
from bench_nb.metrics.sign_flip import (
    FEW_CLUSTERS,
    fewest_clusters,
    sign_flip_mean_test,
    sign_flip_p,
    smallest_p,
)
from bench_nb.metrics.signed_rank import clustered_signed_rank
from clustered_sim import LOCOMO_SIZES, frame, graded_pairs, paired_null


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
            p, _, _ = sign_flip_mean_test(d, n)
            assert p == pytest.approx(_brute_p(d, n), abs=1e-12)
            assert sign_flip_p(d) == pytest.approx(p, abs=1e-12)


def test_exact_p_equals_scipy_permutation_test_on_the_cluster_sums() -> None:
    rng = np.random.default_rng(22)
    for k in (4, 6, 10, 12):
        d = np.round(rng.normal(0.3, 1.0, k) * rng.integers(5, 30, k))
        ref = stats.permutation_test(
            (d,), np.sum, permutation_type="samples", alternative="two-sided", n_resamples=np.inf
        )
        assert sign_flip_p(d) == pytest.approx(ref.pvalue, rel=1e-9)


def test_the_interval_is_the_set_of_differences_the_test_does_not_reject() -> None:
    rng = np.random.default_rng(23)
    for k in (6, 7, 8):
        n = rng.integers(4, 25, k).astype(float)
        d = np.round(rng.normal(0.15, 0.3, k) * n)
        p, low, high = sign_flip_mean_test(d, n)
        grid = np.linspace(-1, 1, 801)
        kept = [delta for delta in grid if _brute_p(d, n, delta) >= 0.05]
        assert low <= d.sum() / n.sum() <= high and p == pytest.approx(_brute_p(d, n), abs=1e-12)
        assert min(kept) == pytest.approx(low, abs=2.5e-3) and max(kept) == pytest.approx(high, abs=2.5e-3)
        assert _brute_p(d, n, low) >= 0.05 and _brute_p(d, n, high) >= 0.05  # closed at both ends
        assert _brute_p(d, n, low - 1e-6) < 0.05 and _brute_p(d, n, high + 1e-6) < 0.05


def _listed(d: np.ndarray, n: np.ndarray, alpha: float = 0.05) -> tuple[float, float, float]:
    """p and the inverted interval from the 2^K patterns listed one by one (the definition, vectorised)."""
    k = len(d)
    keep = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(float)
    d_plus, n_plus = keep @ d, keep @ n
    d_minus, n_minus = d.sum() - d_plus, n.sum() - n_plus
    ends = (n_plus == 0) | (n_minus == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        m_plus, m_minus = d_plus / n_plus, d_minus / n_minus
    low = np.where(ends, -np.inf, np.fmin(m_plus, m_minus))
    high = np.where(ends, np.inf, np.fmax(m_plus, m_minus))
    c = math.ceil(alpha * 2**k)
    p = float(((low <= 1e-15) & (high >= -1e-15)).mean())
    return p, float(np.partition(low, c - 1)[c - 1]), float(-np.partition(-high, c - 1)[c - 1])


def test_beyond_fourteen_haystacks_the_test_is_still_exact() -> None:
    # Until session 9, 15-29 haystacks drew 2,000 patterns; now every pattern counts, without listing them.
    rng = np.random.default_rng(24)
    for k in (15, 16, 18):
        for shift in (0.0, 0.1, 0.3):
            n = rng.integers(3, 40, k).astype(float)
            d = np.round(rng.normal(shift, 0.3, k) * n * 2) / 2  # sums of 0/±0.5/±1 differences
            p, low, high = sign_flip_mean_test(d, n)
            want = _listed(d, n)
            assert (p, low, high) == pytest.approx(want, abs=1e-12)
            assert float(sign_flip_p(d)) == pytest.approx(p, abs=1e-12)
            assert (low > 0 or high < 0) == (p < 0.05)


@pytest.mark.parametrize("k", [15, 20, 25, 29])
def test_p_and_interval_do_not_move_with_the_seed(k: int) -> None:
    # The report shows p and the interval's ends to 0.001; with 2,000 drawn patterns they moved by ~0.01
    # across seeds. The seed is now deprecated and changes nothing: one answer (the 20 seeds were 20 answers).
    rng = np.random.default_rng(300 + k)
    sizes = rng.integers(5, 60, k)
    ya, yb = paired_null(rng, sizes)
    hay = np.repeat(np.arange(k), sizes)
    d = np.bincount(hay, weights=ya - yb, minlength=k) + np.round(0.12 * sizes)  # a real difference
    plain = paired_difference_test(d, sizes.astype(float))
    with pytest.warns(DeprecationWarning, match=r"paired_difference_test\(seed="):
        seeded = paired_difference_test(d, sizes.astype(float), seed=7)
    assert seeded == plain and not math.isnan(plain.p)
    assert (plain.low > 0 or plain.high < 0) == (plain.p < 0.05)


@pytest.mark.parametrize("k", [15, 20, 25, 29])
def test_false_alarms_at_most_alpha_from_fifteen_to_twenty_nine_haystacks(k: int) -> None:
    # Seeded clustered nulls (tests/clustered_sim.py: two equally good providers, a per-run effect per
    # conversation, LoCoMo's sizes cycled); the exact test's p, and its interval, at alpha 0.05.
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
    for i in range(0, trials, 50):  # the interval rejects exactly where p does
        test = paired_difference_test(sums[i], sizes.astype(float))
        assert test.p == p[i] and (test.low > 0 or test.high < 0) == (p[i] < 0.05)


def _sizes(k: int) -> np.ndarray:
    """k conversation sizes in LoCoMo's range (its own 10 sizes, repeated)."""
    return np.resize(LOCOMO_SIZES, k)


@pytest.mark.parametrize("k", [4, 6, 10, 20, 30])
def test_type_one_error_under_clustered_nulls(k: int) -> None:
    rng = np.random.default_rng(100 + k)
    sizes = _sizes(k)
    hay = np.repeat(np.arange(k), sizes)
    counts = sizes.astype(float)
    trials, rejected = 1500, 0
    for _ in range(trials):
        ya, yb = paired_null(rng, sizes)
        test = paired_difference_test(np.bincount(hay, weights=ya - yb, minlength=k), counts)
        rejected += test.p < 0.05
        if k <= 5:
            assert test.p >= smallest_p(k) and math.isnan(test.low)
    rate = rejected / trials
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / trials)  # 0.061
    if k <= 5:
        assert rate == 0  # 2^K ≤ 32 sign patterns: no p below 2/32 > 0.05


def test_the_cluster_robust_t_used_to_claim_what_four_haystacks_cannot() -> None:
    # Every haystack's difference is the same: the standard error is 0. The t-test said p = 0.
    d, n = np.array([3.0, 2.0, 4.0, 4.0]), np.array([3.0, 2.0, 4.0, 4.0])
    t, df, p = clustered_paired_test(d, n)
    assert math.isinf(t) and df == 3 and p == 0.125  # now the sign-flip p: 2 of 16 patterns
    test = paired_difference_test(d, n)
    assert test.test == "sign-flip exact" and test.p == 0.125 and math.isnan(test.low)
    six = paired_difference_test(np.full(6, 5.0), np.full(6, 5.0))
    assert six.p == 2 / 64 and (six.low, six.high) == (1.0, 1.0)  # six agreeing haystacks can show it
    many = paired_difference_test(np.full(40, 2.0), np.full(40, 4.0))
    assert many.test == "cluster-robust t" and many.p == 2.0**-39 and (many.low, many.high) == (0.5, 0.5)
    assert smallest_p(5000) > 0


def test_from_thirty_haystacks_the_interval_is_statsmodels_cluster_robust_t_interval() -> None:
    rng = np.random.default_rng(25)
    sizes = _sizes(FEW_CLUSTERS)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    ya, yb = paired_null(rng, sizes)
    y = ya - yb
    fit = sm.OLS(y, np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    test = paired_difference_test(np.bincount(groups, weights=y), sizes.astype(float))
    low, high = fit.conf_int(0.05)[0]
    assert test.test == "cluster-robust t" and test.df == len(sizes) - 1
    assert test.p == pytest.approx(fit.pvalues[0], rel=1e-9)
    assert (test.low, test.high) == pytest.approx((low, high), rel=1e-9)


def test_interval_and_verdict_agree_on_every_row_of_generated_comparisons() -> None:
    rng = np.random.default_rng(26)
    rows, told, no_interval = 0, 0, 0
    for k in (2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 15, 20, 29, 30, 45):
        for shift in (0.0, 0.08, 0.2, 0.5):
            sizes = rng.integers(2, 25, k)
            n = int(sizes.sum())
            hay = np.repeat(np.arange(k), sizes)
            level = rng.normal(0, 0.1, k)[hay]
            a = (rng.random(n) < 0.6 + level).astype(float)
            b = np.where(rng.random(n) < shift, 0.0, a) if shift else (rng.random(n) < 0.6 + level)
            same = a.copy()
            types = np.where(rng.random(n) < 0.5, "t1", "t2")
            q = frame({"a": a, "b": np.asarray(b, dtype=float), "c": same}, sizes)
            q = q.with_columns(question_type=pl.Series(np.tile(types, 3)))
            for by in (None, "question_type"):
                table = clustered_paired_comparisons(q, by=by, backend="polars")
                for r in table.iter_rows(named=True):
                    rows += 1
                    p, low, high = r["p_value"], r["ci_low"], r["ci_high"]
                    if r["clusters"] < 2:
                        assert r["test"] == "none" and math.isnan(p) and r["verdict"] == "cannot tell"
                        continue
                    assert p > 0
                    if math.isnan(low):  # too few haystacks for any interval: the test cannot reject either
                        assert r["clusters"] <= 5 and p >= smallest_p(r["clusters"]) >= 0.05
                        assert r["verdict"] == "cannot tell"
                        no_interval += 1
                        continue
                    assert low <= r["difference"] <= high
                    excludes_zero = low > 0 or high < 0
                    assert excludes_zero == (p < 0.05) == (r["verdict"] != "cannot tell")
                    if r["verdict"] != "cannot tell":
                        told += 1
                        assert (r["verdict"] == "A higher") == (low > 0)
    assert rows == 540 and told >= 100 and no_interval >= 50  # both verdicts, and rows with no interval


def test_one_haystack_and_identical_runs_cannot_tell() -> None:
    sizes = np.array([30])
    a = (np.random.default_rng(27).random(30) < 0.7).astype(float)
    row = clustered_paired_comparisons(frame({"a": a, "b": 1 - a}, sizes), backend="polars").row(
        0, named=True
    )
    assert row["test"] == "none" and math.isnan(row["p_value"]) and row["verdict"] == "cannot tell"
    same = clustered_paired_comparisons(frame({"a": a, "b": a}, sizes=np.array([10, 20])), backend="polars")
    r = same.row(0, named=True)
    assert r["p_value"] == 1.0 and r["verdict"] == "cannot tell" and math.isnan(r["ci_low"])


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


def test_fewest_haystacks_that_can_reject() -> None:
    for alpha, k in ((0.05, 6), (0.01, 8), (0.2, 4)):
        assert fewest_clusters(alpha) == k
        assert smallest_p(k - 1) >= alpha > smallest_p(k)
