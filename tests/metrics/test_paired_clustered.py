"""paired_comparison is clustered everywhere (issue 27): the same test and interval as tell_apart, from a
questions frame, a judgments frame or run directories with judge=, in any row order; McNemar and Newcombe
only when asked for (method="independent"); runs on different question sets refused, never intersected."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy.special import stdtr, stdtrit

from bench_nb import judgments_df, questions_df, rank_intervals, tables
from bench_nb.errors import ComparisonError
from bench_nb.metrics.clustered_paired import clustered_paired_comparisons, tell_apart
from bench_nb.metrics.paired import paired_comparison, paired_comparisons
from bench_nb.metrics.uncertainty import ClusterBootstrap
from clustered_sim import beta_binomial_sums, graded_pairs, paired_null


def questions(values: dict[str, np.ndarray], sizes: np.ndarray, graded: bool = False) -> pl.DataFrame:
    """A questions frame of runs on one question set: haystack h holds ``sizes[h]`` questions."""
    hay = np.repeat(np.arange(len(sizes)), sizes)
    qids = [f"q{i}" for i in range(len(hay))]
    return pl.concat(
        pl.DataFrame(
            {
                "run_id": run,
                "provider": run,
                "question_id": qids,
                "haystack_id": [f"conv-{h}" for h in hay],
                "question_type_norm": "single-hop",
                "status": "evaluated",
                "unscored": False,
                "score": y.astype(float),
                "correct": y == 1,
                "graded": graded,
            }
        )
        for run, y in values.items()
    )


def judgments(q: pl.DataFrame) -> pl.DataFrame:
    """The same verdicts as a judgments frame (``judgments_df``'s columns that the paired tests read)."""
    return q.select(
        "run_id",
        "provider",
        "question_id",
        "question_type_norm",
        "haystack_id",
        judge=pl.lit("llm"),
        replicate=pl.lit(1),
        score="score",
        label=pl.when("correct").then(pl.lit("correct")).otherwise(pl.lit("incorrect")),
        unscored=pl.lit(False),
        primary=pl.lit(True),
    )


def one_haystack_example() -> pl.DataFrame:
    """10 haystacks x 10 questions; A right on q0-q49, B right on q0-q59: B is better only inside haystack
    5 (q50-q59), so the haystacks give one piece of evidence, not ten."""
    n = np.arange(100)
    return questions({"a": (n < 50).astype(float), "b": (n < 60).astype(float)}, np.full(10, 10))


def test_one_better_haystack_cannot_tell_the_runs_apart() -> None:
    q = one_haystack_example()
    for data in (q, judgments(q)):
        result = paired_comparison(data, "a", "b")
        assert result.method == "clustered" and result.test == "CR2 t (Bell-McCaffrey df)"
        assert result.difference == pytest.approx(-0.1) and (result.n_pairs, result.clusters) == (100, 10)
        # By hand: haystack residuals Dₖ − D̄·nₖ are +1 (nine times) and −9, each over 1 − 10/100, so
        # SE² = (9 + 81) / 0.9 / 100² = 0.01, t = −0.1 / 0.1 = −1 on ν = 9 (equal haystacks: K − 1)
        assert result.statistic == pytest.approx(-1.0, rel=1e-12)
        assert result.p_value == pytest.approx(2 * stdtr(9, -1.0), rel=1e-12)  # 0.343
        assert (result.ci_low, result.ci_high) == pytest.approx(
            (-0.1 - stdtrit(9, 0.975) * 0.1, -0.1 + stdtrit(9, 0.975) * 0.1), rel=1e-12
        )
    row = tell_apart(q, backend="polars").row(0, named=True)
    assert row["verdict"] == "cannot tell" and row["p_value"] == result.p_value
    assert (row["ci_low"], row["ci_high"]) == (result.ci_low, result.ci_high)
    # McNemar's test counts the ten questions as ten independent pieces of evidence.
    independent = paired_comparison(q, "a", "b", method="independent")
    assert independent.test == "McNemar exact" and independent.p_value == pytest.approx(2 / 2**10)
    assert independent.ci_high < 0


def test_the_clustered_comparison_is_tell_aparts_for_every_pair_and_type() -> None:
    rng = np.random.default_rng(3)
    sizes = np.array([12, 5, 30, 8, 19, 11, 7, 25, 14, 9, 16, 21, 6, 10, 13, 18, 4, 22])  # 18 haystacks
    a, b = paired_null(rng, sizes)
    q = questions({"a": a, "b": b, "c": np.ones_like(a)}, sizes)
    apart = tell_apart(q, backend="polars").filter(pl.col("question_type") == "all")
    for r in apart.iter_rows(named=True):
        result = paired_comparison(q, r["run_a"], r["run_b"])
        assert result.test == r["test"] == "CR2 t (Bell-McCaffrey df)"
        assert (result.p_value, result.ci_low, result.ci_high) == (r["p_value"], r["ci_low"], r["ci_high"])
        assert result.statistic == r["statistic"] and result.clusters == r["clusters"]
    table = paired_comparisons(q, backend="polars")
    assert table["p_value"].to_list() == apart["p_value"].to_list()


@pytest.mark.parametrize("graded", [False, True])
def test_the_result_does_not_depend_on_row_order(graded: bool) -> None:
    """The haystacks' sums are taken in one order (haystacks sorted, questions sorted within each), so a
    shuffled frame gives the same p and interval to the bit."""
    rng = np.random.default_rng(11)
    sizes = np.full(20, 6)
    if graded:
        a, b = (x[0] for x in graded_pairs(rng, 1, sizes, shift=0.2))
    else:
        a, b = paired_null(rng, sizes)
    q = questions({"a": a, "b": b}, sizes, graded=graded)
    want = paired_comparison(q, "a", "b")
    assert want.test == "CR2 t (Bell-McCaffrey df)"
    for seed in range(4):
        shuffled = q.sample(fraction=1.0, shuffle=True, seed=seed)
        for data in (shuffled, judgments(shuffled)):
            got = paired_comparison(data, "a", "b")
            assert (got.p_value, got.ci_low, got.ci_high) == (want.p_value, want.ci_low, want.ci_high)
        signed = paired_comparison(shuffled, "a", "b", method="signed-rank")
        assert signed.p_value == paired_comparison(q, "a", "b", method="signed-rank").p_value


def _rejections(frames: list[pl.DataFrame]) -> tuple[float, float, float]:
    """Share of benchmarks where the clustered comparison rejects at 5%, from the questions frame and from
    the judgments frame (the same p each time), and where McNemar's test does."""
    clustered = from_judgments = independent = 0
    for q in frames:
        p = paired_comparison(q, "a", "b").p_value
        assert paired_comparison(judgments(q), "a", "b").p_value == p
        clustered += p < 0.05
        from_judgments += p < 0.05
        if not q["graded"].any():
            independent += paired_comparison(q, "a", "b", method="independent").p_value < 0.05
    n = len(frames)
    return clustered / n, from_judgments / n, independent / n


@pytest.mark.slow
def test_type_one_error_of_binary_comparisons_over_ten_correlated_haystacks() -> None:
    """No true difference, 10 haystacks of 20-60 questions, each run with its own effect per haystack
    (correlated outcomes): the clustered comparison rejects at most 7% of the time at 5%; McNemar's test,
    which ignores the haystacks, rejects far more often on the same benchmarks."""
    rng = np.random.default_rng(2027)
    sizes = np.array([20, 35, 60, 25, 40, 55, 30, 45, 50, 28])
    frames = []
    for _ in range(400):
        a, b = paired_null(rng, sizes)
        frames.append(questions({"a": a, "b": b}, sizes))
    clustered, from_judgments, independent = _rejections(frames)
    assert clustered <= 0.07 and from_judgments <= 0.07
    assert independent > 0.3


@pytest.mark.slow
def test_type_one_error_of_graded_comparisons_over_ten_correlated_haystacks() -> None:
    rng = np.random.default_rng(2028)
    sizes = np.array([20, 35, 60, 25, 40, 55, 30, 45, 50, 28])
    a, b = graded_pairs(rng, 400, sizes)
    frames = [questions({"a": a[i], "b": b[i]}, sizes, graded=True) for i in range(len(a))]
    clustered, from_judgments, _ = _rejections(frames)
    assert clustered <= 0.07 and from_judgments <= 0.07


def test_binary_clustered_comparison_finds_a_real_difference() -> None:
    """Power beside the level: A 25 points better (0.85 against 0.6, ICC 0.05) over 10 haystacks of 40
    questions is found most of the time."""
    rng = np.random.default_rng(5)
    sizes = np.full(10, 40)
    found = 0
    for _ in range(100):
        a = np.repeat(beta_binomial_sums(rng, 0.85, 0.05, sizes) / sizes, sizes)
        b = np.repeat(beta_binomial_sums(rng, 0.60, 0.05, sizes) / sizes, sizes)
        ya, yb = (rng.random(sizes.sum()) < a).astype(float), (rng.random(sizes.sum()) < b).astype(float)
        found += paired_comparison(questions({"a": ya, "b": yb}, sizes), "a", "b").p_value < 0.05
    assert found >= 80


def test_judge_verdicts_from_run_directories_keep_their_haystacks(make_run) -> None:
    """judgments_df carries each question's haystack, so judge= compares over haystacks too (it made every
    question its own cluster)."""
    answers = dict.fromkeys(("q1", "q2", "q3", "q4", "q5", "q6"), "x")
    hay = {"q1": "h1", "q2": "h1", "q3": "h2", "q4": "h2", "q5": "h3", "q6": "h3"}
    scores = {"a": [1, 1, 1, 1, 1, 1], "b": [0, 1, 0, 1, 0, 1]}
    runs = [
        make_run(
            run,
            answers=answers,
            bench_nb={},
            haystacks=hay,
            verdicts={"strict": dict(zip(answers, s, strict=True))},
        )
        for run, s in scores.items()
    ]
    j = judgments_df(runs, backend="polars")
    assert j.filter(pl.col("question_id") == "q4")["haystack_id"].unique().to_list() == ["h2"]
    q = questions_df(runs, backend="polars")
    assert set(j.select("run_id", "question_id", "haystack_id").rows()) == set(
        q.select("run_id", "question_id", "haystack_id").rows()
    )
    for data in (runs, j):
        result = paired_comparison(data, "a", "b", judge="strict")
        assert (result.n_pairs, result.clusters, result.test) == (6, 3, "CR2 t (Bell-McCaffrey df)")
        # haystack sums (1, 1, 1) over 2 questions each: no spread, so the sign test of 3 agreeing haystacks
        assert result.p_value == 0.25


def test_runs_sharing_no_scored_question_are_refused() -> None:
    q = questions({"a": np.ones(10), "b": np.zeros(10)}, np.full(5, 2))
    apart = pl.concat(
        [
            q.filter(pl.col("run_id") == "a"),
            q.filter(pl.col("run_id") == "b").with_columns(question_id=pl.col("question_id") + "-other"),
        ]
    )
    with pytest.raises(ComparisonError, match=r"'a' and 'b' share no question both scored \(10 and 10"):
        paired_comparison(apart, "a", "b")
    unscored = q.with_columns(
        status=pl.when(pl.col("run_id") == "b").then(pl.lit("failed")).otherwise("status")
    )
    with pytest.raises(ComparisonError, match="share no question both scored"):
        paired_comparison(unscored, "a", "b", method="independent")
    row = paired_comparisons(apart, backend="polars").row(0, named=True)
    assert math.isnan(row["p_value"]) and row["p_value_holm"] is None and row["n_pairs"] == 0
    assert "share no question both scored" in row["warning"] and not row["like_for_like"]


def test_runs_on_different_question_sets_are_refused_not_intersected() -> None:
    q = questions({"a": np.ones(12), "b": np.zeros(12), "c": np.ones(12)}, np.full(6, 2))
    uneven = q.filter(~((pl.col("run_id") == "a") & (pl.col("question_id") == "q0"))).filter(
        ~((pl.col("run_id") == "b") & pl.col("question_id").is_in(["q7", "q8"]))
    )
    message = r"runs 'a' and 'b' hold different questions \(2 only in 'a', 1 only in 'b', 9 in both\)"
    for statistic in (tell_apart, clustered_paired_comparisons, rank_intervals):
        with pytest.raises(ComparisonError, match=message):
            statistic(uneven)
    boot = ClusterBootstrap(uneven)
    with pytest.raises(ComparisonError, match=message):
        boot.tell_apart()
    with pytest.raises(ComparisonError, match=message):
        boot.rank_intervals()
    # A failed or unscored question is still the run's: the sets are the same, the statistics run.
    failed = q.with_columns(
        status=pl.when(pl.col("question_id") == "q0").then(pl.lit("failed")).otherwise("status")
    )
    assert len(tell_apart(failed, backend="polars"))
    # The report's tables say why instead of failing.
    assert "hold different questions" in tables.table_tell_apart(uneven).html
    uncertainty = tables.table_uncertainty(uneven)
    assert "No ranks or paired verdicts" in uncertainty.html and uncertainty.frame["rank"].is_null().all()
    # paired_comparison compares two runs on the questions both scored and says the sets differ.
    result = paired_comparison(uneven, "a", "b")
    assert result.n_pairs == 9 and not result.like_for_like
    assert "question sets differ (2 only in a, 1 only in b)" in result.warning


def test_methods_are_named_and_independent_needs_zero_one_scores() -> None:
    rng = np.random.default_rng(1)
    a, b = (x[0] for x in graded_pairs(rng, 1, np.full(8, 5)))
    graded = questions({"a": a, "b": b}, np.full(8, 5), graded=True)
    with pytest.raises(ValueError, match=r"needs 0/1 scores.*'a' and 'b' are graded"):
        paired_comparison(graded, "a", "b", method="independent")
    with pytest.raises(ValueError, match="method must be one of"):
        paired_comparison(graded, "a", "b", method="mcnemar")  # type: ignore[arg-type]
    q = one_haystack_example()
    assert "Clustered" in paired_comparison(q, "a", "b")._repr_html_()
    html = tables.table_paired(q, method="independent").html
    assert "McNemar exact" in html and "Independent" in html and "overstate certainty" in html
