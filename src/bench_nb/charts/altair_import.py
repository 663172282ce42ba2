"""``alt``: altair, imported after jsonschema was loaded without its optional format checkers (1.5-2 s
saved in every kernel that draws a chart; see ``bench_nb.fast_imports``). Every chart module imports
``alt`` from here.
"""

from __future__ import annotations

from bench_nb.fast_imports import load_jsonschema

load_jsonschema()

import altair as alt  # noqa: E402  (after jsonschema)

__all__ = ["alt"]
