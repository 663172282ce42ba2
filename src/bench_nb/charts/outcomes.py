"""The question-by-run outcome matrix: where providers differ, question by question."""

from __future__ import annotations

from typing import Any

import polars as pl

from bench_nb.charts.labels import OUTCOMES, outcome_expr, run_labels, with_run_label
from bench_nb.charts.spec import Chart, chart, field, mark, values
from bench_nb.charts.theme import OUTCOME_COLORS
from bench_nb.metrics import as_questions
from bench_nb.text import question_href


def chart_outcome_matrix(
    data: Any,
    *,
    max_questions: int = 120,
    title: str = "Outcome per question and run",
    explore: str | None = None,
) -> Chart:
    """One cell per (question, run), coloured by outcome (correct, incorrect, unscored, failed, ...).

    Questions on which the runs' outcomes differ come first; at most ``max_questions`` rows are drawn
    (the subtitle says how many of how many), so a 100,000-question run stays a readable chart.

    Args:
        max_questions: the most questions (rows) to draw.
        explore: the explore report's address relative to the page (``explore.html``): each cell then links
            to its question's detail there (``explore.html#q=<question id>``).
    """
    questions = as_questions(data)
    labels = run_labels(questions)
    cells = with_run_label(
        questions.select("run_id", "question_id", "question_type_norm", "question", outcome=outcome_expr()),
        labels,
    )
    order = cells.select("question_id").unique(maintain_order=True).with_row_index("position")
    spread = cells.group_by("question_id").agg(distinct=pl.col("outcome").n_unique())
    ranked = order.join(spread, on="question_id").sort(["distinct", "position"], descending=[True, False])
    total = len(ranked)
    differing = int((ranked["distinct"] > 1).sum())
    keep = ranked.head(max_questions)
    shown = cells.join(keep.select("question_id", "position"), on="question_id").sort("position")
    shown = shown.with_columns(pl.col("question").str.slice(0, 120))
    subtitle = (
        f"{differing} of {total} questions differ between runs; showing {len(keep)} (those that differ first)"
    )
    links: dict[str, Any] = {}
    if explore:
        hrefs = {q: question_href(explore, q) for q in keep["question_id"].to_list()}
        shown = shown.with_columns(href=pl.col("question_id").replace_strict(hrefs, return_dtype=pl.String))
        links = {"href": field("href:N")}
        subtitle += "; click a cell for its question's detail"
    run_order = list(labels.values())
    outcome_scale = {"domain": list(OUTCOMES), "range": [OUTCOME_COLORS[o] for o in OUTCOMES]}
    return chart(
        {
            "data": values(shown),
            "mark": mark("rect", stroke="white", strokeWidth=0.5),
            "encoding": {
                # Labels slanted up and to the right of their column: level, two long labels of one
                # harness ("evermemos · gpt-4.1-mini-cot" and "... -memos") overprinted each other.
                "x": field(
                    "run:N",
                    title=None,
                    sort=run_order,
                    axis={
                        "labelAngle": -35,
                        "labelAlign": "left",
                        "labelBaseline": "middle",
                        "orient": "top",
                    },
                ),
                "y": field(
                    "question_id:N",
                    title=None,
                    sort=keep["question_id"].to_list(),
                    axis={"labelFontSize": 9},
                ),
                "color": field("outcome:N", title="outcome", scale=outcome_scale),
                **links,
                "tooltip": [
                    field("run:N"),
                    field("question_id:N", title="question id"),
                    field("question_type_norm:N", title="type"),
                    field("question:N"),
                    field("outcome:N"),
                ],
            },
            "title": {"text": title, "subtitle": subtitle},
            "width": {"step": 70},
            "height": {"step": 11},
        }
    )
