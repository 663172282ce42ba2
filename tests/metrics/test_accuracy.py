"""Wilson intervals (against statsmodels and the formula), accuracy per type and success rate."""

from __future__ import annotations

import importlib
import json
import math
import re
from pathlib import Path

import polars as pl
import pytest
from metric_frames import frame, row
from polars.testing import assert_frame_equal
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

import bench_nb as bn
from bench_nb.frames.questions import questions_frame
from bench_nb.metrics import accuracy, accuracy_by_type, success_rate, wilson_interval

CASES = [
    (0, 1),
    (1, 1),
    (0, 5),
    (5, 5),
    (1, 2),
    (3, 7),
    (16, 19),
    (50, 100),
    (1, 1000),
    (999, 1000),
    (4321, 10000),
]


def _formula(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson (1927), in the centre ± half-width form: (k + z²/2 ± z·sqrt(k(n−k)/n + z²/4)) / (n + z²)."""
    z = norm.ppf(1 - (1 - confidence) / 2)
    centre = k + z * z / 2
    half = z * math.sqrt(k * (n - k) / n + z * z / 4)
    return (centre - half) / (n + z * z), (centre + half) / (n + z * z)


@pytest.mark.parametrize(("k", "n"), CASES)
def test_wilson_equals_statsmodels_and_the_formula(k: int, n: int) -> None:
    low, high = wilson_interval(k, n)
    sm_low, sm_high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (low, high) == pytest.approx((sm_low, sm_high), rel=1e-12, abs=1e-15)
    assert (low, high) == pytest.approx(_formula(k, n), rel=1e-12, abs=1e-15)
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_other_confidence_and_edges() -> None:
    assert wilson_interval(3, 7, 0.9) == pytest.approx(proportion_confint(3, 7, alpha=0.1, method="wilson"))
    assert wilson_interval(0, 4)[0] == 0.0 and wilson_interval(4, 4)[1] == 1.0
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(5, 4)


def test_accuracy_counts_scored_answers_with_intervals() -> None:
    df = frame(
        row(True),
        row(True),
        row(False),
        row(None, unscored=True),
        row(None, status="failed"),
        row(True, run_id="run-b"),
    )
    out = accuracy(df, backend="polars")
    a = out.row(0, named=True)
    assert (a["run_id"], a["scored"], a["correct"], a["unscored"]) == ("run-a", 3, 2, 1)
    assert a["accuracy"] == 2 / 3 and (a["ci_low"], a["ci_high"]) == wilson_interval(2, 3)
    assert out["run_id"].to_list() == ["run-a", "run-b"]


def test_accuracy_by_type_keeps_unknown_types() -> None:
    df = frame(
        row(True, question_type="banana", question_type_norm="other"),
        row(False, question_type="banana", question_type_norm="other"),
        row(True, question_type="temporal", question_type_norm="temporal"),
    )
    norm_types = accuracy_by_type(df, backend="polars")
    assert norm_types["question_type_norm"].to_list() == ["other", "temporal"]
    assert norm_types["accuracy"].to_list() == [0.5, 1.0]
    raw = accuracy_by_type(df, raw=True, backend="polars")
    assert raw["question_type"].to_list() == ["banana", "temporal"]


def test_all_failed_run_has_no_accuracy_but_a_success_rate_of_zero() -> None:
    df = frame(*[row(None, status="failed") for _ in range(4)], row(None, status="pending"))
    assert accuracy(df, backend="polars").is_empty()
    s = success_rate(df, backend="polars").row(0, named=True)
    assert (s["target"], s["evaluated"], s["failed"], s["pending"], s["success_rate"]) == (5, 0, 4, 1, 0.0)
    assert (s["ci_low"], s["ci_high"]) == pytest.approx(wilson_interval(0, 5))


def test_example_accuracy_and_success_rate(mb_example: Path) -> None:
    report = json.loads((mb_example / "expected" / "report.json").read_text())
    df = questions_frame(mb_example / "data" / "runs" / "fx-compare-supermemory")
    overall = accuracy(df, backend="polars").row(0, named=True)
    assert overall["accuracy"] == report["summary"]["accuracy"]
    assert (overall["scored"], overall["correct"]) == (19, 16)
    by_type = accuracy_by_type(df, raw=True, backend="polars")
    got = {
        r["question_type"]: (r["scored"], r["correct"], r["accuracy"]) for r in by_type.iter_rows(named=True)
    }
    expected = {t: (b["total"], b["correct"], b["accuracy"]) for t, b in report["byQuestionType"].items()}
    assert got == expected
    assert by_type["question_type"].to_list() == list(report["byQuestionType"])  # order of first appearance
    s = success_rate(df, backend="polars").row(0, named=True)
    assert (s["target"], s["evaluated"], s["failed"], s["success_rate"]) == (20, 19, 1, 0.95)
    true_types = accuracy_by_type(df, backend="polars").filter(pl.col("question_type_norm") == "single-hop")
    assert true_types["scored"].to_list() == [report["byQuestionType"]["world-knowledge"]["total"]]


FIXTURE_RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


BY_TABLES = [
    "accuracy.accuracy_frame",
    "accuracy.accuracy_by_type_frame",
    "accuracy.success_rate_frame",
    "accuracy.accuracy_across_benchmarks",
    "latency.latency_stats_frame",
    "retrieval.retrieval_summary_frame",
    "tokens.token_summary_frame",
]


@pytest.mark.parametrize("name", BY_TABLES)
def test_by_a_column_name_is_one_column_not_its_letters(name: str) -> None:
    """``by="provider"`` groups by the provider column, as ``by=["provider"]`` does (it was read letter by
    letter: polars' ColumnNotFoundError for a column "p")."""
    module, function = name.split(".")
    fn = getattr(importlib.import_module(f"bench_nb.metrics.{module}"), function)
    q = questions_frame(sorted(FIXTURE_RUNS.iterdir()))
    by_name, by_list = fn(q, by="provider"), fn(q, by=["provider"])
    assert "provider" in by_name.columns and "run_id" not in by_name.columns
    assert_frame_equal(by_name, by_list)
    assert by_name["provider"].n_unique() == q["provider"].n_unique()


@pytest.mark.parametrize("name", [*BY_TABLES, "budget.lafs_frame"])
def test_a_by_column_the_frame_lacks_is_named_with_the_nearest_and_the_columns(name: str) -> None:
    """A typo in ``by`` names the value, the nearest column and the frame's columns (it was polars'
    ``"provder" not found`` from inside the table's code, or lafs' "the frame has no such column")."""
    module, function = name.split(".")
    fn = getattr(importlib.import_module(f"bench_nb.metrics.{module}"), function)
    q = questions_frame(sorted(FIXTURE_RUNS.iterdir()))
    with pytest.raises(ValueError, match="by='provder'") as raised:
        fn(q, by="provder")
    assert "(did you mean 'provider'?)" in str(raised.value)
    assert "its columns: run_id, harness, provider" in str(raised.value)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda q: bn.accuracy_intervals(q, confidence=95),
            "confidence must be a fraction in (0, 1), such as 0.95, not 95",
        ),
        (
            lambda q: bn.budget_curve(q, confidence=95),
            "confidence must be a fraction in (0, 1), such as 0.95, not 95",
        ),
        (
            lambda q: bn.beam_scores(q, confidence=95),
            "confidence must be a fraction in (0, 1), such as 0.95, not 95",
        ),
        (
            lambda q: bn.corrected_accuracy(0.7, 0.9, 0.9, confidence=95),
            "confidence must be a fraction in (0, 1)",
        ),
        (lambda q: bn.compare_runs(q, alpha=5), "alpha must be a fraction in (0, 1), such as 0.05, not 5"),
        (lambda q: bn.rank_intervals(q, alpha=5), "alpha must be a fraction in (0, 1), such as 0.05, not 5"),
    ],
    ids=[
        "accuracy_intervals",
        "budget_curve",
        "beam_scores",
        "corrected_accuracy",
        "compare_runs",
        "rank_intervals",
    ],
)
def test_a_confidence_or_alpha_given_in_percent_is_named(call, message: str) -> None:
    """``confidence=95`` (for 0.95) failed as the normal quantile's own "p must be in the range 0.0 < p < 1.0"
    (statistics.StatisticsError), ``alpha=5`` as "q must be in (0, 1), got -1.5"; beam_scores went on."""
    q = questions_frame(sorted(FIXTURE_RUNS.iterdir()))
    with pytest.raises(ValueError, match=re.escape(message)):
        call(q)


def test_a_runs_frame_given_for_questions_is_named() -> None:
    """``success_rate(runs_df(...))`` (runs_df: one row per run) gave each run a target of 1 question, 0
    evaluated and a success rate of 0, without a word; memscore failed on a missing column."""
    runs = sorted(FIXTURE_RUNS.iterdir())
    per_run = bn.runs_df(runs)
    for function in (bn.success_rate, bn.memscore, bn.accuracy_intervals):
        with pytest.raises(
            ValueError, match=r"a runs frame \(runs_df: one row per run\) where a questions frame"
        ):
            function(per_run)
