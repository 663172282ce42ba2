"""Charts of uncertainty: clustered against independent intervals, and the Pareto frontier."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from bench_nb.charts.labels import color_scale, run_colors, run_labels, with_run_label
from bench_nb.charts.spec import Chart, chart, concat, field, mark, values
from bench_nb.tables.uncertainty import _bootstrap  # the tables' bootstrap (numpy: imported on first use)

if TYPE_CHECKING:
    from bench_nb.metrics.clustered import IntervalMethod
    from bench_nb.metrics.uncertainty import ClusterBootstrap


def _json_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """NaN (an undefined design effect or interval) as null: a Vega-Lite spec must be valid JSON, which has
    no NaN (JupyterLab refuses the message otherwise)."""
    return frame.with_columns(pl.col(pl.Float64).fill_nan(None))


def _intervals(boot: ClusterBootstrap) -> pl.DataFrame:
    parts = []
    methods: tuple[tuple[IntervalMethod, str], ...] = (
        ("clustered", "clustered (haystacks)"),
        ("wilson", "Wilson (independent)"),
    )
    for method, name in methods:
        overall = boot.accuracy_intervals(method)
        by_type = boot.accuracy_intervals(method, "question_type")
        both = pl.concat([overall.with_columns(question_type=pl.lit("overall")), by_type], how="diagonal")
        # ``kind``: which of the two the row is; ``interval``: the method accuracy_intervals actually used
        parts.append(both.with_columns(kind=pl.lit(name)))
    return pl.concat(parts)


def chart_accuracy_intervals(
    data: Any, *, title: str = "Accuracy: clustered against independent 95% intervals"
) -> Chart:
    """Per run, overall and per question type: the accuracy with its clustered interval (thick: the
    design-adjusted Wilson interval with the CR2 variance and Bell-McCaffrey df; the method, the effective
    haystacks and any warning in the tooltip) and Wilson's (thin), which treats the questions as
    independent; design effect in the tooltip. ``data``: a
    questions frame, run sources, or a ``ClusterBootstrap`` (shared with the uncertainty tables)."""
    boot = _bootstrap(data)
    q = boot.questions
    labels = run_labels(q)
    frame = _json_safe(with_run_label(_intervals(boot).filter(pl.col("n") > 0), labels))
    order = list(labels.values())
    types = [
        "overall",
        *[t for t in frame["question_type"].unique(maintain_order=True).to_list() if t != "overall"],
    ]
    base = {
        "y": field("question_type:N", title=None, sort=types),
        "yOffset": field("run:N", sort=order),
        "color": field("run:N", title="run", scale=color_scale(run_colors(q, labels))),
    }
    kinds = ["clustered (haystacks)", "Wilson (independent)"]
    rules = {
        "mark": mark("rule"),
        "encoding": base
        | {
            "x": field("ci_low:Q", title="accuracy", scale={"domain": [0, 1]}, axis={"format": "%"}),
            "x2": field("ci_high"),
            "strokeWidth": field("kind:N", title="95% interval", scale={"domain": kinds, "range": [5, 1.5]}),
            "opacity": field("kind:N", scale={"domain": kinds, "range": [0.45, 1]}, legend=None),
            "tooltip": [
                field("run:N"),
                field("question_type:N", title="type"),
                field("kind:N", title="interval"),
                field("interval:N", title="method"),
                field("accuracy:Q", format=".1%"),
                field("ci_low:Q", title="95% low", format=".1%"),
                field("ci_high:Q", title="95% high", format=".1%"),
                field("n:Q", title="questions"),
                field("clusters:Q", title="haystacks"),
                field("design_effect:Q", title="design effect", format=".2f"),
                field("effective_clusters:Q", title="effective haystacks", format=".1f"),
                field("warning:N"),
            ],
        },
    }
    points = {
        "mark": mark("point", filled=True, size=40, color="#1f2328"),
        "encoding": base | {"x": field("accuracy:Q")},
        "transform": [{"filter": "(datum.kind === 'clustered (haystacks)')"}],
    }
    subtitle = (
        "thick: clustered over haystacks (design-adjusted Wilson, CR2 variance, Bell-McCaffrey df); "
        "thin: Wilson, questions independent"
    )
    return chart(
        {
            "data": values(frame),
            "layer": [rules, points],
            "title": {"text": title, "subtitle": subtitle},
            "width": 460,
            "height": {"step": 16},
        }
    )


_AXES = (
    ("search_ms", "mean search latency (ms)"),
    ("context_tokens", "mean context tokens"),
    ("cost_usd", "cost per question (USD)"),
)


def chart_pareto(data: Any, *, title: str = "Pareto frontier") -> Chart:
    """Accuracy (with its clustered 95% interval) against each cost the runs report (search latency,
    context tokens, cost per question): one panel per cost, frontier runs filled, dominated runs hollow.
    ``data`` as for ``chart_accuracy_intervals``."""
    boot = _bootstrap(data)
    q = boot.questions
    labels = run_labels(q)
    pareto = boot.pareto_frontier().drop("missing")
    # the one cost the frontier compared: the total when every run reports its memory side (metrics.pareto)
    from bench_nb.metrics.pareto import compared_cost_of

    with_memory = compared_cost_of(pareto.to_dicts()) == "total_cost_usd"
    pareto = (
        pareto.drop("cost_usd").rename({"total_cost_usd": "cost_usd"})
        if with_memory
        else pareto.drop("total_cost_usd")
    )
    frame = _json_safe(with_run_label(pareto, labels))
    frame = frame.with_columns(
        status=pl.when(pl.col("on_frontier"))
        .then(pl.lit("frontier"))
        .when(pl.col("on_frontier").is_null())
        .then(pl.lit("not comparable"))  # lacks an objective the others have: its interval and label only
        .otherwise(pl.lit("dominated"))
    )
    order = list(labels.values())
    colors = color_scale(run_colors(q, labels))  # one scale object for every panel's colour and stroke
    panels = []
    flat: list[str] = []  # costs every run has at the same value: a panel would say nothing
    for column, axis in _AXES:
        if column == "cost_usd" and with_memory:
            axis = "cost per question, memory side included (USD)"
        shown = frame.filter(pl.col(column).is_not_null() & pl.col("accuracy").is_not_null())
        if shown.is_empty():
            continue
        if shown.height > 1 and shown[column].n_unique() == 1:
            value = shown[column][0]
            flat.append(f"{axis.split(' (')[0]} (every run {'$' if column == 'cost_usd' else ''}{value:g})")
            continue
        base = {
            "x": field(f"{column}:Q", title=axis, scale={"nice": True, "zero": False}),
            "color": field("run:N", title="run", scale=colors),
        }
        tooltip = [
            field("run:N"),
            field("status:N"),
            field("accuracy:Q", format=".1%"),
            field("ci_low:Q", title="95% low", format=".1%"),
            field("ci_high:Q", title="95% high", format=".1%"),
            field(f"{column}:Q", title=axis),
            field("dominated_by:N", title="dominated by"),
        ]
        y = field("accuracy:Q", title="accuracy", axis={"format": "%"}, scale={"zero": False})
        interval = {
            "mark": mark("rule", strokeWidth=3, opacity=0.45),
            "encoding": base | {"y": field("ci_low:Q"), "y2": field("ci_high")},
        }
        frontier = {
            "mark": mark("point", size=130, filled=True, opacity=1),
            "encoding": base | {"y": y, "tooltip": tooltip},
            "transform": [{"filter": "(datum.status === 'frontier')"}],
        }
        dominated = {
            "mark": mark("point", size=130, filled=True, fill="white", strokeWidth=2.5, opacity=1),
            "encoding": base
            | {"y": y, "stroke": field("run:N", scale=colors, legend=None), "tooltip": tooltip},
            "transform": [{"filter": "(datum.status === 'dominated')"}],
        }
        label = {
            "mark": mark("text", align="left", dx=9, dy=-9, fontSize=11),
            "encoding": base | {"y": y, "text": field("run:N")},
        }
        layers = [interval, frontier, dominated, label]
        panels.append({"data": values(shown), "layer": layers, "width": 260, "height": 220})
    subtitle = "filled: on the frontier; hollow: dominated; bars: clustered 95% interval of the accuracy"
    if not panels:
        shown = frame.filter(pl.col("accuracy").is_not_null())
        encoding = {
            "x": field("run:N", title=None, sort=order),
            "y": field("accuracy:Q", axis={"format": "%"}, scale={"zero": False}),
            "color": field("run:N", scale=colors),
        }
        panels.append(
            {
                "data": values(shown),
                "mark": mark("point", size=90, filled=True),
                "encoding": encoding,
                "width": 260,
                "height": 220,
            }
        )
        subtitle = "no run reports search latency, context tokens or cost that differs: accuracy only"
    subtitles = [subtitle]
    if flat:
        subtitles.append("left out, the same for every run: " + "; ".join(flat))
    # two panels a row: three side by side overflow JupyterLab's main area with the file browser open
    return chart(concat("concat", panels, columns=2, title={"text": title, "subtitle": subtitles}))
