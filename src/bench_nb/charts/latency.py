"""Latency distribution per phase: range, p50-p95 band and median, per run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from bench_nb.charts.labels import color_scale, provider_colors, provider_order, run_labels, with_run_label
from bench_nb.charts.spec import Chart, chart, field, mark, note_chart, values
from bench_nb.metrics import as_questions
from bench_nb.metrics.latency import latency_stats_frame
from bench_nb.runformat.format import PHASES


def chart_latency(data: Any, *, phases: Sequence[str] = PHASES, title: str = "Latency per phase") -> Chart:
    """Per phase (one panel each, own scale) and run: min-max line, p50-p95 bar, median tick.

    The statistics come from ``bench_nb.latency_stats`` (interpolated ``p50_linear``/``p95_linear``).

    Args:
        phases: which phases to show, in order (``total`` is available too).
    """
    questions = as_questions(data)
    stats = latency_stats_frame(questions, by=("run_id", "provider"))
    labels = run_labels(questions)
    stats = with_run_label(stats.filter(pl.col("phase").is_in(list(phases)) & (pl.col("count") > 0)), labels)
    if stats.is_empty():
        return chart(
            note_chart(
                "nothing to draw: no run records a duration for " + ", ".join(phases) + " (imported results "
                "often keep none); the latency table above says what each run records",
                title,
            )
        )
    order = list(labels.values())
    colors = color_scale(provider_colors(provider_order(questions)))
    base = {
        "y": field("run:N", title=None, sort=order),
        "color": field("provider:N", title="provider", scale=colors),
    }
    tooltip = [
        field("run:N"),
        field("phase:N"),
        field("count:Q", title="n"),
        field("min:Q", format=",.0f"),
        field("p50_linear:Q", title="p50 (ms)", format=",.0f"),
        field("p95_linear:Q", title="p95 (ms)", format=",.0f"),
        field("max:Q", format=",.0f"),
        field("mean:Q", title="mean (ms)", format=",.0f"),
    ]
    span = {
        "mark": mark("rule", strokeWidth=1),
        "encoding": base
        | {"x": field("min:Q", title="milliseconds"), "x2": field("max"), "tooltip": tooltip},
    }
    band = {
        "mark": mark("bar", height=10, opacity=0.75),
        "encoding": base | {"x": field("p50_linear:Q"), "x2": field("p95_linear"), "tooltip": tooltip},
    }
    median = {
        "mark": mark("tick", thickness=2, size=16, color="#1f2328"),
        "encoding": base | {"x": field("p50_linear:Q"), "tooltip": tooltip},
    }
    header = {"labelAlign": "left", "labelAngle": 0}
    return chart(
        {
            "data": values(stats),
            "facet": {"row": field("phase:N", title=None, sort=list(phases), header=header)},
            "spec": {"layer": [span, band, median], "width": 420, "height": {"step": 22}},
            "resolve": {"scale": {"x": "independent"}},
            "title": {
                "text": title,
                "subtitle": "line: min to max; bar: p50 to p95 (interpolated); tick: p50",
            },
        }
    )
