"""What report notebooks call: set up charts for JupyterLab and for offline reports, headings, and the run
summary the report index reads.

Where a chart is drawn (``setup_notebook()``):

- In a live kernel (JupyterLab, VS Code, plain papermill): every displayed chart is a Vega-Lite 5 output
  (``CHART_MIME``, the theme applied), which JupyterLab draws with the Vega it bundles: no network. altair's
  own default would ask for Vega-Lite 6, which JupyterLab does not know, and fall back to HTML that loads
  Vega from a CDN ("Error loading script").
- While ``build_report`` executes a notebook (``BENCH_NB_REPORT=1``): the same outputs, and the kernel never
  renders a chart. The report builder, in its own process, hands each chart to a worker process as soon as
  its cell has run (``bench_nb.reports.svg``) and puts the SVG in its place before exporting the HTML; the
  executed ``.ipynb`` keeps the Vega-Lite, which JupyterLab draws.
- ``setup_notebook(static=True)``: each chart is rendered to inline SVG in the kernel as it is displayed.
"""

from __future__ import annotations

import contextlib
import gc
import html
import json
import os
from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_nb.chart_output import CHART_MIME as CHART_MIME  # a name this module had: kept
from bench_nb.chart_output import LAB_RENDERER, chart_bundle, in_report, lab_renderer
from bench_nb.gc_pause import gc_paused
from bench_nb.reports.svg import figure, spec_to_svg

SUMMARY_MIME = "application/vnd.bench-nb.report-summary+json"
RENDERER = "bench_nb_svg"  # setup_notebook(static=True): inline SVG rendered in the kernel
ALTAIR_CHART = ("altair.vegalite.v6.api", "TopLevelMixin")  # altair's chart base class (module, name)


def _svg_renderer(spec: dict[str, Any], **_: Any) -> dict[str, str]:
    return {"text/html": figure(spec_to_svg(spec))}


def _display_spec(chart: Any) -> None:
    """Display ``chart`` (a report kernel's ``VegaLiteChart``, or any altair chart) as its themed Vega-Lite
    spec, for the report builder to render."""
    from IPython.display import display

    from bench_nb.charts.spec import VegaLiteChart

    if isinstance(chart, VegaLiteChart):
        spec = chart.spec  # no copy (``to_dict``'s): chart_bundle builds the output's spec anew
    else:  # an altair chart a notebook made itself: altair is loaded already
        from bench_nb.charts.theme import themed

        with themed():
            # Not validated against the Vega-Lite schema here (jsonschema costs tens of ms a chart): the
            # chart_* functions are validated in the tests, and vl-convert reports what it cannot draw.
            spec = chart.to_dict(validate=False)
    data, metadata = chart_bundle(spec)
    display(data, raw=True, metadata=metadata)


def beside(name: str | None, run_ids: Collection[str] | None = None) -> str | None:
    """``name`` when a file of that name sits beside the report being built (``build_report`` tells its
    kernel the output's folder), for a relative link to it (the compare report's links to question details
    in ``explore.html``); None outside a report, for no name, or when there is no such file. With
    ``run_ids``, also None unless the folder's ``index.json`` lists that report with every one of those runs:
    an explore report of other runs would show other answers under each link."""
    folder = os.environ.get("BENCH_NB_REPORT_DIR")
    if not name or not in_report() or not folder or not (Path(folder) / name).is_file():
        return None
    if run_ids is None:
        return name
    try:  # plain JSON: reports.index's pydantic model would cost a report's kernel 0.2 s to import
        entries = json.loads((Path(folder) / "index.json").read_text(encoding="utf-8"))["reports"]
        shown = {r["run_id"] for e in entries if e["file"] == name for r in e["runs"]}
    except (OSError, ValueError, LookupError, TypeError):  # no index, or not one build_report wrote
        shown = set()
    return name if set(run_ids) <= shown else None


def setup_notebook(*, static: bool | None = None) -> None:
    """Turn on bench_nb's chart theme and make charts draw with no network.

    By default charts are Vega-Lite 5 outputs, which JupyterLab draws with the Vega it bundles; while
    ``build_report`` runs the notebook they are rendered to SVG by the builder. With ``static=True`` each
    chart is rendered to inline SVG in this process as soon as it is displayed (for frontends that draw no
    Vega-Lite; it costs 0.1-0.5 s a chart).

    While ``build_report`` runs the notebook, the libraries the report needs (polars, bench_nb's charts and
    tables) are imported here with the garbage collector paused, and everything then alive is frozen out of
    later collections (``gc.freeze()``, the documented way to spare long-lived objects): the collector would
    otherwise walk the objects those imports leave, several times during the imports and again at each full
    collection of the cells after (0.1-0.3 s of a report's kernel). A report's kernel lives for one notebook,
    so what is frozen is never missed. Such a kernel never imports altair (nor jsonschema, which altair
    imports): its charts are ``VegaLiteChart`` dicts (``bench_nb.charts.spec``), shown here as the
    Vega-Lite output the builder renders.

    Warnings raised while a cell runs show as the report's own notes in that cell (``warnings_as_notes``),
    never as stderr with a file path.
    """
    report = in_report()
    warnings_as_notes()
    with gc_paused() if report else contextlib.nullcontext():
        import polars  # noqa: F401  (imported by the charts and tables anyway: here, under the pause)

        import bench_nb.charts
        import bench_nb.tables  # noqa: F401

        if report:
            gc.freeze()
    if report:
        from IPython import get_ipython

        from bench_nb.charts.spec import VegaLiteChart

        shell = get_ipython()
        if shell is not None:
            formatter = shell.display_formatter.ipython_display_formatter
            formatter.for_type(VegaLiteChart, _display_spec)
            # A chart a notebook makes with altair itself, matched by name: altair stays unimported until
            # the notebook imports it.
            formatter.for_type_by_name(ALTAIR_CHART[0], ALTAIR_CHART[1], _display_spec)
        return
    from bench_nb.charts import use_theme
    from bench_nb.charts.theme import altair

    use_theme()
    alt = altair()
    # register() replaces a renderer of the same name; asking names() first would scan every installed
    # package's entry points (0.05-0.1 s per kernel).
    for name, renderer in ((RENDERER, _svg_renderer), (LAB_RENDERER, lab_renderer)):
        alt.renderers.register(name, renderer)
    alt.renderers.enable(RENDERER if static else LAB_RENDERER)


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


def section(title: str, text: str = "") -> Html:
    """A section's heading and its opening paragraph (escaped), for a section a code cell shows only when
    the data has something for it (a markdown heading would stay, empty, on every report)."""
    para = f"<p>{html.escape(text)}</p>" if text else ""
    return Html(f"<h2>{html.escape(title)}</h2>{para}")


class _WarningNotes:
    """``warnings.showwarning`` for a notebook: each warning as a note (``note``) in the cell that raised it,
    its message only (no file path or source line), each message once per cell."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def new_cell(self, *_: Any) -> None:
        self.seen.clear()

    def __call__(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        from IPython.display import display

        text = str(message)
        if text in self.seen:
            return
        self.seen.add(text)
        display(note(text))


def warnings_as_notes() -> None:
    """In an IPython kernel, show every warning as a note in the cell that raised it instead of a stderr
    block naming internal paths (what ``setup_notebook`` does for every report notebook); outside one,
    nothing changes."""
    import warnings

    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: warnings stay as they are
        return
    shell = get_ipython()
    if shell is None or isinstance(warnings.showwarning, _WarningNotes):
        return
    notes = _WarningNotes()
    shell.events.register("pre_run_cell", notes.new_cell)
    warnings.showwarning = notes


def note(text: str, *, kind: str = "note") -> Html:
    """A short escaped paragraph; ``kind="warning"`` draws it as a warning box."""
    from bench_nb.tables.html import STYLE

    cls = "bnb-warning" if kind == "warning" else "bnb-note"
    return Html(f'{STYLE}<div class="{cls}">{html.escape(text)}</div>')


def report_summary(questions: Any, *, title: str = "") -> None:
    """Publish the report's title and which runs it shows with their MemScores, for ``reports/index.html``
    (``questions=None``: a report of no runs, such as the ROI page).

    Displays nothing visible: the report builder reads it from the executed notebook and removes it.
    """
    from IPython.display import display

    from bench_nb.metrics.memscore import memscore_frame

    columns = ("run_id", "provider", "benchmark", "memscore")
    runs = [] if questions is None else memscore_frame(questions).select(columns).to_dicts()
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
