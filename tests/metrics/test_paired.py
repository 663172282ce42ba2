"""Paired comparison of two runs: McNemar equals statsmodels, Newcombe's interval equals its published
example, and runs that are not like for like are flagged or refused."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from bench_nb import judgments_df, questions_df
from bench_nb.errors import ComparisonError
from bench_nb.metrics.paired import (
    mcnemar_test,
    newcombe_paired_interval,
    paired_comparison,
    paired_comparisons,
)


@pytest.mark.parametrize("seed", range(40))
def test_mcnemar_equals_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    both, neither = (int(x) for x in rng.integers(0, 50, 2))
    a_only, b_only = (int(x) for x in rng.integers(0, 35, 2))
    stat, p, method = mcnemar_test(a_only, b_only)
    exact = a_only + b_only < 25
    ref = sm_mcnemar([[both, a_only], [b_only, neither]], exact=exact, correction=True)
    assert method == ("exact" if exact else "chi2-cc")
    assert math.isclose(stat, ref.statistic, abs_tol=1e-9) and math.isclose(p, ref.pvalue, abs_tol=1e-9)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 7), (12, 12), (30, 0), (13, 12)])
def test_mcnemar_degenerate_and_boundary(b: int, c: int) -> None:
    stat, p, method = mcnemar_test(b, c)
    ref = sm_mcnemar([[5, b], [c, 5]], exact=b + c < 25, correction=True)
    assert math.isclose(stat, ref.statistic, abs_tol=1e-9) and math.isclose(p, ref.pvalue, abs_tol=1e-9)
    assert method == ("exact" if b + c < 25 else "chi2-cc")  # 25 discordant pairs switch to chi-square


def test_newcombe_published_example() -> None:
    # Cavo et al. (2012), in Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables,
    # ch. 8: table [[59, 6], [16, 80]], estimate -0.0621, Newcombe square-and-add 95% CI -0.1186 to -0.0046.
    low, high = newcombe_paired_interval(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)


@pytest.mark.parametrize("seed", range(30))
def test_newcombe_interval_is_sane(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cells = [int(x) for x in rng.integers(0, 30, 4)]
    n = sum(cells)
    low, high = newcombe_paired_interval(*cells)
    if n == 0:
        assert math.isnan(low) and math.isnan(high)
        return
    d = (cells[1] - cells[2]) / n
    assert -1 <= low <= d + 1e-12 and d - 1e-12 <= high <= 1


def test_newcombe_empty_and_extreme() -> None:
    assert all(math.isnan(x) for x in newcombe_paired_interval(0, 0, 0, 0))
    low, high = newcombe_paired_interval(0, 20, 0, 0)  # A right on every question, B on none
    assert high == 1.0 and 0.7 < low < 1.0


ANSWERS = {q: "a" for q in ("q1", "q2", "q3", "q4", "q5", "q6")}


def _pair(make_run, b_settings=None, b_primary="contains", **kw):
    a = make_run(
        "a",
        provider="alpha",
        answers=ANSWERS,
        bench_nb={"k": 10, "answerer": "extractive"},
        primary_scores={"q1": 1, "q2": 1, "q3": 1, "q4": 0, "q5": 1, "q6": None},
        verdicts={"strict": {"q1": 1, "q2": 0, "q3": 0, "q4": 0, "q5": 1, "q6": 0}},
    )
    b = make_run(
        "b",
        provider="beta",
        answers={**ANSWERS, "q5": None},
        primary=b_primary,
        bench_nb=b_settings if b_settings is not None else {"k": 10, "answerer": "extractive"},
        primary_scores={"q1": 1, "q2": 0, "q3": 0, "q4": 1, "q6": 1},
        verdicts={"strict": {"q1": 1, "q2": 1, "q3": 0, "q4": 0, "q6": 0}},
        **kw,
    )
    return a, b


def test_paired_comparison_counts_and_statistics(make_run) -> None:
    a, b = _pair(make_run)
    result = paired_comparison([a, b], "a", "b", method="independent")
    # Paired: q1-q4 (q5 failed in b, q6 unscored in a): a = (1,1,1,0), b = (1,0,0,1).
    assert (result.n_pairs, result.n_dropped) == (4, 2)
    assert (result.both_correct, result.a_only, result.b_only, result.both_incorrect) == (1, 2, 1, 0)
    assert result.accuracy_a == 0.75 and result.accuracy_b == 0.5 and result.difference == 0.25
    ref = sm_mcnemar([[1, 2], [1, 0]], exact=True)
    assert result.method == "independent"
    assert result.test == "McNemar exact" and math.isclose(result.p_value, ref.pvalue)
    assert (result.ci_low, result.ci_high) == newcombe_paired_interval(1, 2, 1, 0)
    assert result.like_for_like and result.warning == ""
    assert (result.provider_a, result.provider_b) == ("alpha", "beta")
    by_type = result.by_type.set_index("question_type_norm")
    assert by_type.loc["single-hop", "n_pairs"] == 2 and by_type.loc["single-hop", "a_only"] == 1
    assert by_type["n_pairs"].sum() == 4
    # The same numbers from a questions frame.
    again = paired_comparison(questions_df([a, b]), "a", "b", method="independent")
    assert again.as_dict() | {"warning": ""} == result.as_dict() | {"warning": ""}


def test_paired_comparison_with_another_judge(make_run) -> None:
    a, b = _pair(make_run)
    result = paired_comparison([a, b], "a", "b", judge="strict")
    # strict: a = (1,0,0,0,1,0) on q1-q6, b = (1,1,0,0,-,0): q5 missing in b.
    assert (result.n_pairs, result.n_dropped) == (5, 1)
    assert (result.both_correct, result.a_only, result.b_only, result.both_incorrect) == (1, 0, 1, 3)
    assert result.judge == "strict" and result.like_for_like
    from_frame = paired_comparison(judgments_df([a, b]), "a", "b", judge="strict")
    assert from_frame.p_value == result.p_value and from_frame.n_pairs == 5


def test_not_like_for_like_is_flagged_or_refused(make_run) -> None:
    a, b = _pair(make_run, b_settings={"k": 30, "answerer": "extractive"}, b_primary="gpt-4o")
    result = paired_comparison([a, b], "a", "b")
    assert not result.like_for_like
    # the differences settings_differences names for check_like_for_like and the settings table
    assert result.warning == "retrieval limit k differs: a=10, b=30; judge differs: a=contains, b=gpt-4o"
    with pytest.raises(ComparisonError, match=r"not like for like.*k differs"):
        paired_comparison([a, b], "a", "b", require_like_for_like=True)


def test_different_question_sets_are_flagged(make_run) -> None:
    a = make_run("a", answers={"q1": "x", "q2": "y"}, bench_nb={}, primary_scores={"q1": 1, "q2": 0})
    b = make_run("b", answers={"q1": "x", "q3": "y"}, bench_nb={}, primary_scores={"q1": 1, "q3": 1})
    result = paired_comparison([a, b], "a", "b")
    assert result.n_pairs == 1 and result.n_dropped == 2
    assert "question sets differ (1 only in a, 1 only in b)" in result.warning


def test_unknown_run_and_self_comparison(make_run) -> None:
    a, b = _pair(make_run)
    with pytest.raises(ComparisonError, match="'zzz' is not in the data"):
        paired_comparison([a, b], "a", "zzz")
    with pytest.raises(ComparisonError, match="itself"):
        paired_comparison([a, b], "a", "a")


def test_paired_comparisons_all_pairs_with_holm(make_run) -> None:
    a, b = _pair(make_run)
    c = make_run(
        "c",
        provider="gamma",
        answers=ANSWERS,
        bench_nb={"k": 10, "answerer": "extractive"},
        primary_scores=dict.fromkeys(ANSWERS, 0),
    )
    table = paired_comparisons([a, b, c], backend="polars")
    assert table.select("run_a", "run_b").rows() == [("a", "b"), ("a", "c"), ("b", "c")]
    assert set(table["question_type_norm"]) == {"all"}
    ps = table["p_value"].to_list()
    from statsmodels.stats.multitest import multipletests

    assert table["p_value_holm"].to_list() == pytest.approx(list(multipletests(ps, method="holm")[1]))
    detailed = paired_comparisons([a, b, c], by_type=True, backend="polars")
    assert detailed.filter(pl.col("question_type_norm") == "all").height == 3
    assert detailed.filter(pl.col("question_type_norm") != "all")["p_value_holm"].is_null().all()
    ab_types = detailed.filter((pl.col("run_b") == "b") & (pl.col("question_type_norm") != "all"))
    assert ab_types["n_pairs"].sum() == 4


def test_a_report_kernel_works_out_the_paired_frame_of_its_runs_once(make_run, monkeypatch) -> None:
    # The compare report's summary (neighbours) and its full paired table ask for the same pairs of the same
    # loaded runs: in a report kernel the second gets the first's frame; elsewhere each call computes it.
    from bench_nb.metrics.paired import paired_comparisons_frame
    from bench_nb.runformat.load import load_runs

    a, b = _pair(make_run)
    runs = load_runs([a, b])
    alone = paired_comparisons_frame(runs)
    assert paired_comparisons_frame(runs) is not alone
    monkeypatch.setenv("BENCH_NB_REPORT", "1")
    first = paired_comparisons_frame(runs)
    assert paired_comparisons_frame(runs) is first and first.equals(alone)
    assert paired_comparisons_frame(runs, by_type=True) is not first  # another frame: worked out on its own
    assert paired_comparisons_frame(runs, method="independent")["test"].to_list() == ["McNemar exact"]
    assert paired_comparisons_frame(runs, judge="strict")["n_pairs"].to_list() == [5]  # not the primary's


def test_holm_adjust_equals_statsmodels_on_random_p_values_with_ties() -> None:
    import numpy as np
    from statsmodels.stats.multitest import multipletests

    from bench_nb.metrics.paired import holm_adjust

    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 17):
        ps = list(rng.choice([0.001, 0.01, 0.04, 0.2, 0.5, 0.9], size=n)) + list(rng.random(n))
        assert holm_adjust(ps) == pytest.approx(list(multipletests(ps, method="holm")[1]), abs=1e-12)


def test_mcnemar_matches_statsmodels_without_scipy_on_either_side_of_the_exact_cutoff() -> None:
    from statsmodels.stats.contingency_tables import mcnemar

    from bench_nb.metrics.paired import mcnemar_test

    for b, c in [(0, 0), (0, 1), (3, 9), (12, 12), (10, 14), (13, 12), (30, 11), (100, 70)]:
        statistic, p, method = mcnemar_test(b, c)
        if method == "none":
            continue
        ref = mcnemar([[5, b], [c, 5]], exact=method == "exact", correction=True)
        assert p == pytest.approx(ref.pvalue, abs=1e-12)
        assert statistic == pytest.approx(ref.statistic, abs=1e-12)
