"""What report notebooks call: set up charts for offline reports, headings, and the run summary the
report index reads.

While ``build_report`` executes a notebook (``BENCH_NB_REPORT=1``), ``setup_notebook()`` starts a worker
process that renders every displayed chart to SVG (``bench_nb.reports.svg``), so chart rendering overlaps
the notebook's data work instead of adding to it. A chart shows a placeholder until ``finish()``, which
``build_report`` runs after the notebook's last cell, puts the SVG in its place.
"""

from __future__ import annotations

import html
import os
import uuid
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_nb.errors import ReportError
from bench_nb.reports.svg import SvgWorker, spec_to_svg

SUMMARY_MIME = "application/vnd.bench-nb.report-summary+json"
RENDERER = "bench_nb_svg"
PENDING_CLASS = "bnb-chart-pending"  # a chart still rendering; build_report refuses a page that has one


def _figure(svg: str) -> str:
    return f'<figure class="bnb-chart" style="margin:8px 0 18px">{svg}</figure>'


def _svg_renderer(spec: dict[str, Any], **_: Any) -> dict[str, str]:
    return {"text/html": _figure(spec_to_svg(spec))}


@dataclass(frozen=True)
class _PendingChart:
    display_id: str
    title: str
    execution_count: int | None
    svg: Future[str]


class _DeferredCharts:
    """Charts rendered to SVG by a worker process, shown as placeholders until ``finish``."""

    def __init__(self) -> None:
        self.worker = SvgWorker()
        self.pending: list[_PendingChart] = []

    def display(self, chart: Any) -> None:
        from IPython import get_ipython
        from IPython.display import display

        from bench_nb.charts.theme import themed

        with themed():
            # Not validated against the Vega-Lite schema here (jsonschema costs tens of ms a chart): the
            # chart_* functions are validated in the tests, and vl-convert reports what it cannot draw.
            spec = chart.to_dict(validate=False)
        title = spec.get("title")
        title = title.get("text") if isinstance(title, dict) else title
        pending = _PendingChart(
            display_id=f"bnb-chart-{uuid.uuid4().hex}",
            title=str(title or spec.get("mark") or "chart"),
            execution_count=getattr(get_ipython(), "execution_count", None),
            svg=self.worker.submit(spec),
        )
        self.pending.append(pending)
        display(Html(f'<div class="{PENDING_CLASS}">rendering chart…</div>'), display_id=pending.display_id)

    def finish(self) -> None:
        from IPython.display import update_display

        failures = []
        try:
            for chart in self.pending:
                try:
                    markup = _figure(chart.svg.result())
                except Exception as err:  # vl-convert's errors are plain exceptions
                    failures.append(
                        f"chart {chart.title!r} (displayed by In [{chart.execution_count}]): {err}"
                    )
                    markup = (
                        f'<div class="bnb-warning">chart {html.escape(chart.title)} failed to render</div>'
                    )
                update_display(Html(markup), display_id=chart.display_id)
        finally:
            self.pending = []
            self.worker.close()
        if failures:
            raise ReportError("charts that could not be rendered: " + "; ".join(failures))


_deferred: _DeferredCharts | None = None


def _display_deferred(chart: Any) -> None:
    global _deferred
    if _deferred is None:
        _deferred = _DeferredCharts()
    _deferred.display(chart)


def in_report() -> bool:
    """True while ``build_report`` executes the notebook (``BENCH_NB_REPORT=1``)."""
    return os.environ.get("BENCH_NB_REPORT") == "1"


def setup_notebook(*, static: bool | None = None) -> None:
    """Turn on bench_nb's chart theme; with ``static`` (default: when building a report) render charts as
    inline SVG, so the exported HTML shows them without JavaScript or network.

    In a report the charts render in a worker process and ``finish()`` (run by ``build_report`` after the
    last cell) puts them in place; elsewhere a static chart renders as soon as it is displayed.
    """
    global _deferred
    static = in_report() if static is None else static
    shell = None
    if static and in_report():
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None and _deferred is None:
            _deferred = _DeferredCharts()  # first: its engine starts while the imports below run
    from bench_nb.charts import use_theme
    from bench_nb.charts.altair_import import alt

    use_theme()
    if not static:
        return
    if shell is not None:
        shell.display_formatter.ipython_display_formatter.for_type(alt.TopLevelMixin, _display_deferred)
    else:
        if RENDERER not in alt.renderers.names():
            alt.renderers.register(RENDERER, _svg_renderer)
        alt.renderers.enable(RENDERER)


def finish() -> None:
    """Put every chart still rendering in its place and stop the worker (a report's last step; a no-op
    when no chart is pending).

    Raises:
        ReportError: naming each chart vl-convert could not render.
    """
    global _deferred
    if _deferred is not None:
        deferred, _deferred = _deferred, None
        deferred.finish()


class Html:
    """HTML for Jupyter to display (already escaped by whoever built it)."""

    def __init__(self, markup: str) -> None:
        self.markup = markup

    def _repr_html_(self) -> str:
        return self.markup


def heading(title: str, subtitle: str = "") -> Html:
    """The report's title block: ``title``, an optional subtitle and the build time (all escaped)."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    sub = f'<div style="color:#57606a">{html.escape(subtitle)}</div>' if subtitle else ""
    return Html(
        f'<h1 style="font-family:Helvetica,Arial,sans-serif;margin-bottom:2px">{html.escape(title)}</h1>'
        f'{sub}<div style="color:#57606a;font-size:12px">built {when}</div>'
    )


def note(text: str, *, kind: str = "note") -> Html:
    """A short escaped paragraph; ``kind="warning"`` draws it as a warning box."""
    from bench_nb.tables.html import STYLE

    cls = "bnb-warning" if kind == "warning" else "bnb-note"
    return Html(f'{STYLE}<div class="{cls}">{html.escape(text)}</div>')


def report_summary(questions: Any, *, title: str = "") -> None:
    """Publish which runs this report shows and their MemScores, for ``reports/index.html``.

    Displays nothing visible: the report builder reads it from the executed notebook and removes it.
    """
    import polars as pl
    from IPython.display import display

    from bench_nb.metrics import memscore

    scores = memscore(questions, backend="polars")
    assert isinstance(scores, pl.DataFrame)
    runs = [
        {
            "run_id": r["run_id"],
            "provider": r["provider"],
            "benchmark": r["benchmark"],
            "memscore": r["memscore"],
        }
        for r in scores.iter_rows(named=True)
    ]
    display({SUMMARY_MIME: {"title": title, "runs": runs}}, raw=True)


def roi_tile(owner: str | None, db: str | None) -> Html | None:
    """The ROI benchmark's "Only memory knows" tile when ``owner`` and ``db`` are given, else None."""
    if not owner or not db:
        return None
    from bench_nb.roi import roi_tile_html

    return Html(roi_tile_html(owner, db))


def project_path(path: str) -> str:
    """A relative path anchored at the project (the nearest directory up from here with a pyproject.toml),
    or at the working directory outside a project; absolute paths are returned as given."""
    p = Path(path)
    if p.is_absolute():
        return str(p)
    here = Path.cwd()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file():
            return str(d / p)
    return str(here / p)
