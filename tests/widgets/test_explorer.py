from __future__ import annotations

from pathlib import Path

import polars as pl

import bench_nb
from bench_nb.demo_runs import HOSTILE_TEXT
from bench_nb.widgets import PRIMARY, Explorer

RUNS = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")


def test_filters_narrow_rows_and_the_summary_follows() -> None:
    e = Explorer(RUNS)
    assert len(e.rows()) == 150
    assert set(e.providers.options) == {"sqlite", "full-context", "no-memory"}
    assert "sqlite" in e.summary.value and "no-memory" in e.summary.value
    e.providers.value = ("sqlite",)
    assert set(e.rows()["provider"].to_list()) == {"sqlite"} and len(e.rows()) == 50
    assert "no-memory" not in e.summary.value
    e.types.value = ("temporal",)
    rows = e.rows()
    assert set(rows["question_type_norm"].to_list()) == {"temporal"}
    acc = bench_nb.accuracy_by_type(bench_nb.questions_df(RUNS, backend="polars"), backend="polars").filter(
        (pl.col("run_id") == "synthetic-sqlite") & (pl.col("question_type_norm") == "temporal")
    )
    assert f"{acc['accuracy'][0]:.1%}" in e.summary.value
    assert list(e.question.options) == rows["question_id"].to_list()


def test_outcome_and_judge_filters() -> None:
    e = Explorer(RUNS)
    e.outcomes.value = ("failed",)
    assert set(e.rows()["status"].to_list()) == {"failed"} and len(e.rows()) == 3
    e.outcomes.value = ("incorrect",)
    primary = set(e.rows().select("run_id", "question_id").iter_rows())
    e.judge.value = "contains"
    under_contains = set(e.rows().select("run_id", "question_id").iter_rows())
    j = bench_nb.judgments_df(RUNS, backend="polars").filter(
        (pl.col("judge") == "contains") & (pl.col("score") == 0)
    )
    assert under_contains == set(j.select("run_id", "question_id").iter_rows())
    assert primary != under_contains  # the fixture judges disagree on some answers
    e.judge.value = PRIMARY
    assert set(e.rows().select("run_id", "question_id").iter_rows()) == primary
    e.benchmarks.value = ()
    assert e.rows().is_empty() and "No (run, question)" in e.summary.value
    assert "No question matches" in e.detail.value


def test_detail_shows_every_run_side_by_side_escaped() -> None:
    e = Explorer(RUNS)
    e.question.value = "conv-1-q2"  # the fixtures' hostile answer
    html = e.detail.value
    for provider in ("sqlite", "full-context", "no-memory"):
        assert f"<b>{provider}</b>" in html
    assert "<script>" not in html and "&lt;script&gt;alert(&quot;bench_nb&quot;)" in html
    assert "verdicts:" in html and "f1" in html and "contains" in html
    assert "retrieved context" in html
    assert HOSTILE_TEXT not in e.static_html()
