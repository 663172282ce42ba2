"""Accuracy per question type, with Wilson 95% intervals."""

from __future__ import annotations

from typing import Any

import polars as pl

from bench_nb.charts.labels import color_scale, run_colors, run_labels, with_run_label
from bench_nb.charts.spec import Chart, chart, field, mark, values
from bench_nb.metrics import as_questions
from bench_nb.metrics.accuracy import accuracy_by_type_frame


def chart_accuracy_by_type(
    data: Any, *, raw: bool = False, title: str = "Accuracy per question type"
) -> Chart:
    """One bar per (question type, run) with its 95% Wilson interval; ``n`` in the tooltip.

    Args:
        raw: group by the runs' own type labels instead of bench_nb's normalised types.
    """
    questions = as_questions(data)
    acc = accuracy_by_type_frame(questions, raw=raw)
    type_col = "question_type" if raw else "question_type_norm"
    labels = run_labels(questions)
    acc = with_run_label(acc.filter(pl.col("scored") > 0), labels).rename({type_col: "type"})
    acc = acc.with_columns(pl.col("type").fill_null("(none)"))
    order = list(labels.values())
    base = {"y": field("type:N", title=None, sort=None), "yOffset": field("run:N", sort=order)}
    bars = {
        "mark": mark("bar", opacity=0.85),
        "encoding": base
        | {
            "color": field("run:N", title="run", scale=color_scale(run_colors(questions, labels))),
            "x": field("accuracy:Q", title="accuracy", scale={"domain": [0, 1]}, axis={"format": "%"}),
            "tooltip": [
                field("run:N"),
                field("type:N", title="question type"),
                field("accuracy:Q", format=".1%"),
                field("ci_low:Q", title="95% low", format=".1%"),
                field("ci_high:Q", title="95% high", format=".1%"),
                field("correct:Q"),
                field("scored:Q", title="n"),
            ],
        },
    }
    errors = {
        "mark": mark("rule", color="#1f2328", strokeWidth=1.2),
        "encoding": base | {"x": field("ci_low:Q"), "x2": field("ci_high")},
    }
    return chart(
        {
            "data": values(acc),
            "layer": [bars, errors],
            "title": {"text": title, "subtitle": "bars: accuracy; lines: 95% Wilson interval"},
            "width": 460,
            "height": {"step": 14},
        }
    )
