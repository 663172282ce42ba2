"""The MemScore chart: accuracy against search latency, point size for context tokens."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from bench_nb.charts.labels import color_scale, provider_colors, provider_order, run_labels, with_run_label
from bench_nb.charts.spec import Chart, chart, field, mark, values
from bench_nb.metrics import as_questions
from bench_nb.metrics.memscore import memscore_frame


def chart_memscore(data: Any, *, title: str = "MemScore: accuracy against search latency") -> Chart:
    """Accuracy (with its Wilson 95% interval) against mean search latency, one point per run.

    Point size is the mean context tokens per question, colour the provider; the tooltip carries the
    MemScore string and the counts. Runs without search latency are left out (named in the subtitle).

    Args:
        data: run sources or a questions frame (anything ``bench_nb.memscore`` takes).
        title: the chart title.
    """
    questions = as_questions(data)
    scores = memscore_frame(questions)
    scores = with_run_label(scores, run_labels(questions))
    missing = scores.filter(pl.col("latency_ms").is_null() | pl.col("accuracy").is_null())["run"].to_list()
    shown = scores.filter(pl.col("latency_ms").is_not_null() & pl.col("accuracy").is_not_null())
    shown = shown.with_columns(
        tokens_size=pl.col("context_tokens").fill_null(0),
        tokens_text=pl.col("context_tokens").cast(pl.Utf8).fill_null("n/a"),
        latency_plot=pl.col("latency_ms").clip(lower_bound=1),
    )
    shown = shown.with_columns(
        pl.Series("label_left", _in_right_quarter(shown["latency_plot"].to_list()), pl.Boolean)
    )
    subtitle = ["point size: mean context tokens per question; bars: 95% Wilson interval"]
    if "quality_measure" in scores.columns and (scores["quality_measure"] == "mean score").any():
        subtitle = [
            "point size: mean context tokens per question; bars: 95% interval (Wilson for accuracy, "
            "normal approximation for a graded run's mean score)"
        ]
    if missing:
        subtitle.append("not shown (no evaluated question or no search latency): " + ", ".join(missing))
    colors = color_scale(provider_colors(provider_order(questions)))
    base = {
        "x": field("latency_plot:Q", title="mean search latency (ms, log scale)", scale={"type": "log"}),
        "color": field("provider:N", title="provider", scale=colors),
    }
    bars = {
        "mark": mark("rule", strokeWidth=2),
        "encoding": base | {"y": field("accuracy_ci_low:Q"), "y2": field("accuracy_ci_high")},
    }
    points = {
        "mark": mark("circle", opacity=0.85, stroke="white", strokeWidth=1),
        "encoding": base
        | {
            "y": field("accuracy:Q", title="accuracy", scale={"domain": [0, 1]}, axis={"format": "%"}),
            "size": field("tokens_size:Q", title="context tokens", scale={"range": [80, 1200], "zero": True}),
            "tooltip": [
                field("run:N", title="run"),
                field("memscore:N", title="MemScore"),
                field("accuracy:Q", format=".1%"),
                field("accuracy_ci_low:Q", title="95% low", format=".1%"),
                field("accuracy_ci_high:Q", title="95% high", format=".1%"),
                field("latency_ms:Q", title="search ms (mean)"),
                field("tokens_text:N", title="context tokens"),
                field("evaluated:Q"),
                field("failed:Q"),
            ],
        },
    }
    # Beside the largest point (size 1200: a radius of about 20 px), so no label starts inside a point of its
    # own colour; on the left for points in the right quarter, so no label runs into the legend.
    text = base | {"y": field("accuracy:Q"), "text": field("run:N")}
    right = {
        "mark": mark("text", align="left", baseline="middle", dx=23),
        "encoding": text,
        "transform": [{"filter": "!datum.label_left"}],
    }
    left = {
        "mark": mark("text", align="right", baseline="middle", dx=-23),
        "encoding": text,
        "transform": [{"filter": "datum.label_left"}],
    }
    return chart(
        {
            "data": values(shown),
            "layer": [bars, points, right, left],
            "title": {"text": title, "subtitle": subtitle},
            "width": 460,
            "height": 300,
        }
    )


def _in_right_quarter(latencies: list[float]) -> list[bool]:
    """Whether each latency lies in the right quarter of the log axis (whose domain Vega rounds out to
    powers of ten)."""
    if not latencies:
        return []
    lo = math.floor(math.log10(min(latencies)))
    hi = max(math.ceil(math.log10(max(latencies))), lo + 1)
    return [(math.log10(x) - lo) / (hi - lo) > 0.75 for x in latencies]
