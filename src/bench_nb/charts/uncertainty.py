"""Charts of uncertainty: clustered against independent intervals, and the Pareto frontier."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from bench_nb.charts.altair_import import alt
from bench_nb.charts.labels import color_scale, run_colors, run_labels, with_run_label

if TYPE_CHECKING:
    from bench_nb.metrics.clustered import IntervalMethod
    from bench_nb.metrics.uncertainty import ClusterBootstrap


def _json_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """NaN (an undefined design effect or interval) as null: a Vega-Lite spec must be valid JSON, which has
    no NaN (JupyterLab refuses the message otherwise)."""
    return frame.with_columns(pl.col(pl.Float64).fill_nan(None))


def _bootstrap(data: Any, seed: int) -> ClusterBootstrap:
    from bench_nb.metrics.uncertainty import cluster_bootstrap  # numpy: imported when a chart is drawn

    return cluster_bootstrap(data, seed)


def _intervals(boot: ClusterBootstrap) -> pl.DataFrame:
    parts = []
    methods: tuple[tuple[IntervalMethod, str], ...] = (
        ("cluster-bootstrap", "clustered (haystacks)"),
        ("wilson", "Wilson (independent)"),
    )
    for method, name in methods:
        overall = boot.accuracy_intervals(method)
        by_type = boot.accuracy_intervals(method, "question_type")
        both = pl.concat([overall.with_columns(question_type=pl.lit("overall")), by_type], how="diagonal")
        parts.append(both.with_columns(interval=pl.lit(name)))
    return pl.concat(parts)


def chart_accuracy_intervals(
    data: Any, *, seed: int = 0, title: str = "Accuracy: clustered against independent 95% intervals"
) -> alt.TopLevelMixin:
    """Per run, overall and per question type: the accuracy with its cluster-bootstrap interval (thick) and
    Wilson's (thin), which treats the questions as independent; design effect in the tooltip. ``data``: a
    questions frame, run sources, or a ``ClusterBootstrap`` (shared with the uncertainty tables; its own
    seed)."""
    boot = _bootstrap(data, seed)
    q = boot.questions
    labels = run_labels(q)
    frame = _json_safe(with_run_label(_intervals(boot).filter(pl.col("n") > 0), labels))
    order = list(labels.values())
    types = [
        "overall",
        *[t for t in frame["question_type"].unique(maintain_order=True).to_list() if t != "overall"],
    ]
    base = alt.Chart(frame).encode(
        y=alt.Y("question_type:N", title=None, sort=types),
        yOffset=alt.YOffset("run:N", sort=order),
        color=alt.Color("run:N", title="run", scale=color_scale(run_colors(q, labels))),
    )
    rules = base.mark_rule().encode(
        x=alt.X("ci_low:Q", title="accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        x2="ci_high:Q",
        strokeWidth=alt.StrokeWidth(
            "interval:N",
            title="95% interval",
            scale=alt.Scale(domain=["clustered (haystacks)", "Wilson (independent)"], range=[5, 1.5]),
        ),
        opacity=alt.Opacity(
            "interval:N",
            scale=alt.Scale(domain=["clustered (haystacks)", "Wilson (independent)"], range=[0.45, 1]),
            legend=None,
        ),
        tooltip=[
            alt.Tooltip("run:N"),
            alt.Tooltip("question_type:N", title="type"),
            alt.Tooltip("interval:N"),
            alt.Tooltip("accuracy:Q", format=".1%"),
            alt.Tooltip("ci_low:Q", title="95% low", format=".1%"),
            alt.Tooltip("ci_high:Q", title="95% high", format=".1%"),
            alt.Tooltip("n:Q", title="questions"),
            alt.Tooltip("clusters:Q", title="haystacks"),
            alt.Tooltip("design_effect:Q", title="design effect", format=".2f"),
        ],
    )
    points = (
        base.transform_filter(alt.datum.interval == "clustered (haystacks)")
        .mark_point(filled=True, size=40, color="#1f2328")
        .encode(x="accuracy:Q")
    )
    return alt.layer(
        rules,
        points,
        title=alt.Title(
            title, subtitle="thick: cluster bootstrap over haystacks; thin: Wilson, questions independent"
        ),
        width=460,
        height=alt.Step(16),
    )


_AXES = (
    ("search_ms", "mean search latency (ms)"),
    ("context_tokens", "mean context tokens"),
    ("cost_usd", "cost per question (USD)"),
)


def chart_pareto(data: Any, *, seed: int = 0, title: str = "Pareto frontier") -> alt.TopLevelMixin:
    """Accuracy (with its clustered 95% interval) against each cost the runs report (search latency,
    context tokens, cost per question): one panel per cost, frontier runs filled, dominated runs hollow.
    ``data`` as for ``chart_accuracy_intervals``."""
    boot = _bootstrap(data, seed)
    q = boot.questions
    labels = run_labels(q)
    frame = _json_safe(with_run_label(boot.pareto_frontier(), labels))
    frame = frame.with_columns(
        status=pl.when(pl.col("on_frontier")).then(pl.lit("frontier")).otherwise(pl.lit("dominated"))
    )
    order = list(labels.values())
    colors = color_scale(run_colors(q, labels))  # one scale object for every panel's colour and stroke
    panels = []
    for column, axis in _AXES:
        shown = frame.filter(pl.col(column).is_not_null() & pl.col("accuracy").is_not_null())
        if shown.is_empty():
            continue
        base = alt.Chart(shown).encode(
            x=alt.X(f"{column}:Q", title=axis, scale={"nice": True, "zero": False}),
            color=alt.Color("run:N", title="run", scale=colors),
        )
        tooltip = [
            alt.Tooltip("run:N"),
            alt.Tooltip("status:N"),
            alt.Tooltip("accuracy:Q", format=".1%"),
            alt.Tooltip("ci_low:Q", title="95% low", format=".1%"),
            alt.Tooltip("ci_high:Q", title="95% high", format=".1%"),
            alt.Tooltip(f"{column}:Q", title=axis),
            alt.Tooltip("dominated_by:N", title="dominated by"),
        ]
        y = alt.Y("accuracy:Q", title="accuracy", axis={"format": "%"}, scale={"zero": False})
        panels.append(
            alt.layer(
                base.mark_rule(strokeWidth=3, opacity=0.45).encode(
                    y=alt.Y("ci_low:Q"), y2=alt.Y2("ci_high:Q")
                ),
                base.transform_filter(alt.datum.status == "frontier")
                .mark_point(size=130, filled=True, opacity=1)
                .encode(y=y, tooltip=tooltip),
                base.transform_filter(alt.datum.status == "dominated")
                .mark_point(size=130, filled=True, fill="white", strokeWidth=2.5, opacity=1)
                .encode(
                    y=y,
                    stroke=alt.Stroke("run:N", scale=colors, legend=None),
                    tooltip=tooltip,
                ),
                base.mark_text(align="left", dx=9, dy=-9, fontSize=11).encode(y=y, text=alt.Text("run:N")),
                width=260,
                height=220,
            )
        )
    subtitle = "filled: on the frontier; hollow: dominated; bars: clustered 95% interval of the accuracy"
    if not panels:
        shown = frame.filter(pl.col("accuracy").is_not_null())
        panels.append(
            alt.Chart(shown)
            .mark_point(size=90, filled=True)
            .encode(
                x=alt.X("run:N", title=None, sort=order),
                y=alt.Y("accuracy:Q", axis={"format": "%"}, scale={"zero": False}),
                color=alt.Color("run:N", scale=colors),
            )
            .properties(width=260, height=220)
        )
        subtitle = "no run reports search latency, context tokens or cost: accuracy only"
    return alt.hconcat(*panels, title={"text": title, "subtitle": subtitle})
