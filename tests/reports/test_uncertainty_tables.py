"""The compare report's uncertainty tables and charts: built from the fixture runs and from hand-made
clustered frames, with the numbers taken from bench_nb.metrics and run text escaped."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import bench_nb
from bench_nb import charts, tables
from bench_nb.metrics.pareto import compared_objectives, dominates

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stats"))
from clustered_sim import LOCOMO_SIZES, frame

FIXTURE_GLOB = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")


@pytest.fixture(scope="module")
def fixtures() -> pl.DataFrame:
    return bench_nb.questions_df(FIXTURE_GLOB, backend="polars")


def _clustered() -> pl.DataFrame:
    rng = np.random.default_rng(11)
    n = int(LOCOMO_SIZES.sum())
    hay = np.repeat(np.arange(10), LOCOMO_SIZES)
    level = rng.normal(0, 0.12, 10)[hay]
    a = (rng.random(n) < 0.72 + level).astype(float)
    b = np.where(rng.random(n) < 0.93, a, 0.0)  # a little worse, on the same questions
    q = frame({"<b>a</b>": a, "b": b})
    return q.with_columns(
        provider=pl.col("run_id"),
        question_type_norm=pl.Series(np.tile(np.where(np.arange(n) % 3 == 0, "temporal", "single-hop"), 2)),
    )


def test_uncertainty_table_matches_the_metrics(fixtures: pl.DataFrame) -> None:
    table = tables.table_uncertainty(fixtures)
    data = table.frame
    runs = fixtures["run_id"].n_unique()
    overall = data.filter(pl.col("question_type") == "all")
    assert overall.height == runs
    ref = bench_nb.accuracy_intervals(fixtures, backend="polars")
    ranks = bench_nb.rank_intervals(fixtures, backend="polars")
    joined = overall.join(ref, on="run_id", suffix="_ref").join(ranks, on="run_id", suffix="_rank")
    for r in joined.iter_rows(named=True):
        assert r["ci_low"] == r["ci_low_ref"] and r["design_effect"] == r["design_effect_ref"]
        assert (r["rank"], r["rank_low"], r["rank_high"], r["group"]) == (
            r["rank_rank"],
            r["rank_low_rank"],
            r["rank_high_rank"],
            r["group_rank"],
        )
    assert table.html.count("<tr>") == 1 + data.height
    assert "rank [95% CI]" in table.html and "design effect" in table.html


def test_tell_apart_table_marks_where_the_rules_disagree_and_escapes_run_text() -> None:
    q = _clustered()
    table = tables.table_tell_apart(q)
    assert "&lt;b&gt;a&lt;/b&gt;" in table.html and "<b>a</b>" not in table.html
    data = table.frame
    assert data["question_type"].to_list() == ["all", "temporal", "single-hop"]  # in order of appearance
    assert table.html.count("disagrees") == int((~data["agree"]).sum())
    assert data.row(0, named=True)["verdict"] == "A higher"


def test_detectable_table_per_type() -> None:
    q = _clustered()
    table = tables.table_detectable(q)
    assert table.frame["question_type"].to_list() == [
        "all",
        "temporal",
        "single-hop",
    ]  # in order of appearance
    row = table.frame.row(0, named=True)
    assert f"{row['mde'] * 100:.1f} pts" in table.html


def test_pareto_dominance() -> None:
    a = {"accuracy": 0.8, "search_ms": 100.0, "context_tokens": 500.0, "cost_usd": None}
    b = {"accuracy": 0.7, "search_ms": 200.0, "context_tokens": 500.0, "cost_usd": 0.01}
    c = {"accuracy": 0.9, "search_ms": 900.0, "context_tokens": 400.0, "cost_usd": None}
    three = ("accuracy", "search_ms", "context_tokens")
    assert dominates(a, b, three) and not dominates(b, a, three)
    assert not dominates(a, c, three) and not dominates(c, a, three)  # a trade-off: both on the frontier
    assert not dominates(a, dict(a), three)  # equal on everything: neither dominates
    assert not dominates(a, b) and not dominates(b, a)  # on all four: a has no cost, so not comparable


def test_pareto_table_and_chart(fixtures: pl.DataFrame) -> None:
    table = tables.table_pareto(fixtures)
    data = table.frame
    assert data.height == fixtures["run_id"].n_unique()
    rows = data.to_dicts()
    objectives = compared_objectives(rows)
    for r in rows:
        others = [o for o in rows if o is not r]
        assert r["on_frontier"] == (not any(dominates(o, r, objectives) for o in others))
    assert data["on_frontier"].any()
    spec = charts.chart_spec(charts.chart_pareto(fixtures))
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    assert len(spec["concat"]) >= 2 and spec["columns"] == 2  # latency and tokens panels, two a row


def test_interval_chart_has_both_intervals(fixtures: pl.DataFrame) -> None:
    spec = charts.chart_spec(charts.chart_accuracy_intervals(fixtures))
    values = next(iter(spec["datasets"].values()))
    kinds = {v["kind"] for v in values}
    assert kinds == {"clustered (haystacks)", "Wilson (independent)"}
    for v in values:
        if v["ci_low"] is not None and not math.isnan(v["ci_low"]):
            assert v["ci_low"] <= v["accuracy"] <= v["ci_high"]


def test_repeats_table_splits_the_judge_part_from_replicates(locomo_audit: Path) -> None:
    runs = locomo_audit / "fc-baseline"
    src = str(runs / "*")
    q = bench_nb.questions_df(src, backend="polars")
    table = tables.table_repeats(q, bench_nb.judgments_df(src, backend="polars"))
    assert table.frame["replicates"].to_list() == [3, 3]
    summary = bench_nb.replicate_summary(src, backend="polars")
    for sd in summary["accuracy_sd_sample"].to_list():  # percent points, as the table shows them
        assert f"{sd:.2f} pts" in table.html
    assert "nothing to split" not in table.html


def test_repeats_table_without_repeats_says_so(fixtures: pl.DataFrame) -> None:
    table = tables.table_repeats(fixtures)
    assert "nothing to split" in table.html


def test_chart_specs_are_strict_json(fixtures: pl.DataFrame) -> None:
    import json

    for chart in (charts.chart_accuracy_intervals(fixtures), charts.chart_pareto(fixtures)):
        json.dumps(charts.chart_spec(chart), allow_nan=False)  # no NaN: JupyterLab refuses it


def test_tell_apart_table_gives_an_interval_from_two_haystacks_and_says_when_there_is_one() -> None:
    # Four haystacks where A beats B on every question: every haystack agrees (no spread), so p is the sign
    # test of their agreement, 2/2^4 = 0.125, and the interval from 0 to the difference holds 0. Until issue
    # 39 such rows had no interval (the sign-flip test); the CR2 t gives one from 2 haystacks.
    sizes = np.array([5, 8, 6, 7])
    n = int(sizes.sum())
    q = frame({"a": np.ones(n), "b": np.zeros(n)}, sizes, question_type_norm="single-hop")
    q = q.with_columns(provider=pl.col("run_id"))
    table = tables.table_tell_apart(q)
    row = table.frame.row(0, named=True)
    assert row["p_value"] == 0.125 and row["verdict"] == "cannot tell"
    assert (row["ci_low"], row["ci_high"]) == (0.0, 1.0)
    assert "+100.0 pts [+0.0, +100.0]" in table.html and "no interval" not in table.html
    assert "CR2 cluster-robust t on Bell-McCaffrey degrees of freedom" in table.html
    # One haystack: no test at all, said so; ten haystacks: an interval and no warning.
    one = frame({"a": np.ones(9), "b": np.zeros(9)}, np.array([9]), question_type_norm="x")
    one = tables.table_tell_apart(one.with_columns(provider=pl.col("run_id")))
    assert "one haystack: no test" in one.html and 'bnb-warning">' not in one.html
    ten = tables.table_tell_apart(_clustered())
    assert "no interval" not in ten.html and 'bnb-warning">' not in ten.html


def test_uncertainty_table_flags_an_interval_that_may_under_cover_and_names_the_effective_haystacks() -> None:
    # Run "high": 9 haystacks all right and one 30 of 40: one effective wrong answer, so its clustered
    # interval carries a warning; run "mid" (about 60%, no haystack effect) does not.
    sizes = np.full(10, 40)
    high = np.r_[np.arange(40) < 30, np.ones(360, dtype=bool)]
    mid = np.random.default_rng(3).random(400) < 0.6
    q = frame({"high": high, "mid": mid}, sizes).with_columns(
        provider=pl.col("run_id"), question_type_norm=pl.lit("t")
    )
    table = tables.table_uncertainty(q)
    flagged = table.frame.filter(pl.col("warning").is_not_null())
    assert sorted(set(flagged["run_id"])) == ["high"]
    assert flagged["warning"][0].endswith("in 10.0 effective haystacks of 10")
    assert table.html.count("may under-cover</span>") == flagged.height == 2  # overall and its one type
    assert "2 intervals marked" in table.html
    assert table.frame["effective_clusters"].to_list() == pytest.approx([10.0] * 4)


def test_uncertainty_table_shows_the_unscored_bounds_when_the_runs_unscored_rates_differ() -> None:
    # Issue 39, item 5: run "b" leaves 10% of its questions unscored, all of them wrong answers (a judge that
    # fails on long wrong answers): complete-case it looks better than "a" (88.9% against 80%); its bounds
    # say 80-90%. The compare report renders this table (notebooks/compare.ipynb, "Uncertainty").
    sizes = np.full(10, 40)
    right = np.tile(np.arange(40) % 10 < 8, 10)  # 80% right in every haystack
    q = frame({"a": right, "b": right}, sizes).with_columns(
        provider=pl.col("run_id"), question_type_norm=pl.lit("t"), status=pl.lit("evaluated")
    )
    # in run "b", the wrong answers of question 9 of every 10 have no verdict: 40 of 400
    q = q.with_columns(unscored=(pl.col("run_id") == "b") & (pl.int_range(pl.len()).over("run_id") % 10 == 9))
    table = tables.table_uncertainty(q)
    overall = {
        r["run_id"]: r for r in table.frame.filter(pl.col("question_type") == "all").iter_rows(named=True)
    }
    assert overall["b"]["accuracy"] == pytest.approx(320 / 360)
    assert (overall["b"]["all_wrong"], overall["b"]["all_right"]) == pytest.approx((320 / 400, 360 / 400))
    assert (overall["a"]["all_wrong"], overall["a"]["all_right"]) == (0.8, 0.8)
    assert "<th>if unscored wrong–right</th>" in table.html
    assert "[80.0–90.0] (40 unscored)" in table.html and "[80.0–80.0] (0 unscored)" in table.html
    assert "Questions without a verdict (unscored, failed or not run): a 0.0%, b 10.0%" in table.html
    # the same rates in both runs, under 5%: no bounds column, no note
    same = q.with_columns(unscored=pl.int_range(pl.len()).over("run_id") == 9)
    plain = tables.table_uncertainty(same)
    assert "if unscored" not in plain.html and "without a verdict" not in plain.html


def test_the_compare_report_shows_the_unscored_bounds_of_runs_whose_unscored_rates_differ(
    tmp_path: Path,
) -> None:
    # Issue 39, item 5: the fixture runs, with 8 of sqlite's wrong answers left unscored (a judge that fails on
    # them): complete case sqlite (80.5%) passes full-context (77.6%); the report says how far that rests on them.
    import html
    import json
    import re
    import shutil

    from bench_nb.reports import build_report

    runs = tmp_path / "runs"
    shutil.copytree(Path(FIXTURE_GLOB).parent, runs)
    path = runs / "synthetic-sqlite" / "checkpoint.json"
    checkpoint = json.loads(path.read_text(encoding="utf-8"))
    lost = [
        qid
        for qid, q in checkpoint["questions"].items()
        if q["phases"]["evaluate"].get("status") == "completed" and q["phases"]["evaluate"].get("score") == 0
    ][:8]
    for qid in lost:
        checkpoint["questions"][qid]["phases"]["evaluate"].update(score=None, label="unscored")
    path.write_text(json.dumps(checkpoint), encoding="utf-8")
    verdicts = runs / "synthetic-sqlite" / "judgments.jsonl"
    lines = [json.loads(line) for line in verdicts.read_text(encoding="utf-8").splitlines()]
    for v in lines:
        if v["questionId"] in lost and v["judge"] == checkpoint["judge"]:
            v.update(score=None, label="unscored", unscored=True)
    verdicts.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    out = tmp_path / "compare.html"
    build_report("compare", {"runs": str(runs / "*"), "title": "unscored"}, out, index=False)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", out.read_text(encoding="utf-8"))).split())
    assert "if unscored wrong–right" in text
    assert "80.5% [65.3–90.1]" in text and "[66.0–84.0] (9 unscored)" in text  # 33 right of 50; + 9
    assert "77.6% [63.6–87.2]" in text and "[76.0–78.0] (1 unscored)" in text
    assert (
        "Questions without a verdict (unscored, failed or not run): full-context 2.0%, no-memory 2.0%, "
        "sqlite 18.0%" in text
    )


def test_tell_apart_collapses_the_types_it_cannot_tell_into_one_line() -> None:
    # Two runs right on the same questions: no type tells them apart; the four types are one line, not four.
    sizes = np.array([10] * 8)
    correct = np.resize(np.array([1.0, 0.0, 1.0, 1.0, 0.0]), int(sizes.sum()))
    q = frame({"a": correct, "b": correct}, sizes, question_type_norm="x")
    q = q.with_columns(provider=pl.col("run_id"))
    q = q.with_columns(
        question_type_norm=pl.int_range(pl.len())
        .over("run_id")
        .mod(4)
        .replace_strict(
            {0: "temporal", 1: "multi-hop", 2: "single-hop", 3: "open-domain"}, return_dtype=pl.String
        )
    )
    table = tables.table_tell_apart(q)
    assert table.frame.height == 5  # overall and four types: the numbers stay
    assert table.html.count("cannot tell on these 4 types") == 1
    assert table.html.count("<tr>") <= 3  # header, overall, the one line
