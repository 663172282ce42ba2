"""Accuracy per question type, with Wilson 95% intervals."""

from __future__ import annotations

from typing import Any

import polars as pl

from bench_nb.charts.altair_import import alt
from bench_nb.charts.labels import color_scale, run_colors, run_labels, with_run_label
from bench_nb.metrics import as_questions
from bench_nb.metrics.accuracy import accuracy_by_type_frame


def chart_accuracy_by_type(
    data: Any, *, raw: bool = False, title: str = "Accuracy per question type"
) -> alt.TopLevelMixin:
    """One bar per (question type, run) with its 95% Wilson interval; ``n`` in the tooltip.

    Args:
        data: run sources or a questions frame.
        raw: group by the runs' own type labels instead of bench_nb's normalised types.
        title: the chart title.
    """
    questions = as_questions(data)
    acc = accuracy_by_type_frame(questions, raw=raw)
    type_col = "question_type" if raw else "question_type_norm"
    labels = run_labels(questions)
    acc = with_run_label(acc.filter(pl.col("scored") > 0), labels).rename({type_col: "type"})
    acc = acc.with_columns(pl.col("type").fill_null("(none)"))
    order = list(labels.values())
    base = alt.Chart(acc).encode(
        y=alt.Y("type:N", title=None, sort=None),
        yOffset=alt.YOffset("run:N", sort=order),
    )
    bars = base.mark_bar(opacity=0.85).encode(
        color=alt.Color("run:N", title="run", scale=color_scale(run_colors(questions, labels))),
        x=alt.X("accuracy:Q", title="accuracy", scale={"domain": [0, 1]}, axis={"format": "%"}),
        tooltip=[
            alt.Tooltip("run:N"),
            alt.Tooltip("type:N", title="question type"),
            alt.Tooltip("accuracy:Q", format=".1%"),
            alt.Tooltip("ci_low:Q", title="95% low", format=".1%"),
            alt.Tooltip("ci_high:Q", title="95% high", format=".1%"),
            alt.Tooltip("correct:Q"),
            alt.Tooltip("scored:Q", title="n"),
        ],
    )
    errors = base.mark_rule(color="#1f2328", strokeWidth=1.2).encode(
        x=alt.X("ci_low:Q"), x2=alt.X2("ci_high:Q")
    )
    return alt.layer(
        bars,
        errors,
        title={"text": title, "subtitle": "bars: accuracy; lines: 95% Wilson interval"},
        width=460,
        height={"step": 14},
    )
