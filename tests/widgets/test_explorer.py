from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import bench_nb
from bench_nb.widgets import PRIMARY, Explorer
from synthetic_runs import HOSTILE_TEXT

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
    assert [value for _, value in e.question.options] == rows["question_id"].to_list()


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
        assert f">{provider}</b>" in html
    assert "<script>" not in html and "&lt;script&gt;alert(&quot;bench_nb&quot;)" in html
    assert "verdicts:" in html and "f1" in html and "contains" in html
    assert "retrieved context" in html
    assert HOSTILE_TEXT not in e.static_html()


def test_the_question_list_shows_question_text() -> None:
    e = Explorer(RUNS)
    label, value = e.question.options[0]
    assert value == "conv-1-q1" and label.startswith("conv-1-q1 · ") and len(label) > len(value) + 10
    assert e.questions.filter(pl.col("question_id") == value)["question"][0][:40] in label


def test_every_list_box_shows_all_its_options() -> None:
    e = Explorer(RUNS)
    for box in (e.providers, e.benchmarks, e.types, e.outcomes):
        assert box.rows >= min(len(box.options), 8), box.description


def test_the_static_export_holds_every_question_of_the_selection() -> None:
    e = Explorer(RUNS)
    page = e.static_html()
    n_questions = e.rows()["question_id"].n_unique()
    grid = e.grid_frame()
    assert grid.height == n_questions == 50 and page.count("class='bnb-detail'") == 50
    assert {"A: verdict", "A: answer", "B: verdict", "C: verdict", "judges", "A vs B"} <= set(grid.columns)
    e.providers.value = ("sqlite",)
    e.outcomes.value = ("failed",)
    failed = e.rows()["question_id"].to_list()
    grid = e.grid_frame()
    assert grid.height == len(failed) == 1 and failed[0] in grid["question"][0]
    assert "B: verdict" not in grid.columns and "A vs B" not in grid.columns
    assert HOSTILE_TEXT not in Explorer(RUNS).static_html(max_questions=5)
    assert "The first 5 of 50 questions" in Explorer(RUNS).static_html(max_questions=5)


def test_a_wrong_b_right_is_where_the_first_run_is_wrong_and_the_second_right() -> None:
    e = Explorer(RUNS)
    grid = e.grid_frame()
    a_wrong = grid.filter(pl.col("A vs B") == "A wrong, B right")
    assert a_wrong.height > 0
    assert set(a_wrong["A: verdict"]) == {"incorrect"} and set(a_wrong["B: verdict"]) == {"correct"}
    both = grid.filter(pl.col("A vs B") == "both right")
    assert set(both["A: verdict"]) == set(both["B: verdict"]) == {"correct"}


@pytest.mark.browser
def test_the_static_export_sorts_and_filters_in_a_browser_with_no_network(chromium_browser: Any) -> None:
    page = chromium_browser.new_page()
    outside: list[str] = []
    page.route("**/*", lambda r: (outside.append(r.request.url), r.abort()))
    try:
        page.set_content(f"<html><body>{Explorer(RUNS).static_html()}</body></html>")
        info = ".bnb-grid [id^=itables_][id$=_wrapper] .dt-info"
        page.locator(info).wait_for(timeout=30_000)
        assert "50 entries" in page.inner_text(info)
        page.fill(".bnb-grid [id^=itables_][id$=_wrapper] input[type=search]", "ines's cat")
        assert "1 entries" in page.inner_text(info) or "1 entry" in page.inner_text(info)
        page.click(".bnb-grid table[id^=itables_] tbody tr a")
        assert "retrieved context" in page.inner_text(".bnb-detail:target")
        assert outside == []
    finally:
        page.close()


def test_the_static_page_describes_only_the_filters_it_has() -> None:
    import json

    page = Explorer(RUNS).static_html()
    assert "sort by a column, search, filter with the panes" in page
    notebook = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "explore.ipynb").read_text())
    text = " ".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert "In a built report the widgets cannot run" in text
    assert '"A vs B" has "A wrong, B right"' in text


def test_abstention_no_context_and_an_outcome_filter_say_what_they_mean() -> None:
    """Abstention questions once showed a blank "ground truth:", no-memory "1. none", and filtering to incorrect
    answers "accuracy 0.0% [0.0–21.5%]"."""
    e = Explorer(RUNS)
    q = e.questions
    abstain = q.filter(pl.col("question_type_norm") == "abstention")["question_id"][0]
    page = e.detail_html(abstain)
    assert "should abstain" in page and "ground truth:" not in page
    bare = q.filter((pl.col("provider") == "no-memory") & (pl.col("search_result_count") == 0))
    page = e.detail_html(bare["question_id"][0])
    assert "no context retrieved" in page and "<li>none</li>" not in page
    assert "%" in e.summary.value  # all outcomes: accuracy with its interval
    e.outcomes.value = ("incorrect",)
    assert "— (filtered by outcome)" in e.summary.value and "0.0% [" not in e.summary.value


def test_selecting_a_grid_row_shows_its_question_and_the_grid_follows_the_filters() -> None:
    e = Explorer(RUNS)
    ids = e.rows()["question_id"].unique(maintain_order=True).to_list()
    assert len(e.grid.df) == len(ids) == 50
    assert list(e.grid.df.columns[:3]) == ["question", "type", "haystack"] and "A vs B" in e.grid.df.columns
    assert "<a " not in e.grid.df["question"][0]  # no link to a static detail: the row itself is selected
    e.grid.selected_rows = [7]  # what a click on the 8th row sends from JupyterLab
    assert e.question.value == ids[7] and f"<b>{ids[7]}</b>" in e.detail.value
    assert "bnb-gold" in e.detail.value  # the style that marks gold evidence comes with the detail
    e.providers.value = ("sqlite",)
    e.outcomes.value = ("incorrect",)
    wrong = e.rows()["question_id"].to_list()
    assert [re.search(r">([^<]+)</b>", q)[1] for q in e.grid.df["question"]] == wrong  # type: ignore[index]
    assert "B: verdict" not in e.grid.df.columns and "A vs B" not in e.grid.df.columns
    e.grid.selected_rows = [0]
    assert e.question.value == wrong[0]


def test_without_the_grid_nothing_of_it_is_made() -> None:
    e = Explorer(RUNS, grid=False)
    assert e.grid is None and "itables" not in repr(e.widget.children)


def test_a_judges_replicates_are_numbered_in_the_detail(locomo_audit: Path) -> None:
    """EverMemOS's three verdicts per answer are one judge's replicates: the detail names each (#1, #2, #3), so
    a split verdict is readable (before: three rows all "gpt-4o-mini")."""
    e = Explorer(str(locomo_audit / "fc-baseline" / "*"))
    v = e.judgments.filter(pl.col("replicate") == 3).row(0, named=True)
    page = e.detail_html(v["question_id"])
    assert all(f"<b>{v['judge']} #{r}</b>" in page for r in (1, 2, 3))
    assert f"<b>{v['judge']}</b>:" not in page
