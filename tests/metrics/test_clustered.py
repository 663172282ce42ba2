"""Clustered accuracy intervals, the design effect, the ICC and the clustered paired test: seeded simulations
of coverage and type-I error, and the numbers against scipy / statsmodels."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import polars as pl
import pytest
import statsmodels.api as sm
from polars.testing import assert_frame_equal
from scipy import stats
from statsmodels.formula.api import ols

from bench_nb.metrics.clustered import (
    DESIGN_WILSON,
    ClusterSums,
    accuracy_intervals,
    bell_mccaffrey_df,
    cluster_variance,
    clustered_interval,
    cr2_variance,
    design_effect,
    design_wilson_interval,
    intraclass_correlation,
    resampled_sums,
)
from bench_nb.metrics.clustered_paired import clustered_paired_comparisons, paired_difference_test, tell_apart
from bench_nb.metrics.intervals import student_t_quantile, student_t_two_sided_p, wilson_interval
from bench_nb.metrics.paired import mcnemar_test
from clustered_sim import LOCOMO_SIZES, beta_binomial_sums, frame, paired_null


def _sums(sums: np.ndarray, counts: np.ndarray) -> ClusterSums:
    n, total = counts.sum(), sums.sum()
    p = total / n
    # Σ (y − ȳ)² for 0/1 outcomes: n·p·(1 − p)
    return ClusterSums(np.arange(len(sums)).astype(object), sums, counts.astype(float), n * p * (1 - p))


@pytest.mark.parametrize(("p", "icc"), [(0.75, 0.05), (0.5, 0.1), (0.9, 0.05)])
def test_clustered_interval_covers_where_wilson_falls_short(p: float, icc: float) -> None:
    rng = np.random.default_rng(17)
    trials = 400
    clustered = independent = 0
    for _ in range(trials):
        cs = _sums(beta_binomial_sums(rng, p, icc, LOCOMO_SIZES), LOCOMO_SIZES)
        got = clustered_interval(cs)
        clustered += got.low <= p <= got.high
        low, high = wilson_interval(cs.sums.sum(), cs.n)
        independent += low <= p <= high
    assert clustered / trials >= 0.93
    assert independent / trials <= 0.75  # the independent interval falls clearly short


@pytest.mark.parametrize("clusters", [4, 6, 8, 10, 20])
@pytest.mark.parametrize("shape", ["locomo", "small"])
def test_clustered_interval_covers_with_few_haystacks(clusters: int, shape: str) -> None:
    # Haystacks of LoCoMo's sizes (cycled), or of 12 questions each (the demo's shape).
    sizes = np.resize(LOCOMO_SIZES, clusters) if shape == "locomo" else np.full(clusters, 12)
    rng = np.random.default_rng(clusters)
    trials, covered, p = 1000, 0, 0.6
    for _ in range(trials):
        cs = _sums(beta_binomial_sums(rng, p, 0.1, sizes), sizes)
        got = clustered_interval(cs)
        covered += got.low <= p <= got.high
    assert covered / trials >= 0.93 - 2 * math.sqrt(0.95 * 0.05 / trials)  # 0.93 less two Monte Carlo SEs


@pytest.mark.parametrize("clusters", [4, 9, 10, 12])
def test_the_clustered_interval_is_design_wilson_at_the_cr2_design_effect_and_bell_mccaffrey_df(
    clusters: int,
) -> None:
    sizes = np.resize(LOCOMO_SIZES, clusters)
    cs = _sums(beta_binomial_sums(np.random.default_rng(3), 0.7, 0.05, sizes), sizes)
    deff = cr2_variance(cs.sums, cs.counts) / (cs.squares / cs.n**2)
    df = bell_mccaffrey_df(cs.counts)
    got = clustered_interval(cs)
    assert (got.low, got.high) == design_wilson_interval(cs.sums.sum(), cs.n, deff, clusters, df=df)
    assert got.interval == DESIGN_WILSON and got.effective_clusters == df + 1 and got.warning is None
    # the same questions as a frame: its columns name the interval used and the effective haystacks
    y = np.concatenate([np.arange(n) < k for k, n in zip(cs.sums, sizes, strict=True)])
    row = accuracy_intervals(frame({"r": y}, sizes), backend="polars").row(0, named=True)
    assert row["interval"] == DESIGN_WILSON and row["warning"] is None
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((got.low, got.high), rel=1e-12)
    assert row["effective_clusters"] == pytest.approx(df + 1, rel=1e-12)
    assert (
        accuracy_intervals(frame({"r": y}, sizes), method="wilson", backend="polars")["interval"].item()
        == "Wilson"
    )


def _bell_mccaffrey_by_matrices(sizes: np.ndarray) -> tuple[np.ndarray, float]:
    """Bell & McCaffrey (2002) from their matrix definitions, for y = μ + e over clusters of ``sizes``:
    A_k = (I − H_kk)^(−1/2) by eigendecomposition, G's k-th column (I − H)_{·k} A_k X_k (X′X)⁻¹, and
    ν = (tr G′G)² / tr((G′G)²). Also returns the CR2 weights: the variance is Σ_k (1′A_k e_k)² / n²."""
    n = int(sizes.sum())
    hat = np.full((n, n), 1 / n)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    cols, scale = [], []
    for s, m in zip(starts, sizes, strict=True):
        vals, vecs = np.linalg.eigh(np.eye(m) - hat[s : s + m, s : s + m])
        a = vecs @ np.diag(vals**-0.5) @ vecs.T
        cols.append((np.eye(n) - hat)[:, s : s + m] @ a @ np.ones(m) / n)
        scale.append((np.ones(m) @ a @ np.ones(m)) / m)  # 1′A_k applied to a cluster's residual sum
    g = np.column_stack(cols)
    gg = g.T @ g
    return np.array(scale), float(np.trace(gg) ** 2 / np.trace(gg @ gg))


@pytest.mark.parametrize(
    "sizes",
    [np.full(6, 9), np.array([3, 40, 7, 7, 12]), np.array([65, 4, 4, 4, 4, 4, 4, 4, 4, 3]), np.array([1, 2])],
)
def test_cr2_and_bell_mccaffrey_equal_their_matrix_definitions(sizes: np.ndarray) -> None:
    scale, nu = _bell_mccaffrey_by_matrices(sizes)
    assert bell_mccaffrey_df(sizes.astype(float)) == pytest.approx(nu, rel=1e-9)
    if (sizes == sizes[0]).all():
        assert bell_mccaffrey_df(sizes.astype(float)) == pytest.approx(len(sizes) - 1, rel=1e-12)
    rng = np.random.default_rng(len(sizes))
    y = (rng.random(sizes.sum()) < 0.6).astype(float)
    hay = np.repeat(np.arange(len(sizes)), sizes)
    e = np.bincount(hay, weights=y - y.mean())
    # A_k's eigenvalue on a cluster's constant vector is 1/√(1 − n_k/n), so 1′A_k e_k = e_k-sum/√(1 − h_k)
    assert scale == pytest.approx(1 / np.sqrt(1 - sizes / sizes.sum()), rel=1e-9)
    expected = ((scale * e) ** 2).sum() / sizes.sum() ** 2
    assert cr2_variance(np.bincount(hay, weights=y), sizes.astype(float)) == pytest.approx(expected, rel=1e-9)


def test_cr2_with_one_question_per_cluster_is_statsmodels_hc2() -> None:
    y = (np.random.default_rng(4).random(37) < 0.3).astype(float)
    hc2 = sm.OLS(y, np.ones(len(y))).fit(cov_type="HC2").bse[0] ** 2
    assert cr2_variance(y, np.ones(len(y))) == pytest.approx(hc2, rel=1e-9)
    assert bell_mccaffrey_df(np.ones(37)) == pytest.approx(36, rel=1e-12)


@pytest.mark.parametrize(("share", "p", "icc"), [(0.5, 0.7, 0.1), (0.65, 0.5, 0.3), (0.65, 0.9, 0.1)])
def test_the_interval_holds_its_level_when_one_haystack_dominates(share: float, p: float, icc: float) -> None:
    # 10 haystacks, one holding `share` of 400 questions: the rule before session 8 covered 0.76-0.91 here
    # (Bell-McCaffrey's effective haystacks 3.2-4.2, not 10).
    sizes = np.r_[round(400 * share), np.full(9, round(400 * (1 - share) / 9))]
    rng = np.random.default_rng(11)
    trials, covered = 600, 0
    for _ in range(trials):
        got = clustered_interval(_sums(beta_binomial_sums(rng, p, icc, sizes), sizes))
        covered += got.low <= p <= got.high
        assert got.effective_clusters < 4.3
    assert covered / trials >= 0.93


def test_few_effective_wrong_answers_carry_a_warning_naming_the_effective_haystacks() -> None:
    # 10 haystacks of 40 at 90% accuracy with a strong haystack effect (ICC 0.3): every interval covers
    # about 89-90% (docs/statistics.md); the results say so instead of staying silent.
    sizes = np.full(10, 40)
    rng = np.random.default_rng(12)
    trials = 400
    warned = covered = 0
    for _ in range(trials):
        got = clustered_interval(_sums(beta_binomial_sums(rng, 0.9, 0.3, sizes), sizes))
        covered += got.low <= 0.9 <= got.high
        if got.warning:
            warned += 1
            assert "effective haystacks of 10" in got.warning and "effective wrong answers" in got.warning
    assert covered / trials < 0.93 and warned / trials >= 0.9
    # and a frame: one haystack with 30 of 40 right, nine with 40 of 40
    y = np.r_[np.arange(40) < 30, np.ones(360, dtype=bool)]
    row = accuracy_intervals(frame({"r": y}, sizes), backend="polars").row(0, named=True)
    assert row["warning"] == (
        "may cover less than 95% (down to 40% in simulations): 1.0 effective wrong answers (fewer than 10); "
        "in 10.0 effective haystacks of 10"
    )


def test_wilson_warns_when_the_design_effect_makes_it_too_narrow() -> None:
    sizes = np.full(10, 40)
    y = np.concatenate([np.arange(40) < k for k in (10, 35, 20, 38, 5, 30, 25, 15, 39, 12)])
    wilson = accuracy_intervals(frame({"r": y}, sizes), method="wilson", backend="polars").row(0, named=True)
    assert wilson["design_effect"] > 1.25 and "too narrow" in wilson["warning"]
    assert f"design effect is {wilson['design_effect']:.2f}" in wilson["warning"]


def test_clustered_paired_test_keeps_its_level_where_mcnemar_does_not() -> None:
    rng = np.random.default_rng(5)
    hay = np.repeat(np.arange(len(LOCOMO_SIZES)), LOCOMO_SIZES)
    trials = 2000
    clustered = naive = 0
    for _ in range(trials):
        ya, yb = paired_null(rng)
        d = np.bincount(hay, weights=ya - yb)
        p = paired_difference_test(d, LOCOMO_SIZES.astype(float)).p
        clustered += p < 0.05
        naive += (
            mcnemar_test(int(((ya == 1) & (yb == 0)).sum()), int(((ya == 0) & (yb == 1)).sum()))[1] < 0.05
        )
    assert clustered / trials <= 0.06
    assert naive / trials >= 0.3  # McNemar, blind to the clusters, rejects a true null far too often


def test_clustered_paired_test_is_the_t_test_of_cluster_means_when_sizes_are_equal() -> None:
    rng = np.random.default_rng(1)
    sizes = np.full(8, 40)
    diffs = rng.integers(-1, 2, size=(8, 40)).astype(float) + rng.normal(0, 0.3, (8, 1)).round()
    test = paired_difference_test(diffs.sum(axis=1), sizes.astype(float))
    t, df, p = test.statistic, test.df, test.p
    ref = stats.ttest_1samp(diffs.mean(axis=1), 0.0)
    assert df == 7
    assert math.isclose(t, ref.statistic, rel_tol=1e-9) and math.isclose(p, ref.pvalue, rel_tol=1e-9)


def test_clustered_paired_test_and_design_effect_equal_statsmodels_and_the_cr2_matrix_definition() -> None:
    """The CR1 part against statsmodels' cluster-robust OLS (its sandwich, K/(K − 1)·Σₖ eₖ²/n², is what the
    design effect uses); the paired test itself is CR2 with Bell-McCaffrey df (issue 39): the same residual
    sums each scaled by the matrix definition's A_k, on ν from the matrices, computed here by hand."""
    rng = np.random.default_rng(2)
    sizes = np.array([12, 30, 7, 45, 22, 18])
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = (rng.random(len(groups)) < 0.3 + 0.08 * groups).astype(float)
    fit = sm.OLS(y, np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    raw = sm.OLS(y, np.ones(len(y))).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}
    )
    hc0 = sm.OLS(y, np.ones(len(y))).fit(cov_type="HC0")
    sums = np.bincount(groups, weights=y)
    assert math.isclose(cluster_variance(sums, sizes.astype(float)), fit.bse[0] ** 2, rel_tol=1e-9)
    scale, nu = _bell_mccaffrey_by_matrices(sizes)
    e = np.bincount(groups, weights=y - y.mean())
    assert math.isclose(((e / len(y)) ** 2).sum(), raw.bse[0] ** 2, rel_tol=1e-9)  # the unscaled sandwich
    se = math.sqrt(((scale * e) ** 2).sum() / len(y) ** 2)
    test = paired_difference_test(sums, sizes.astype(float))
    t, df, p = test.statistic, test.df, test.p
    assert math.isclose(df, nu, rel_tol=1e-9) and df < len(sizes) - 1  # unequal sizes: fewer than K − 1
    assert math.isclose(t, y.mean() / se, rel_tol=1e-9)
    assert math.isclose(p, 2 * stats.t.sf(abs(y.mean() / se), nu), rel_tol=1e-9)
    cs = ClusterSums(
        np.arange(6).astype(object),
        sums,
        sizes.astype(float),
        float(((y - y.mean()) ** 2).sum()),
    )
    assert math.isclose(design_effect(cs), fit.bse[0] ** 2 / hc0.bse[0] ** 2, rel_tol=1e-9)


def test_icc_is_the_one_way_anova_estimator() -> None:
    rng = np.random.default_rng(3)
    sizes = np.array([5, 9, 14, 6, 11, 20, 8])
    g = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.normal(0, 1, len(g)) + rng.normal(0, 0.8, len(sizes))[g]
    table = sm.stats.anova_lm(ols("y ~ C(g)", data=pd.DataFrame({"y": y, "g": g})).fit())
    msb, msw = table["mean_sq"].iloc[0], table["mean_sq"].iloc[1]
    n, k = len(y), len(sizes)
    m0 = (n - (sizes**2).sum() / n) / (k - 1)
    assert math.isclose(intraclass_correlation(y, g), (msb - msw) / (msb + (m0 - 1) * msw), rel_tol=1e-9)


def test_icc_recovers_a_beta_binomial_truth() -> None:
    rng = np.random.default_rng(4)
    sizes = np.full(400, 30)
    sums = beta_binomial_sums(rng, 0.6, 0.1, sizes).astype(int)
    y = np.concatenate([np.r_[np.ones(s), np.zeros(30 - s)] for s in sums])
    assert abs(intraclass_correlation(y, np.repeat(np.arange(400), 30)) - 0.1) < 0.02


def test_accuracy_intervals_columns_and_reproducibility() -> None:
    rng = np.random.default_rng(8)
    y = {"a": (rng.random(LOCOMO_SIZES.sum()) < 0.7), "b": (rng.random(LOCOMO_SIZES.sum()) < 0.6)}
    q = frame({k: v.astype(float) for k, v in y.items()})
    one = accuracy_intervals(q, backend="polars")
    assert one.columns == [
        "run_id",
        "accuracy",
        "ci_low",
        "ci_high",
        "n",
        "clusters",
        "design_effect",
        "effective_n",
        "interval",
        "effective_clusters",
        "warning",
    ]
    # pandas in, same out; equal to ~1e-15, not bit for bit: polars sums the per-cluster deviations on
    # several threads, and the order of those float additions may differ between calls
    assert_frame_equal(one, accuracy_intervals(q.to_pandas(), backend="polars"), rel_tol=1e-12)
    row = one.row(0, named=True)
    assert row["n"] == 1540 and row["clusters"] == 10
    assert math.isclose(row["accuracy"], y["a"].mean())
    assert row["ci_low"] < row["accuracy"] < row["ci_high"]
    assert math.isclose(row["effective_n"], min(1540, 1540 / row["design_effect"]))
    wilson = accuracy_intervals(q, method="wilson", backend="polars").row(0, named=True)
    assert (wilson["ci_low"], wilson["ci_high"]) == wilson_interval(int(y["a"].sum()), 1540)
    # the same to ~1e-15 (polars' threads order the per-cluster sums' float additions differently per call)
    assert math.isclose(wilson["design_effect"], row["design_effect"], rel_tol=1e-12)


def test_accuracy_intervals_by_type_and_fractional_scores() -> None:
    q = pl.DataFrame(
        {
            "run_id": ["r"] * 6,
            "question_id": [f"q{i}" for i in range(6)],
            "haystack_id": ["c1", "c1", "c2", "c2", "c3", "c3"],
            "question_type": ["t1", "t2"] * 3,
            "correct": [None] * 6,
            "score": [1.0, 0.5, 0.5, 0.0, 1.0, 0.25],
        }
    )
    by = accuracy_intervals(q, by="question_type", backend="polars")
    assert by["question_type"].to_list() == ["t1", "t2"]
    assert by["accuracy"].to_list() == pytest.approx([2.5 / 3, 0.75 / 3])
    assert by["clusters"].to_list() == [3, 3]
    with pytest.raises(ValueError, match=r"question .q1.: score 1\.5 is not in"):
        accuracy_intervals(q.with_columns(score=pl.Series([1.0, 1.5, 0, 0, 0, 0])))
    with pytest.raises(ValueError, match="no column haystack_id"):
        accuracy_intervals(q.drop("haystack_id"))


def test_questions_not_scored_are_left_out_and_a_missing_haystack_is_its_own_cluster() -> None:
    q = pl.DataFrame(
        {
            "run_id": ["r"] * 5,
            "question_id": list("abcde"),
            "haystack_id": ["h", "h", None, "g", "g"],
            "status": ["evaluated", "evaluated", "evaluated", "failed", "evaluated"],
            "unscored": [False, False, False, False, True],
            "correct": [True, False, True, None, None],
            "score": [1.0, 0.0, 1.0, None, None],
        }
    )
    row = accuracy_intervals(q, backend="polars").row(0, named=True)
    assert (row["n"], row["clusters"]) == (3, 2) and math.isclose(row["accuracy"], 2 / 3)


def test_paired_comparisons_and_tell_apart() -> None:
    rng = np.random.default_rng(9)
    n = LOCOMO_SIZES.sum()
    hay = np.repeat(np.arange(10), LOCOMO_SIZES)
    strong = (rng.random(n) < 0.85).astype(float)
    weak = np.where(
        rng.random(n) < 0.8, strong, 0.0
    )  # loses answers the strong run gets: always paired-lower
    same = strong.copy()
    same[rng.choice(n, 10, replace=False)] = 1 - same[rng.choice(n, 10, replace=False)]
    q = frame({"strong": strong, "weak": weak, "same": same}).with_columns(
        question_type=pl.Series(np.where(hay < 5, "t1", "t2")).gather(pl.arange(0, 3 * n, eager=True) % n)
    )
    table = clustered_paired_comparisons(q, backend="polars")
    verdicts = {(r["run_a"], r["run_b"]): r["verdict"] for r in table.iter_rows(named=True)}
    assert verdicts[("strong", "weak")] == "A higher" and verdicts[("weak", "same")] == "B higher"
    first = table.row(0, named=True)
    assert math.isclose(first["difference"], strong.mean() - weak.mean())
    assert first["ci_low"] < first["difference"] < first["ci_high"]
    both = int(((strong == 1) & (weak == 0)).sum()), int(((strong == 0) & (weak == 1)).sum())
    assert first["mcnemar_p"] == mcnemar_test(*both)[1]
    apart = tell_apart(q, backend="polars")
    assert apart.filter(pl.col("question_type") == "all").height == 3
    assert sorted(apart["question_type"].unique().to_list()) == ["all", "t1", "t2"]
    assert apart["question_type"].to_list()[:3] == ["all", "t1", "t2"]  # each pair: overall first
    for r in apart.iter_rows(named=True):
        overlap = r["wilson_a_low"] <= r["wilson_b_high"] and r["wilson_b_low"] <= r["wilson_a_high"]
        assert (r["overlap_verdict"] == "cannot tell") == overlap
        assert r["agree"] == (r["verdict"] == r["overlap_verdict"])


def test_bootstrap_of_2000_resamples_is_seeded() -> None:
    assert np.array_equal(resampled_sums(np.eye(10), 7), resampled_sums(np.eye(10), 7))
    w = resampled_sums(np.eye(10), 7)
    assert w.shape == (2000, 10) and (w.sum(axis=1) == 10).all()


@pytest.mark.parametrize("df", [1, 2, 3, 4, 9, 10, 29, 100, 499, 1999, 1.3, 2.5, 3.14, 9.9, 150.5])
def test_student_t_equals_scipy(df: float) -> None:
    for t in (0.0, 0.3, 1.0, 1.96, 2.262, 4.0, 12.0):
        assert math.isclose(student_t_two_sided_p(t, df), 2 * stats.t.sf(t, df), rel_tol=1e-9, abs_tol=1e-12)
    for q in (0.00001, 0.025, 0.5, 0.9, 0.975, 0.9995, 0.99999):
        assert math.isclose(student_t_quantile(q, df), stats.t.ppf(q, df), rel_tol=1e-9, abs_tol=1e-12)


def test_scipy_is_imported_only_when_a_t_quantile_is_asked_for() -> None:
    code = (
        "import sys\n"
        "from bench_nb.metrics import clustered, clustered_paired, intervals, power\n"
        "before = 'scipy' in sys.modules\n"
        "q = intervals.student_t_quantile(0.975, 9.5)\n"
        "print(before, 'scipy.special' in sys.modules, 'scipy.stats' in sys.modules, round(q, 6))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "False", str(round(float(stats.t.ppf(0.975, 9.5)), 6))]
    with pytest.raises(ValueError, match="degrees of freedom must be positive"):
        student_t_two_sided_p(1.0, 0)


def test_row_order_does_not_change_the_numbers() -> None:
    rng = np.random.default_rng(12)
    n = int(LOCOMO_SIZES.sum())
    q = frame({"a": (rng.random(n) < 0.7).astype(float), "b": (rng.random(n) < 0.65).astype(float)})
    shuffled = q.sample(fraction=1.0, shuffle=True, seed=1)
    shuffled = pl.concat([shuffled.filter(pl.col("run_id") == "a"), shuffled.filter(pl.col("run_id") == "b")])
    assert_frame_equal(
        accuracy_intervals(q, backend="polars"), accuracy_intervals(shuffled, backend="polars")
    )
    assert_frame_equal(
        clustered_paired_comparisons(q, backend="polars"),
        clustered_paired_comparisons(shuffled, backend="polars"),
    )


def test_the_bootstrap_weights_are_the_equal_probability_multinomial() -> None:
    # Counts of K clusters drawn K times (the sums of the identity's rows): each row sums to K; a cell's mean
    # is 1 and its variance K·(1/K)·(1 − 1/K), the multinomial's moments; the same seed gives the same matrix.
    k, resamples = 40, 20_000
    w = resampled_sums(np.eye(k), seed=3, resamples=resamples)
    assert w.shape == (resamples, k) and (w.sum(axis=1) == k).all()
    assert abs(w.mean() - 1) < 0.01
    assert abs(w.var(axis=0).mean() - (1 - 1 / k)) < 0.02
    cov = np.cov(w[:, 0], w[:, 1])[0, 1]  # multinomial covariance −n·p_i·p_j = −1/K
    assert abs(cov - (-1 / k)) < 0.02
    assert np.array_equal(w, resampled_sums(np.eye(k), seed=3, resamples=resamples))
    assert not np.array_equal(w, resampled_sums(np.eye(k), seed=4, resamples=resamples))


@pytest.mark.parametrize("clusters", [1, 3, 519, 1999, 70_000])
def test_resampled_sums_count_default_rngs_draws_whatever_the_block_size(clusters: int) -> None:
    # The documented definition: resample b sums x's rows drawn in the b-th row of
    # default_rng(seed).integers(0, K, (B, K)). W is drawn a block of rows at a time; blocks of one row or of
    # many give the sums of that same matrix (integer x: exact in any order).
    draws = np.random.default_rng(5).integers(0, clusters, size=(300, clusters))
    weights = np.stack([np.bincount(row, minlength=clusters) for row in draws]).astype(float)
    x = np.random.default_rng(1).integers(0, 3, size=(clusters, 2)).astype(float)
    assert np.array_equal(resampled_sums(x, seed=5, resamples=300), weights @ x)
    if clusters < 3000:
        assert np.array_equal(resampled_sums(np.eye(clusters), seed=5, resamples=300), weights)


def test_effective_n_is_never_above_n() -> None:
    # every haystack holds the same share right: the between-haystack variance is near 0, so n / deff >> n
    correct = [i % 2 == 0 for i in range(40)]
    correct[1] = True
    q = pl.DataFrame(
        {
            "run_id": ["r"] * 40,
            "question_id": [f"q{i}" for i in range(40)],
            "haystack_id": [f"h{i // 10}" for i in range(40)],
            "correct": correct,
            "score": [float(c) for c in correct],
        }
    )
    row = accuracy_intervals(q, backend="polars").row(0, named=True)
    assert row["design_effect"] < 1 and row["n"] / row["design_effect"] > 40
    assert row["effective_n"] == 40
