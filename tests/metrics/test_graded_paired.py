"""Paired comparison of graded runs (BEAM): mean score difference, the clustered paired test's interval over
chats (the tell-apart section's), and the clustered signed-rank test (Datta & Satten 2008) instead of
McNemar's."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import t as student_t
from scipy.stats import wilcoxon

from bench_nb import tables
from bench_nb.metrics.clustered_paired import paired_difference_test
from bench_nb.metrics.paired import paired_comparison
from bench_nb.metrics.signed_rank import clustered_signed_rank


def frame(
    seed: int = 5, chats: int = 20, per_chat: int = 4, lift: float = 0.1
) -> tuple[pl.DataFrame, np.ndarray]:
    """Two graded runs on ``chats`` chats; A's scores are lifted by ~``lift`` (a chat-level shift; 0 keeps
    the rubric's quarter points, with ties and zero differences)."""
    rng = np.random.default_rng(seed)
    rows, diffs = [], []
    for c in range(chats):
        shift = rng.normal(lift, lift)
        for i in range(per_chat):
            a = float(np.clip(rng.choice([0, 0.25, 0.5, 0.75, 1]) + shift, 0, 1))
            b = float(rng.choice([0, 0.25, 0.5, 0.75, 1]))
            diffs.append(a - b)
            for run, score in (("a", a), ("b", b)):
                rows.append(
                    {
                        "run_id": run,
                        "provider": run,
                        "question_id": f"100K-{c}-x-{i}",
                        "haystack_id": f"100K-{c}",
                        "question_type_norm": "summarization",
                        "status": "evaluated",
                        "unscored": False,
                        "score": score,
                        "correct": score == 1,
                        "graded": True,
                        "benchmark": "beam-100k",
                    }
                )
    return pl.DataFrame(rows), np.array(diffs)


def test_graded_runs_get_the_mean_difference_a_cluster_interval_and_the_clustered_test() -> None:
    q, diffs = frame()
    result = paired_comparison(q, "a", "b", method="signed-rank", backend="polars")
    assert result.test == "clustered-signed-rank" and result.n_pairs == 80
    assert result.difference == pytest.approx(diffs.mean())
    # The chats in sorted order (100K-0, 100K-1, 100K-10, ...): the same Tᵢ whatever the rows' order.
    _, chats = np.unique(q.filter(pl.col("run_id") == "a")["haystack_id"].to_numpy(), return_inverse=True)
    z, p = clustered_signed_rank(diffs, chats)
    assert (result.statistic, result.p_value) == pytest.approx((float(z), float(p)))
    assert result.statistic > 0  # A is better by construction
    # The interval is the clustered paired test's on the mean difference (the inverted CR2 t): the
    # tell-apart section's, from the chats' summed differences.
    sums = np.bincount(chats, weights=diffs)  # per chat, in sorted order
    test = paired_difference_test(sums, np.full(20, 4.0))
    assert (result.ci_low, result.ci_high) == (test.low, test.high)
    assert (test.low > 0) == (test.p < 0.05)  # it excludes 0 exactly when its own test rejects


def test_on_equal_chats_the_graded_interval_is_the_cluster_robust_t_interval() -> None:
    """Closed form: D̄ ± t(K − 1, 0.975) · √(K/(K − 1) · Σₖ (Dₖ − D̄·nₖ)² / n²) over K = 40 equal chats (CR2
    with Bell-McCaffrey df is CR1 on K − 1 df there)."""
    q, diffs = frame(seed=11, chats=40, per_chat=3)
    result = paired_comparison(q, "a", "b", backend="polars")
    per_chat = diffs.reshape(40, 3)
    mean, n = diffs.mean(), diffs.size
    se = np.sqrt(40 / 39 * ((per_chat.sum(axis=1) - mean * 3) ** 2).sum() / n**2)
    half = student_t.ppf(0.975, 39) * se
    assert result.ci_low == pytest.approx(mean - half, abs=1e-9)
    assert result.ci_high == pytest.approx(mean + half, abs=1e-9)


def test_identical_graded_runs_do_not_differ() -> None:
    q, _ = frame()
    same = pl.concat(
        [
            q.filter(pl.col("run_id") == "a"),
            q.filter(pl.col("run_id") == "a").with_columns(run_id=pl.lit("b"), provider=pl.lit("b")),
        ]
    )
    result = paired_comparison(same, "a", "b", method="signed-rank")
    assert (result.difference, result.p_value, result.test) == (0.0, 1.0, "clustered-signed-rank")
    result = paired_comparison(same, "a", "b")
    assert (result.difference, result.p_value, result.test) == (0.0, 1.0, "CR2 t (Bell-McCaffrey df)")


def test_one_question_per_chat_gives_wilcoxons_signed_rank_test() -> None:
    """With one question per haystack the clustered test is Wilcoxon's signed-rank test (zeros ranked and
    given no sign, Pratt; ties at mid-ranks; normal approximation without continuity correction)."""
    q, diffs = frame(seed=8, chats=60, per_chat=1, lift=0.0)
    result = paired_comparison(q, "a", "b", method="signed-rank")
    ref = wilcoxon(diffs, zero_method="pratt", correction=False, method="approx")
    assert np.any(diffs == 0) and len(np.unique(np.abs(diffs))) < len(diffs)  # zeros and ties are exercised
    assert result.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert abs(result.statistic) == pytest.approx(abs(ref.zstatistic), rel=1e-9)


def test_a_question_of_unknown_haystack_is_its_own_cluster() -> None:
    q, _ = frame(seed=8, chats=30, per_chat=1)
    for method in ("clustered", "signed-rank"):
        unknown = paired_comparison(
            q.with_columns(haystack_id=pl.lit(None, pl.Utf8)), "a", "b", method=method
        )
        assert unknown.p_value == pytest.approx(
            paired_comparison(q, "a", "b", method=method).p_value, rel=1e-12
        )


def test_the_paired_table_names_the_clustered_test_for_graded_runs() -> None:
    q, _ = frame()
    html = tables.table_paired(q).html
    assert "CR2 t (Bell-McCaffrey df)" in html and "Bell-McCaffrey degrees of freedom" in html
    assert "McNemar" not in html
    html = tables.table_paired(q, method="signed-rank").html
    assert "clustered-signed-rank" in html and "Datta &amp; Satten" in html and "McNemar" not in html
    assert "test of the ranks of the differences" in html  # why interval and test may disagree


def test_four_chats_give_the_cr2_t_on_three_df_and_an_interval_that_agrees_with_it() -> None:
    """Until issue 39 four chats gave no interval (16 sign patterns: p ≥ 0.125 whatever the data); the CR2 t
    tests them on Bell-McCaffrey's K − 1 = 3 degrees of freedom, by hand here (equal chats: CR2 = CR1)."""
    q, diffs = frame(chats=4, per_chat=6, lift=0.6)  # A better in every chat
    result = paired_comparison(q, "a", "b", backend="polars")
    per_chat = diffs.reshape(4, 6).sum(axis=1)
    mean = diffs.mean()
    se = np.sqrt(((per_chat - mean * 6) ** 2).sum() / (1 - 6 / 24) / 24**2)
    assert result.difference == pytest.approx(mean) and result.difference > 0.1
    assert result.statistic == pytest.approx(mean / se, rel=1e-12)
    assert result.p_value == pytest.approx(2 * student_t.sf(mean / se, 3), rel=1e-9)
    half = student_t.ppf(0.975, 3) * se
    assert (result.ci_low, result.ci_high) == pytest.approx((mean - half, mean + half), rel=1e-9)
    assert (result.ci_low > 0) == (result.p_value < 0.05)
