"""Charts to files and to inline SVG, offline (vl-convert: no browser, no network)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from bench_nb.charts.spec import VegaLiteChart
from bench_nb.charts.theme import themed

if TYPE_CHECKING:
    from bench_nb.charts.spec import Chart

Format = Literal["png", "svg", "html", "pdf"]


def chart_spec(chart: Chart) -> dict[str, Any]:
    """The chart's Vega-Lite spec with bench_nb's theme applied: an altair chart's validated against
    Vega-Lite's schema, a report kernel's ``VegaLiteChart`` its dict as it is (no altair imported)."""
    if isinstance(chart, VegaLiteChart):
        return chart.to_dict()
    with themed():
        return chart.to_dict()


def to_svg(chart: Chart) -> str:
    """The chart as an SVG document (text), for embedding in HTML reports."""
    import vl_convert as vlc

    return str(vlc.vegalite_to_svg(chart_spec(chart)))


def save(chart: Chart, path: str | Path, *, format: Format | None = None, scale: float = 2.0) -> Path:
    """Write ``chart`` to ``path`` as PNG, SVG, PDF or self-contained HTML, offline.

    Args:
        chart: an altair chart or any ``chart_*`` function's result (in a report kernel a
            ``VegaLiteChart``).
        path: the file to write; its suffix picks the format unless ``format`` is given.
        format: ``"png"``, ``"svg"``, ``"html"`` (Vega's JavaScript inlined: opens without network)
            or ``"pdf"``.
        scale: pixel density of PNG output (2 = sharp on screens and in print).

    Returns:
        The path written.
    """
    import vl_convert as vlc

    out = Path(path)
    fmt = format or out.suffix.lower().lstrip(".")
    spec = chart_spec(chart)
    if fmt == "png":
        out.write_bytes(vlc.vegalite_to_png(spec, scale=scale))
    elif fmt == "svg":
        out.write_text(vlc.vegalite_to_svg(spec), encoding="utf-8")
    elif fmt == "pdf":
        out.write_bytes(vlc.vegalite_to_pdf(spec))
    elif fmt == "html":
        out.write_text(vlc.vegalite_to_html(spec, bundle=True), encoding="utf-8")
    else:
        raise ValueError(f"cannot save a chart as {fmt!r} ({out}): use .png, .svg, .pdf or .html")
    return out
