"""The JSON-lines files kept beside a run (``judgments.jsonl``, ``labels.jsonl``), read leniently: each line
decoded and handed to the caller's reader, a bad line skipped and reported with its file and line number,
the other lines still loaded.

Lines are decoded with msgspec (a third of ``json.loads``' time on a 10,000-line file). ``decode_lines`` is
the all-or-nothing form a caller tries first when it can check every line at once (``runformat.verdicts``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from bench_nb.errors import Problem

T = TypeVar("T")

_DECODER = msgspec.json.Decoder()

#: What a line's reader raises to have the line skipped as a problem: ValueError (msgspec.DecodeError is one:
#: not JSON, not UTF-8, a torn last line; or a value the reader refuses), KeyError (a field missing),
#: TypeError and AttributeError (a line that is JSON but not an object).
LINE_ERRORS: tuple[type[Exception], ...] = (ValueError, KeyError, TypeError, AttributeError)


def read_json_lines(path: Path, read: Callable[[Any], T]) -> tuple[list[T], list[Problem]]:
    """``read`` of each non-blank line of ``path`` decoded, in file order, and the lines skipped.

    A line that is not JSON, or whose ``read`` raises one of :data:`LINE_ERRORS`, becomes
    ``Problem(path, "line N skipped: <why>", field="line N")`` (lines counted from 1). A missing file has no
    lines.
    """
    items: list[T] = []
    problems: list[Problem] = []
    for n, line in _lines(path):
        try:
            item = read(_DECODER.decode(line))
        except LINE_ERRORS as err:
            problems.append(Problem(str(path), f"line {n} skipped: {err}", field=f"line {n}"))
            continue
        items.append(item)
    return items, problems


def decode_lines(path: Path) -> list[Any]:
    """Every non-blank line of ``path`` decoded, in file order, with the decoder ``read_json_lines`` uses (so
    a line decodes here exactly when it decodes there); raises ``msgspec.DecodeError`` at the first line that
    does not, which ``read_json_lines`` would name. A missing file has no lines."""
    return [_DECODER.decode(line) for _, line in _lines(path)]


def _lines(path: Path) -> list[tuple[int, bytes]]:
    """The non-blank lines of ``path`` with their numbers (from 1); none for a missing file."""
    if not path.is_file():
        return []
    # bytes.splitlines() splits on \n, \r and \r\n only: the same lines as reading the file as text.
    return [(n, line) for n, line in enumerate(path.read_bytes().splitlines(), start=1) if line.strip()]
