"""Accuracy under a budget: each run's budget curve (``bench_nb.budget_curve``) with its clustered band."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from bench_nb.charts.labels import color_scale, run_colors, run_labels, with_run_label
from bench_nb.charts.spec import Chart, chart, field, mark, values
from bench_nb.metrics import as_questions
from bench_nb.metrics.budget import budget_curve_frame
from bench_nb.text import labelled_warnings

# by -> (what the budget limits, the axis title)
AXES = {
    "latency_ms": ("search latency", "search latency budget (ms)"),
    "context_tokens": ("context tokens", "context tokens budget"),
    "cost": ("cost", "cost budget per question (USD)"),
}


def chart_budget_curve(
    data: Any,
    *,
    by: str = "latency_ms",
    budgets: Sequence[float] | None = None,
    title: str | None = None,
) -> Chart:
    """Per run, accuracy when every question over the budget counts as not answered, at each budget (log
    scale), with its clustered 95% band; the numbers are ``bench_nb.budget_curve``'s.

    Args:
        data: run sources, a questions frame, or a ``ClusterBootstrap`` (its curve on the default budgets
            shared with ``table_budget`` and the other charts).
        by: ``"latency_ms"``, ``"context_tokens"``, ``"cost"`` or a numeric column.
        budgets: the budgets (default: 24 steps even in log scale up to the largest value).
        title: the chart title (default: "Accuracy under a ... budget").
    """
    from bench_nb.metrics.uncertainty import ClusterBootstrap  # numpy: imported when a chart is drawn

    boot = data if isinstance(data, ClusterBootstrap) else None
    q = as_questions(data if boot is None else boot.questions)
    labels = run_labels(q)
    with labelled_warnings(labels):  # its warnings name runs by the chart's labels
        if boot is not None and budgets is None:
            curve = boot.budget_curve(by)
        else:
            curve = budget_curve_frame(q, by, budgets)
    frame = with_run_label(
        curve.filter(pl.col("budget") > 0).with_columns(pl.col(pl.Float64).fill_nan(None)), labels
    )
    shown = [label for rid, label in labels.items() if rid in set(frame["run_id"].to_list())]
    colors = color_scale({k: v for k, v in run_colors(q, labels).items() if k in shown})
    what, axis = AXES.get(by, (by, f"{by} budget"))
    x = field("budget:Q", title=axis, scale={"type": "log", "nice": False})
    base = {"x": x, "color": field("run:N", title="run", scale=colors, sort=shown)}
    tooltip = [
        field("run:N"),
        field("budget:Q", title=axis, format=",.4~g"),
        field("accuracy:Q", format=".1%"),
        field("ci_low:Q", title="95% low", format=".1%"),
        field("ci_high:Q", title="95% high", format=".1%"),
        field("break_even:Q", title="full context catches up at", format=",.4~g"),
    ]
    band = {
        "mark": mark("area", opacity=0.15, interpolate="step-after"),
        "encoding": base | {"y": field("ci_low:Q"), "y2": field("ci_high")},
    }
    line = {
        "mark": mark("line", point=True, interpolate="step-after"),
        "encoding": base
        | {
            "y": field("accuracy:Q", title="accuracy", axis={"format": "%"}, scale={"domain": [0, 1]}),
            "tooltip": tooltip,
        },
    }
    subtitle = (
        "a question over the budget counts as not answered; band: clustered 95% interval over haystacks"
    )
    return chart(
        {
            "data": values(frame),
            "layer": [line, band],
            "title": {
                "text": title or f"Accuracy under a {what} budget",
                "subtitle": subtitle,
            },
            "width": 460,
            "height": 240,
        }
    )
