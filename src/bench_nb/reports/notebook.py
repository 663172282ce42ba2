"""What report notebooks call: set up charts for offline reports, headings, and the run summary the
report index reads."""

from __future__ import annotations

import html
import os
from datetime import UTC, datetime
from typing import Any

import polars as pl

from bench_nb.charts.altair_import import alt

SUMMARY_MIME = "application/vnd.bench-nb.report-summary+json"
RENDERER = "bench_nb_svg"


def _svg_renderer(spec: dict[str, Any], **_: Any) -> dict[str, str]:
    import vl_convert as vlc

    svg = str(vlc.vegalite_to_svg(spec))
    return {"text/html": f'<figure class="bnb-chart" style="margin:8px 0 18px">{svg}</figure>'}


alt.renderers.register(RENDERER, _svg_renderer)


def in_report() -> bool:
    """True while ``build_report`` executes the notebook (``BENCH_NB_REPORT=1``)."""
    return os.environ.get("BENCH_NB_REPORT") == "1"


def setup_notebook(*, static: bool | None = None) -> None:
    """Turn on bench_nb's chart theme; with ``static`` (default: when building a report) render charts as
    inline SVG, so the exported HTML shows them without JavaScript or network."""
    from bench_nb.charts import use_theme

    use_theme()
    if static if static is not None else in_report():
        alt.renderers.enable(RENDERER)


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
    from pathlib import Path

    p = Path(path)
    if p.is_absolute():
        return str(p)
    here = Path.cwd()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file():
            return str(d / p)
    return str(here / p)
