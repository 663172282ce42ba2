"""jsonschema without the optional format checkers it loads at import, for the libraries that import it
(altair in a notebook's kernel; nbformat, papermill and nbconvert in the report builder).

jsonschema loads a checker module per string format when it is installed: compiling rfc3987_syntax's
grammar alone costs 1.5-2 s of every process that imports jsonschema (jupyterlab's dependencies install it),
and fqdn, idna, rfc3986/rfc3339 validators, webcolors, jsonpointer, uri_template and isoduration tens of
milliseconds more. None of altair's or nbformat's schemas is checked against those formats.
``load_jsonschema()`` imports jsonschema with these modules hidden (unless jsonschema is loaded already);
the entries are removed after, so an explicit import of any of them still works.
"""

from __future__ import annotations

import sys
import threading

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
_lock = threading.Lock()


def load_jsonschema() -> None:
    """Import jsonschema, without its optional format checkers if this is its first import."""
    with _lock:
        if "jsonschema" in sys.modules:
            return
        hidden = [m for m in _OPTIONAL_FORMAT_CHECKERS if m not in sys.modules]
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]  # makes `import name` fail at once
        try:
            import jsonschema  # noqa: F401
        finally:
            for name in hidden:
                del sys.modules[name]
