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
    """The altair module, with the ``bench_nb`` theme registered (not enabled)."""
    from bench_nb.charts.theme import THEME, bench_nb_theme
    from bench_nb.fast_imports import load_jsonschema

    load_jsonschema()
    import altair as alt

    alt.theme.register(THEME, enable=False)(cast(Any, bench_nb_theme))  # a plain dict, not altair's TypedDict
    return alt
