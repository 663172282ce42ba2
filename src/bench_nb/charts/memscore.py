"""The MemScore chart: accuracy against search latency, point size for context tokens."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from bench_nb.charts.labels import color_scale, provider_colors, provider_order, run_labels, with_run_label
from bench_nb.charts.spec import Chart, chart, field, mark, note_chart, values
from bench_nb.metrics import as_questions
from bench_nb.metrics.memscore import memscore_frame

LOW_ACCURACY = 0.06  # a point below this accuracy gets its label above it, clear of the x axis


def chart_memscore(data: Any, *, title: str = "MemScore: accuracy against search latency") -> Chart:
    """Accuracy (with its Wilson 95% interval) against mean search latency, one point per run.

    Point size is the mean context tokens per question, colour the provider; the tooltip carries the
    MemScore string and the counts. Runs without search latency are left out (named in the subtitle).

    Args:
        data: run sources or a questions frame (anything ``bench_nb.memscore`` takes).
    """
    questions = as_questions(data)
    scores = memscore_frame(questions)
    scores = with_run_label(scores, run_labels(questions))
    missing = scores.filter(pl.col("latency_ms").is_null() | pl.col("accuracy").is_null())["run"].to_list()
    shown = scores.filter(pl.col("latency_ms").is_not_null() & pl.col("accuracy").is_not_null())
    if shown.is_empty():
        return chart(
            note_chart(
                "nothing to draw: no run records both an accuracy and a search latency "
                f"({', '.join(missing)}); the MemScore table above has what they record",
                title,
            )
        )
    shown = shown.with_columns(
        tokens_size=pl.col("context_tokens").fill_null(0),
        tokens_text=pl.col("context_tokens").cast(pl.Utf8).fill_null("n/a"),
        low=pl.col("accuracy") < LOW_ACCURACY,
    )
    ticks = _decades(shown["latency_ms"].max())
    shown = shown.with_columns(
        pl.Series("label_left", _in_right_quarter(shown["latency_ms"].to_list(), ticks[-1]), pl.Boolean)
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
        # symlog: log-like above a few ms, and a 0 ms run drawn at 0 (a log axis cannot hold 0)
        "x": field(
            "latency_ms:Q",
            title="mean search latency (ms, log scale from 0)",
            scale={"type": "symlog", "domain": [0, ticks[-1]]},
            axis={"values": ticks},
        ),
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
    # A point near 0% has its label above it, so the label never covers the axis's tick labels.
    text = base | {"y": field("accuracy:Q"), "text": field("run:N")}
    labels = [
        {
            "mark": mark(
                "text", align=align, baseline="bottom" if low else "middle", dx=dx, dy=-8 if low else 0
            ),
            "encoding": text,
            "transform": [
                {"filter": f"{'' if left else '!'}datum.label_left && {'' if low else '!'}datum.low"}
            ],
        }
        for left, align, dx in ((False, "left", 23), (True, "right", -23))
        for low in (False, True)
    ]
    return chart(
        {
            "data": values(shown),
            "layer": [bars, points, *labels],
            "title": {"text": title, "subtitle": subtitle},
            "width": 460,
            "height": 300,
        }
    )


def _decades(most: Any) -> list[int]:
    """The symlog axis's ticks: 0 and the powers of ten up to the first at or above ``most`` ms."""
    ticks, tick = [0, 1], 1
    while tick < (most or 1):
        tick *= 10
        ticks.append(tick)
    return ticks


def _in_right_quarter(latencies: list[float], top: float) -> list[bool]:
    """Whether each latency lies in the right quarter of the symlog axis from 0 to ``top`` ms (a position
    is log10(1 + ms))."""
    end = math.log10(1 + top)
    return [math.log10(1 + max(x, 0.0)) / end > 0.75 for x in latencies]
