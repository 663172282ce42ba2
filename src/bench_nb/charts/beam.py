"""BEAM's mean score per ability, per run, with the interval over chats (Student's t)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from bench_nb.charts.labels import color_scale, run_colors, run_labels, with_run_label
from bench_nb.charts.spec import Chart, chart, field, mark, values
from bench_nb.metrics import as_questions

if TYPE_CHECKING:
    from bench_nb.benchmarks.beam import PartialCredit


def chart_beam(
    data: Any, *, partial_credit: PartialCredit = "float", title: str = "BEAM: mean score per ability"
) -> Chart:
    """One point per (ability, run), the overall score last, with its 95% interval over chats (Student's t).

    Args:
        data: BEAM runs or a questions frame.
        partial_credit: ``"float"`` (0.5 as 0.5) or ``"as-published"`` (BEAM's code: 0.5 as 0).
    """
    from bench_nb.metrics.beam import READINGS, beam_scores_frame  # numpy: only for BEAM runs

    questions = as_questions(data)
    scores = beam_scores_frame(questions, partial_credit)
    labels = run_labels(questions)
    df = with_run_label(scores.filter(pl.col("score").is_not_null()), labels)
    df = df.with_columns(ability=pl.col("ability").str.replace_all("_", " "))
    order = list(labels.values())
    base = {
        "y": field("ability:N", title=None, sort=None),
        "yOffset": field("run:N", sort=order),
        "color": field("run:N", title="run", scale=color_scale(run_colors(questions, labels))),
    }
    points = {
        "mark": mark("point", filled=True, size=60),
        "encoding": base
        | {
            "x": field("score:Q", title="mean score", scale={"domain": [0, 1]}),
            "tooltip": [
                field("run:N"),
                field("ability:N"),
                field("score:Q", format=".3f"),
                field("ci_low:Q", title="95% low", format=".3f"),
                field("ci_high:Q", title="95% high", format=".3f"),
                field("chats:Q"),
                field("questions:Q"),
                field("partial:N"),
            ],
        },
    }
    errors = {
        "mark": mark("rule", strokeWidth=1.5),
        "encoding": base | {"x": field("ci_low:Q"), "x2": field("ci_high")},
    }
    subtitle = f"{READINGS[partial_credit]}; lines: 95% interval over chats (Student's t)"
    return chart(
        {
            "data": values(df),
            "layer": [errors, points],
            "title": {"text": title, "subtitle": subtitle},
            "width": 460,
            "height": {"step": 16},
        }
    )
