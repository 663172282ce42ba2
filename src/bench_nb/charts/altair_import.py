"""altair, at the edge: ``altair()`` imports it (after jsonschema was loaded without its optional format
checkers, 1.5-2 s saved in every process that draws a chart; see ``bench_nb.fast_imports``) and registers
bench_nb's theme with it. Only the functions that hand altair a chart call it (``spec.to_altair``, ``save``,
``use_theme``, ``themed``); chart modules build plain dicts, so a report kernel never imports altair.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any, cast


@functools.cache
def altair() -> ModuleType:
    """The altair module, with the ``bench_nb`` theme registered (not enabled), and bench_nb's renderer
    (``chart_output.lab_renderer``: Vega-Lite 5, which JupyterLab draws with the Vega it bundles, no
    network) enabled unless a renderer other than altair's default was chosen."""
    from bench_nb.chart_output import LAB_RENDERER, lab_renderer
    from bench_nb.charts.theme import THEME, bench_nb_theme
    from bench_nb.fast_imports import load_jsonschema

    load_jsonschema()
    import altair as alt

    alt.theme.register(THEME, enable=False)(cast(Any, bench_nb_theme))  # a plain dict, not altair's TypedDict
    if (
        alt.renderers.active == "default"
    ):  # nobody chose one: charts draw in JupyterLab offline, no setup call
        alt.renderers.register(LAB_RENDERER, lab_renderer)
        alt.renderers.enable(LAB_RENDERER)
    return alt
