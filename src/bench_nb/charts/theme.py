"""bench_nb's one chart theme: plain, colour-blind safe, legible in print.

A Vega-Lite config (``bench_nb_theme()``), which every chart's spec carries: in a report kernel it is
merged into the spec as altair merges a theme (``charts.spec.spec_with_theme``); for altair it is registered
as ``"bench_nb"`` when altair is first handed a chart, ``use_theme()`` turns it on for the session, and
``save``/``to_svg`` always render with it.

altair, at the edge: ``altair()`` imports it (after jsonschema was loaded without its optional format
checkers, 1.5-2 s saved in every process that draws a chart; see ``bench_nb.fast_imports``) and registers
this theme with it. Only the functions that hand altair a chart call it (``spec.to_altair``, ``save``,
``use_theme``, ``themed``); chart modules build plain dicts, so a report kernel never imports altair.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, cast

THEME = "bench_nb"
FONT = "Helvetica, Arial, sans-serif"
# Axis and legend labels longer than this many characters end in an ellipsis. Vega's own truncation (``labelLimit``,
# in pixels) measures each label's width once more, and vl-convert measures text by laying out its glyphs:
# in a report with a 120-row outcome matrix that doubled the time to render the charts (BENCHMARKS.md).
# Cutting by characters in a label expression costs nothing.
AXIS_LABEL_CHARS = 40
_TRUNCATE_LABEL = f"length(datum.label) > {AXIS_LABEL_CHARS} ? slice(datum.label, 0, {AXIS_LABEL_CHARS - 1}) + '…' : datum.label"
# Okabe-Ito: distinguishable with the common colour-vision deficiencies and in greyscale print.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
# One colour per provider in every chart, report and build (not the order the runs came in): bench_nb's own
# providers and the vendors it ships adapters for have fixed colours; any other provider gets one picked from
# its name (see charts.labels.provider_colors, which also keeps providers of one chart apart).
PROVIDER_COLORS: dict[str, str] = {
    "sqlite": "#0072B2",
    "full-context": "#E69F00",
    "no-memory": "#009E73",
    "supermemory": "#D55E00",
    "mem0": "#CC79A7",
    "zep": "#56B4E9",
    "mem0-local": "#000000",
    "hybrid": "#F0E442",
}
OUTCOME_COLORS: dict[str, str] = {
    "correct": "#009E73",
    "incorrect": "#D55E00",
    "unscored": "#E69F00",
    "failed": "#3A3A3A",
    "in_progress": "#9E9E9E",
    "pending": "#D9D9D9",
}


def bench_nb_theme() -> dict[str, Any]:
    """The theme's configuration (fonts, sizes, palette), a new dict each call."""
    return {
        "config": {
            "background": "white",
            "font": FONT,
            "view": {"stroke": None, "continuousWidth": 420, "continuousHeight": 280},
            "title": {"fontSize": 15, "fontWeight": "bold", "anchor": "start", "color": "#1f2328"},
            "axis": {
                "labelLimit": 0,
                "labelExpr": _TRUNCATE_LABEL,
                "labelFontSize": 12,
                "titleFontSize": 12,
                "titleFontWeight": "normal",
                "labelColor": "#1f2328",
                "titleColor": "#1f2328",
                "gridColor": "#e6e6e6",
                "domainColor": "#888888",
                "tickColor": "#888888",
            },
            "header": {"labelFontSize": 12, "titleFontSize": 12},
            # Legends cut as axes do (Vega's 160-pixel default cut "evermemos · gpt-4.1-mini-memos" to
            # "evermemos · gpt-4.1-mini-…": a label the axes and tables never show, without its tooltip).
            "legend": {
                "labelLimit": 0,
                "labelExpr": _TRUNCATE_LABEL,
                "labelFontSize": 12,
                "titleFontSize": 12,
                "symbolSize": 120,
            },
            "range": {"category": list(PALETTE)},
            "point": {"filled": True, "size": 90},
            "text": {"fontSize": 11},
        }
    }


def use_theme() -> None:
    """Make bench_nb's theme the active altair theme."""
    altair().theme.enable(THEME)


@contextmanager
def themed() -> Iterator[None]:
    """Render with bench_nb's theme inside the block (altair), restoring the previous theme after."""
    with altair().theme.enable(THEME):
        yield


@functools.cache
def altair() -> ModuleType:
    """The altair module, with the ``bench_nb`` theme registered (not enabled), and bench_nb's renderer
    (``chart_output.lab_renderer``: Vega-Lite 5, which JupyterLab draws with the Vega it bundles, no
    network) enabled unless a renderer other than altair's default was chosen."""
    from bench_nb.chart_output import LAB_RENDERER, lab_renderer
    from bench_nb.fast_imports import load_jsonschema

    load_jsonschema()
    import altair as alt

    alt.theme.register(THEME, enable=False)(cast(Any, bench_nb_theme))  # a plain dict, not altair's TypedDict
    # nobody chose one: charts draw in JupyterLab offline, no setup call
    if alt.renderers.active == "default":
        alt.renderers.register(LAB_RENDERER, lab_renderer)
        alt.renderers.enable(LAB_RENDERER)
    return alt
