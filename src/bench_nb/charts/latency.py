"""Latency distribution per phase: range, p50-p95 band and median, per run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from bench_nb.charts.altair_import import alt
from bench_nb.charts.labels import color_scale, provider_colors, provider_order, run_labels, with_run_label
from bench_nb.metrics import as_questions
from bench_nb.metrics.latency import latency_stats_frame

DEFAULT_PHASES = ("ingest", "indexing", "search", "answer", "evaluate")


def chart_latency(
    data: Any, *, phases: Sequence[str] = DEFAULT_PHASES, title: str = "Latency per phase"
) -> alt.TopLevelMixin:
    """Per phase (one panel each, own scale) and run: min-max line, p50-p95 bar, median tick.

    The statistics come from ``bench_nb.latency_stats`` (interpolated ``p50_linear``/``p95_linear``).

    Args:
        data: run sources or a questions frame.
        phases: which phases to show, in order (``total`` is available too).
        title: the chart title.
    """
    questions = as_questions(data)
    stats = latency_stats_frame(questions, by=("run_id", "provider"))
    labels = run_labels(questions)
    stats = with_run_label(stats.filter(pl.col("phase").is_in(list(phases)) & (pl.col("count") > 0)), labels)
    order = list(labels.values())
    base = alt.Chart().encode(
        y=alt.Y("run:N", title=None, sort=order),
        color=alt.Color(
            "provider:N", title="provider", scale=color_scale(provider_colors(provider_order(questions)))
        ),
    )
    tooltip = [
        alt.Tooltip("run:N"),
        alt.Tooltip("phase:N"),
        alt.Tooltip("count:Q", title="n"),
        alt.Tooltip("min:Q", format=",.0f"),
        alt.Tooltip("p50_linear:Q", title="p50 (ms)", format=",.0f"),
        alt.Tooltip("p95_linear:Q", title="p95 (ms)", format=",.0f"),
        alt.Tooltip("max:Q", format=",.0f"),
        alt.Tooltip("mean:Q", title="mean (ms)", format=",.0f"),
    ]
    span = base.mark_rule(strokeWidth=1).encode(
        x=alt.X("min:Q", title="milliseconds"), x2=alt.X2("max:Q"), tooltip=tooltip
    )
    band = base.mark_bar(height=10, opacity=0.75).encode(
        x=alt.X("p50_linear:Q"), x2=alt.X2("p95_linear:Q"), tooltip=tooltip
    )
    median = base.mark_tick(thickness=2, size=16, color="#1f2328").encode(
        x=alt.X("p50_linear:Q"), tooltip=tooltip
    )
    # Sizes, facet, resolve and title given where each chart is made, not in chained calls: altair copies
    # the whole chart (every layer, every tooltip) on each call.
    layers = alt.layer(span, band, median, data=stats, width=420, height={"step": 22})
    return layers.facet(
        row=alt.Row("phase:N", title=None, sort=list(phases), header={"labelAlign": "left", "labelAngle": 0}),
        resolve={"scale": {"x": "independent"}},
        title={"text": title, "subtitle": "line: min to max; bar: p50 to p95 (interpolated); tick: p50"},
    )
