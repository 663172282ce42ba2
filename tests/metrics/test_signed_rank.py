"""The clustered signed-rank test (Datta & Satten 2008): its type I error under clustering, where the
independent Wilcoxon test fails, its reduction to Wilcoxon's test, and its power (seeded simulations shaped
like LoCoMo: 10 conversations of 81-199 questions, graded 0 / 0.5 / 1 scores)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wilcoxon

from bench_nb.metrics.clustered_paired import paired_difference_test
from bench_nb.metrics.signed_rank import clustered_signed_rank
from clustered_sim import LOCOMO_SIZES, graded_pairs

HAYSTACK = np.repeat(np.arange(len(LOCOMO_SIZES)), LOCOMO_SIZES)
REPLICATES = 2000  # the rejection rate's standard error at 5% is 0.5 points


def test_type_one_error_is_kept_where_the_independent_wilcoxon_test_fails() -> None:
    """Two equally good graded runs, each with its own effect per conversation (a strong intra-cluster
    correlation): the clustered test rejects at most ~6% of the time at alpha 0.05; Wilcoxon's test over
    questions, on the very same benchmarks, rejects far more often (the problem this test fixes)."""
    a, b = graded_pairs(np.random.default_rng(7), REPLICATES)
    diff = a - b
    _, p = clustered_signed_rank(diff, HAYSTACK)
    clustered_rate = float((p < 0.05).mean())
    independent_rate = float((wilcoxon(diff, axis=1, zero_method="wilcox").pvalue < 0.05).mean())
    assert 0.02 <= clustered_rate <= 0.06
    assert independent_rate >= 0.3


def test_milder_clustering_keeps_the_level_too() -> None:
    a, b = graded_pairs(np.random.default_rng(8), REPLICATES, spread=0.3)
    _, p = clustered_signed_rank(a - b, HAYSTACK)
    assert 0.03 <= float((p < 0.05).mean()) <= 0.06


def test_power_under_a_real_effect_is_close_to_the_clustered_t_test() -> None:
    """Run A better by 0.6 logits (about 11 points of mean score): the clustered signed-rank test finds it
    most of the time, nearly as often as the cluster-level t-test on the same benchmarks."""
    a, b = graded_pairs(np.random.default_rng(9), 500, shift=0.6, spread=0.3)
    diff = a - b
    z, p = clustered_signed_rank(diff, HAYSTACK)
    sizes = np.bincount(HAYSTACK).astype(float)
    t_p = np.array([paired_difference_test(np.bincount(HAYSTACK, weights=d), sizes).p for d in diff])
    power, t_power = float((p < 0.05).mean()), float((t_p < 0.05).mean())
    assert power >= 0.8 and power >= t_power - 0.1
    assert float((z[p < 0.05] > 0).mean()) == 1.0  # every rejection says A is better


def test_one_question_per_cluster_is_wilcoxons_normal_approximation() -> None:
    """Zeros ranked but unsigned (Pratt), ties at mid-ranks, no continuity correction: equal to scipy."""
    rng = np.random.default_rng(3)
    diff = rng.choice([-1, -0.5, 0, 0.5, 1], size=(50, 40), p=[0.15, 0.2, 0.3, 0.2, 0.15])
    z, p = clustered_signed_rank(diff, np.arange(40))
    ref = wilcoxon(diff, axis=1, zero_method="pratt", correction=False, method="approx")
    np.testing.assert_allclose(p, ref.pvalue, rtol=1e-9)
    np.testing.assert_allclose(np.abs(z), np.abs(ref.zstatistic), rtol=1e-9)
    # Continuous differences (no ties, no zeros): Wilcoxon's signed-rank sum W = 2·(r⁺ − n(n+1)/4).
    x = rng.normal(0.3, 1, 30)
    z1, _ = clustered_signed_rank(x, np.arange(30))
    r_plus = wilcoxon(x, method="approx").statistic  # scipy reports min(r⁺, r⁻)
    r_plus = r_plus if np.sum(np.sign(x)) < 0 else 30 * 31 / 2 - r_plus
    w = 2 * (r_plus - 30 * 31 / 4)
    assert float(z1) == pytest.approx(w / np.sqrt(30 * 31 * 61 / 6), rel=1e-12)


def test_every_cluster_weighs_the_same_whatever_its_size() -> None:
    """Duplicating every question of one cluster changes nothing: each cluster's contribution is its mean
    signed rank (within-cluster resampling), so a big chat does not outvote the others."""
    rng = np.random.default_rng(4)
    sizes = np.array([3, 5, 2, 4])
    codes = np.repeat(np.arange(4), sizes)
    diff = rng.choice([-1, -0.5, 0, 0.5, 1], size=codes.size)
    doubled = np.concatenate([diff, diff[codes == 1]])
    z, p = clustered_signed_rank(diff, codes)
    z2, p2 = clustered_signed_rank(doubled, np.concatenate([codes, codes[codes == 1]]))
    assert (float(z2), float(p2)) == pytest.approx((float(z), float(p)), rel=1e-12)


def test_degenerate_inputs() -> None:
    z, p = clustered_signed_rank(np.zeros(6), np.array([0, 0, 1, 1, 2, 2]))
    assert np.isnan(z) and float(p) == 1.0  # nothing differs
    z, p = clustered_signed_rank(np.array([0.5, 1.0]), np.array([0, 0]))
    assert np.isnan(z) and np.isnan(p)  # one cluster: no variance to estimate
