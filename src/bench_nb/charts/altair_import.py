"""``alt``: altair, imported without the 1-2 s jsonschema spends compiling rfc3987_syntax's grammar.

jsonschema (which altair imports) loads rfc3987_syntax at import when it is installed, for IRI formats
altair never validates. While altair loads the module is hidden (unless jsonschema is already loaded);
the entry is removed after, so an explicit ``import rfc3987_syntax`` still works. Every chart module
imports ``alt`` from here.
"""

from __future__ import annotations

import sys

_hide = "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules
if _hide:
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
try:
    import altair as alt
finally:
    if _hide:
        del sys.modules["rfc3987_syntax"]

__all__ = ["alt"]
