"""Any frame as a bench_nb table: headings in words, numbers rounded for reading, timestamps to the second.

For the pages whose frames have no table of their own (the ROI benchmark's runs, results and usage): the
look of every other table, the exact values in ``Table.data``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

import polars as pl

from bench_nb.tables.html import Cell, Table, render
from bench_nb.text import STYLE, esc

_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]00:?00)?$")


def when(value: object) -> str:
    """A timestamp to the second: ``2026-12-01 09:24:48 UTC`` (ISO text or a datetime); other text as is."""
    if isinstance(value, datetime):
        value = value.isoformat()
    text = "" if value is None else str(value)
    m = _ISO.match(text)
    if not m:
        return text
    return f"{m.group(1)} {m.group(2)}" + (" UTC" if m.group(3) else "")


def _shown(value: object, *, percent: bool, digits: int) -> Cell:
    if value is None or (isinstance(value, float) and value != value):
        return Cell("—", "num")
    if isinstance(value, bool):
        return Cell("yes" if value else "no")
    if isinstance(value, int):
        return Cell(f"{value:.0%}" if percent else f"{value:,}", "num")
    if isinstance(value, float):
        return Cell(f"{value:.1%}" if percent else f"{value:,.{digits}f}", "num")
    if isinstance(value, datetime):
        return Cell(when(value), "num")
    text = str(value)
    return Cell(when(text), "num") if _ISO.match(text) else Cell(text)


def table_frame(
    frame: Any,
    *,
    caption: str = "",
    columns: Mapping[str, str] | Sequence[str] | None = None,
    percent: Collection[str] = (),
    digits: int = 3,
    notes: Sequence[str] = (),
    empty: str = "",
) -> Table:
    """``frame`` (pandas or polars) as a table.

    Args:
        frame: a pandas or polars frame.
        caption: the table's heading.
        columns: the columns to show, in order; a mapping gives each its heading (default: every column,
            headed by its name with spaces for underscores).
        percent: columns of proportions, shown as percentages (one decimal).
        digits: decimals of other floats.
        notes: lines under the table.
        empty: what to show when ``frame`` has no rows (under the caption); "" shows nothing at all.

    Returns:
        A ``Table`` whose ``data`` is the frame's selected columns, exact.
    """
    df = frame if isinstance(frame, pl.DataFrame) else pl.from_pandas(frame)
    if columns is None:
        columns = {c: c.replace("_", " ") for c in df.columns}
    elif not isinstance(columns, Mapping):
        columns = {c: c.replace("_", " ") for c in columns}
    df = df.select(list(columns))
    if df.is_empty():
        html = ""
        if empty:
            heading = f'<div class="bnb-table"><b>{esc(caption)}</b></div>' if caption else ""
            html = f'{STYLE}{heading}<div class="bnb-note">{esc(empty)}</div>'
        return Table(df, html)
    rows = [
        [_shown(r[c], percent=c in percent, digits=digits) for c in columns] for r in df.iter_rows(named=True)
    ]
    return Table(df, render(list(columns.values()), rows, caption=caption, notes=notes))
