"""jsonschema without the optional format checkers it loads at import, for the libraries that import it
(altair in a notebook's kernel; nbformat, papermill and nbconvert in the report builder).

jsonschema checks a string format only when the library for it is installed, and finds out by importing it
when jsonschema itself is imported: compiling rfc3987_syntax's grammar alone costs 1.5-2 s of every process
that imports jsonschema (jupyterlab's dependencies install it), and fqdn, idna, rfc3986/rfc3339 validators,
webcolors, jsonpointer, uri_template and isoduration tens of milliseconds more. None of altair's or
nbformat's schemas is checked against those formats.

``load_jsonschema()`` imports jsonschema (unless it is loaded already) with an import finder in front of
``sys.meta_path`` (the documented ``importlib`` hook) that answers "not installed" for these modules while
jsonschema imports, so jsonschema leaves those formats unchecked, as it documents for a missing library. The
finder is removed right after: an explicit import of any of them still works. Nothing of jsonschema's own is
touched.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

_OPTIONAL_FORMAT_CHECKERS = frozenset(
    {
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
    }
)
_lock = threading.Lock()


class _NotInstalled(importlib.abc.MetaPathFinder):
    """Finds the optional format checkers as not installed (``ModuleNotFoundError``)."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def load_jsonschema() -> None:
    """Import jsonschema, without its optional format checkers if this is its first import."""
    with _lock:
        if "jsonschema" in sys.modules:
            return
        finder = _NotInstalled(frozenset(m for m in _OPTIONAL_FORMAT_CHECKERS if m not in sys.modules))
        sys.meta_path.insert(0, finder)
        try:
            import jsonschema  # noqa: F401
        finally:
            sys.meta_path.remove(finder)
