"""How a chart is shown in a live notebook: a Vega-Lite 5 output, which JupyterLab draws with the Vega it
bundles (no network, no extension).

altair 6 writes Vega-Lite 6 and asks for ``application/vnd.vegalite.v6+json``, which JupyterLab 4 does not
know, so its default renderer falls back to HTML that loads Vega from a CDN and stays blank offline. bench_nb's
charts are plain Vega-Lite 5 under a v6 label: ``lab_renderer`` labels them v5. ``charts.theme.altair``
enables it when bench_nb first hands altair a chart and no renderer was chosen (so ``import bench_nb`` and a
``chart_*`` call draw offline with no setup call); ``reports.setup_notebook()`` enables it too. Only the
standard library here: the report builder and its SVG worker import these names.
"""

from __future__ import annotations

import math
import os
from typing import Any

CHART_MIME = "application/vnd.vegalite.v5+json"
JUPYTERLAB_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
EMBED_OPTIONS = {"renderer": "svg"}  # JupyterLab's vega-embed draws SVG (selectable text, crisp when zoomed)
CHART_META = "bench_nb_chart"  # that output's metadata: {"title": ...}, for error messages
LAB_RENDERER = "bench_nb"  # the altair renderer of these outputs


def in_report() -> bool:
    """True while ``bench_nb.reports.build_report`` executes the notebook (``BENCH_NB_REPORT=1``): the one
    report-mode check of the charts and the report notebooks."""
    return os.environ.get("BENCH_NB_REPORT") == "1"


def lab_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` (altair's Vega-Lite 6) labelled Vega-Lite 5, for JupyterLab's built-in renderer."""
    return {**spec, "$schema": JUPYTERLAB_SCHEMA}


def _title(spec: dict[str, Any]) -> str:
    title, mark = spec.get("title"), spec.get("mark")
    title = title.get("text") if isinstance(title, dict) else title
    return str(title or (mark.get("type") if isinstance(mark, dict) else mark) or "chart")


def _json_safe(value: Any) -> Any:
    """``value`` with NaN and infinities as None (null: missing to Vega), which JSON and Jupyter's messages
    cannot carry."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def chart_bundle(spec: dict[str, Any], **_: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The output (data, metadata) a chart is displayed as: Vega-Lite 5 for JupyterLab's own renderer."""
    title = _title(spec)
    data = {CHART_MIME: _json_safe(lab_spec(spec)), "text/plain": f"<chart {title!r}>"}
    metadata = {CHART_MIME: {"embed_options": dict(EMBED_OPTIONS)}, CHART_META: {"title": title}}
    return data, metadata


lab_renderer = chart_bundle  # the altair renderer (``LAB_RENDERER``): altair passes its options as keywords
