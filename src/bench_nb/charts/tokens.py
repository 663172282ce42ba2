"""Context tokens per question: a histogram per run, binned in polars (any run size)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from bench_nb.charts.labels import color_scale, run_colors, run_labels, with_run_label
from bench_nb.charts.spec import Chart, chart, field, mark, note_chart, values
from bench_nb.metrics import as_questions
from bench_nb.metrics.tokens import token_summary_frame


def _bins(values: Sequence[float], bins: int) -> list[float]:
    """``bins`` equal-width bins over the values' range (numpy's ``histogram_bin_edges`` with a range)."""
    if not values:
        return [0.0, 1.0]
    lo, hi = float(min(values)), float(max(values))
    if lo == hi:
        return [lo - 0.5, hi + 0.5]
    step = (hi - lo) / bins
    return [i * step + lo for i in range(bins)] + [hi]


def _histogram(values: Sequence[float] | pl.Series, edges: Sequence[float]) -> list[int]:
    """Counts per bin: [edgeᵢ, edgeᵢ₊₁), the last bin closed (numpy's ``histogram``); outside values dropped."""
    counts = [0] * (len(edges) - 1)
    series = pl.Series(values, dtype=pl.Float64)
    inside = series.filter((series >= edges[0]) & (series <= edges[-1]))
    # bisect_right over the edges, for every value at once; a value on the last edge goes in the last bin
    index = (pl.Series(edges, dtype=pl.Float64).search_sorted(inside, side="right") - 1).clip(
        upper_bound=len(counts) - 1
    )
    for i, count in index.value_counts().iter_rows():
        counts[i] = count
    return counts


def chart_context_tokens(data: Any, *, bins: int = 30, title: str = "Context tokens per question") -> Chart:
    """How many retrieved-context tokens each evaluated question put in the answer prompt, per run.

    Bins are shared by all runs; the dashed line is the run's mean (``bench_nb.metrics.token_summary``).
    Questions without token counts are left out (a run without any shows no bars; with no run recording any,
    the chart is a one-line note).

    Args:
        bins: number of histogram bins.
    """
    questions = as_questions(data)
    labels = run_labels(questions)
    counted = questions.filter((pl.col("status") == "evaluated") & pl.col("context_tokens").is_not_null())
    if counted.is_empty():
        return chart(
            note_chart(
                "nothing to draw: no run records context tokens per question (imported results often keep "
                "none); the tokens table above says what each run records",
                title,
            )
        )
    edges = _bins(counted["context_tokens"].cast(pl.Float64).to_list(), bins)
    rows: list[dict[str, Any]] = []
    for (rid,), part in counted.group_by("run_id", maintain_order=True):
        counts = _histogram(part["context_tokens"], edges)
        rows.extend(
            {"run_id": rid, "start": float(edges[i]), "end": float(edges[i + 1]), "questions": int(c)}
            for i, c in enumerate(counts)
            if c
        )
    hist = with_run_label(
        pl.DataFrame(
            rows, schema={"run_id": pl.Utf8, "start": pl.Float64, "end": pl.Float64, "questions": pl.Int64}
        ),
        labels,
    )
    summary = token_summary_frame(questions)
    means = with_run_label(
        summary.select("run_id", "mean_context_tokens").filter(pl.col("mean_context_tokens").is_not_null()),
        labels,
    )
    # one frame for both layers: a bin's row has no mean, a mean's row no bin (null)
    layered = pl.concat(
        [hist.with_columns(kind=pl.lit("bin")), means.with_columns(kind=pl.lit("mean"))], how="diagonal"
    )
    order = list(labels.values())
    colors = color_scale(run_colors(questions, labels))
    bars = {
        "mark": mark("bar", opacity=0.85),
        "encoding": {
            "x": field("start:Q", title="context tokens", bin="binned"),
            "x2": field("end"),
            "y": field("questions:Q", title="questions"),
            "color": field("run:N", title="run", scale=colors, legend=None),
            "tooltip": [
                field("run:N"),
                field("start:Q", title="from", format=",.0f"),
                field("end:Q", title="to", format=",.0f"),
                field("questions:Q"),
            ],
        },
        "transform": [{"filter": "(datum.kind === 'bin')"}],
    }
    mean = {
        "mark": mark("rule", strokeDash=[4, 3], color="#1f2328"),
        "encoding": {
            "x": field("mean_context_tokens:Q"),
            "tooltip": [field("run:N"), field("mean_context_tokens:Q", title="mean", format=",.0f")],
        },
        "transform": [{"filter": "(datum.kind === 'mean')"}],
    }
    header = {"labelAlign": "left", "labelAngle": 0}
    return chart(
        {
            "data": values(layered),
            "facet": {"row": field("run:N", title=None, sort=order, header=header)},
            "spec": {"layer": [bars, mean], "width": 460, "height": 90},
            "resolve": {"scale": {"y": "independent"}},
            "title": {"text": title, "subtitle": "dashed line: mean per question"},
        }
    )
