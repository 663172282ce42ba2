"""``alt``: altair, imported without the optional format checkers jsonschema loads for formats altair never
validates.

jsonschema (which altair imports) loads a checker module per string format when it is installed: compiling
rfc3987_syntax's grammar alone costs 1-2 s, and fqdn, idna, rfc3986/rfc3339 validators, webcolors,
jsonpointer, uri_template and isoduration tens of milliseconds more. While altair loads (unless jsonschema is
already loaded) these modules are hidden; the entries are removed after, so an explicit import of any of
them still works. Every chart module imports ``alt`` from here.
"""

from __future__ import annotations

import sys

_OPTIONAL_FORMAT_CHECKERS = (
    "rfc3987_syntax",
    "rfc3987",
    "rfc3986_validator",
    "rfc3339_validator",
    "fqdn",
    "idna",
    "webcolors",
    "jsonpointer",
    "uri_template",
    "isoduration",
)
_hidden = (
    [m for m in _OPTIONAL_FORMAT_CHECKERS if m not in sys.modules] if "jsonschema" not in sys.modules else []
)
for _name in _hidden:
    sys.modules[_name] = None  # type: ignore[assignment]
try:
    import altair as alt
finally:
    for _name in _hidden:
        del sys.modules[_name]

__all__ = ["alt"]
