"""The report tile "Only memory knows": the latest exclusive rate, its trend, or an invitation to run.

:func:`roi_tile_html` returns one self-contained HTML fragment (inline SVG, no script, every piece of text
escaped) that a report can embed; :func:`roi_tile` wraps it for display in Jupyter.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from bench_nb.roi.frames import roi_runs_frame
from bench_nb.roi.probers import MODE_NOTES
from bench_nb.roi.store import RoiStore
from bench_nb.roi.summary import RoiStatus, measured, roi_status

if TYPE_CHECKING:
    from bench_nb.charts.spec import Chart

TITLE = "Only memory knows"

_STYLE = (
    "font-family:system-ui,-apple-system,Segoe UI,sans-serif;border:1px solid #d0d7de;border-radius:8px;"
    "padding:16px 20px;max-width:520px;background:#fff;color:#1f2328"
)


def chart_roi_trend(runs: Any) -> Chart:
    """The exclusive rate per finished run, as a line with points: one x position per run, labelled with
    the time it finished (UTC, to the minute; the tooltip has the second), oldest left. An altair chart
    (in a report kernel a ``VegaLiteChart``, as every ``bench_nb.charts`` function returns).

    Args:
        runs: ``roi_runs_df`` (pandas or polars).
    """
    from bench_nb.charts.spec import chart, field, mark, values  # the charts only when a tile draws one

    if not isinstance(runs, pl.DataFrame):
        runs = pl.from_pandas(runs)
    data = (
        runs.filter(pl.col("exclusive_rate").is_not_null())
        .select("run_id", "finished_at", "exclusive_rate", "exclusive", "judged", "probe_mode")
        .sort("finished_at")
        .with_columns(
            finished=pl.col("finished_at").str.slice(0, 19).str.replace("T", " "),
            when=pl.col("finished_at").str.slice(0, 16).str.replace("T", " "),
        )
    )
    # Two runs in the same minute keep apart: the label is made unique by the second, and runs finished in
    # the same second (a scripted pair) by their order, "#1", "#2".
    dup = data["when"].is_duplicated()
    data = data.with_columns(when=pl.when(dup).then(pl.col("finished")).otherwise(pl.col("when")))
    order = (pl.int_range(pl.len()).over("when") + 1).cast(pl.Utf8)
    data = data.with_columns(
        when=pl.when(pl.col("when").is_duplicated())
        .then(pl.col("when") + " #" + order)
        .otherwise(pl.col("when"))
    )
    return chart(
        {
            "data": values(data),
            "mark": mark("line", point=True, color="#0969da"),
            "encoding": {
                "x": field("when:O", title="run finished (UTC)", sort=None, axis={"labelAngle": -30}),
                "y": field(
                    "exclusive_rate:Q", title="exclusive rate", scale={"domain": [0, 1]}, axis={"format": "%"}
                ),
                "tooltip": [
                    field("run_id:N"),
                    field("finished:N", title="finished (UTC)"),
                    field("probe_mode:N"),
                    field("exclusive:Q"),
                    field("judged:Q"),
                    field("exclusive_rate:Q", format=".0%"),
                ],
            },
            "width": 440,
            "height": 120,
        }
    )


DETERMINISTIC_NOTE = (
    "Judged by the deterministic judge: it can tell whether memory surfaced a probe's fact, not whether a bare "
    "agent could have answered without it, so the rate below is an upper bound of the exclusive rate. Run "
    "with an LLM judge (--judge MODEL) to measure the exclusive rate itself."
)


def roi_tile_html(owner: str, db: str | Path | RoiStore) -> str:
    """The tile for ``owner`` as an HTML fragment (only ``owner``'s runs are read)."""
    status = roi_status(owner, db)
    runs = roi_runs_frame(owner, db)
    esc = html.escape
    parts = [
        f'<section class="bench-nb-roi-tile" style="{_STYLE}">',
        f'<h3 style="margin:0 0 8px">{esc(TITLE)}</h3>',
    ]
    latest = status.latest
    if latest is None:
        parts.append(_invitation(status))
    elif latest.exclusive_rate is None:
        parts.append(
            f"<p>The latest run ({esc(latest.run_id)}) could not judge any of its {latest.probes} probes; "
            "run the benchmark again.</p>"
        )
    else:
        if latest.judge == "deterministic":  # what the judge can and cannot judge comes before its number
            parts.append(
                f'<p class="bench-nb-roi-judge" style="margin:0 0 6px">{esc(DETERMINISTIC_NOTE)}</p>'
            )
        parts.append(
            f'<div style="font-size:40px;font-weight:600;line-height:1.1">{latest.exclusive_rate:.0%}</div>'
            f'<p style="margin:4px 0 8px">{esc(measured(latest.exclusive, latest.judged, latest.judge))}</p>'
        )
        details = [
            f"probe mode: {latest.probe_mode}"
            + (f" ({MODE_NOTES[latest.probe_mode]})" if latest.probe_mode in MODE_NOTES else ""),
            f"judge: {latest.judge}",
            f"provider: {latest.provider}",
            f"run {latest.run_id}",
        ]
        if latest.failed:
            details.append(
                f"{latest.failed} probe{'s' if latest.failed != 1 else ''} skipped (judgment failed)"
            )
        parts.append(f'<p style="margin:0;color:#59636e;font-size:12px">{esc(" · ".join(details))}</p>')
        judged_runs = runs.filter(pl.col("exclusive_rate").is_not_null())
        if len(judged_runs) >= 2:  # drawn offline to SVG (vl-convert): no CDN, no script
            from bench_nb.charts.save import to_svg

            parts.append(
                f'<div class="bench-nb-roi-trend" style="margin-top:12px">{to_svg(chart_roi_trend(judged_runs))}</div>'
            )
    if status.in_progress is not None:
        parts.append(
            f'<p style="margin:8px 0 0;font-size:12px">A run is in progress ({esc(status.in_progress.run_id)}, '
            f"{esc(status.in_progress.phase or 'starting')}).</p>"
        )
    parts.append("</section>")
    return "".join(parts)


def _invitation(status: RoiStatus) -> str:
    esc = html.escape
    command = f"bench-nb roi run --owner {status.owner} --db PATH --deterministic"
    pool = (
        f"{status.active_probes} probe{'s are' if status.active_probes != 1 else ' is'} ready."
        if status.active_probes
        else "The first run generates the probe pool from your decisions, gotchas and conventions."
    )
    return (
        "<p>How many of your project questions could an agent answer only because memory exists? "
        "Run the ROI benchmark to find out.</p>"
        f'<p style="margin:4px 0">{esc(pool)}</p>'
        f'<pre style="margin:8px 0 0;background:#f6f8fa;padding:6px 8px;border-radius:4px">{esc(command)}</pre>'
        '<p style="margin:4px 0 0;font-size:12px;color:#59636e">or call the MCP tool benchmark_memory.</p>'
    )


@dataclass(frozen=True)
class RoiTile:
    """The tile, displayable in Jupyter (``_repr_html_``); ``html`` is the fragment."""

    html: str

    def _repr_html_(self) -> str:
        return self.html


def roi_tile(owner: str, db: str | Path | RoiStore) -> RoiTile:
    """The "Only memory knows" tile for ``owner``, for a notebook."""
    return RoiTile(roi_tile_html(owner, db))
