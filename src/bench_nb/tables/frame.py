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
    if not isinstance(columns, Mapping):
        columns = {c: c.replace("_", " ") for c in (df.columns if columns is None else columns)}
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


RUN_COLUMNS = ("run_id", "run_a", "run_b")
# A float column named for a proportion (and holding values in [-1, 1]) is shown in percent, as the reports do.
_PROPORTION = re.compile(
    r"(^|_)(accuracy|quality_share|success_rate|rate|share|difference|recall|precision|ci_low|ci_high|"
    r"wilson_[ab]_low|wilson_[ab]_high|ceiling)(_[ab])?$"
)
_HEADINGS = {"run_id": "run", "question_type_norm": "question type"}
_P_VALUE = re.compile(r"(^p$|^p_|_p$|p_value)")


def _is_proportion(df: pl.DataFrame, column: str) -> bool:
    if not _PROPORTION.search(column) or not df.schema[column].is_float():
        return False
    values = df[column].drop_nulls().drop_nans()
    return values.is_empty() or bool(values.abs().max() <= 1.0)  # type: ignore[operator]


def show(frame: Any, *, runs: Any = None, caption: str = "", digits: int = 3) -> Table:
    """A frame bench_nb returned (``memscore``, ``accuracy_by_type``, ``compare_runs``, ...), shown in a plain
    notebook as the reports show it: each run by its label (the provider, or ``provider · run id`` cut to 40
    characters; the full id on hover), proportions in percent with one decimal, p-values to three significant
    digits, other floats to ``digits`` decimals, headings in words. The frame itself is left as it was: its
    exact values are ``Table.data``.

    Args:
        frame: a pandas or polars frame, or a result holding one as ``frame`` (``compare_runs``' ``Comparison``).
        runs: where the run labels come from (a questions frame, runs, or their paths); None: the frame's own
            ``run_id`` and ``provider`` columns when it has both, else runs are shown by their ids.
        digits: decimals of floats that are neither proportions nor p-values.
        caption: a heading shown above the table ("": none).
    """
    from bench_nb.metrics import as_questions
    from bench_nb.tables.html import labels_of, run_cell

    frame = getattr(frame, "polars", None) if hasattr(frame, "frame") else frame  # a Comparison: its polars
    df = frame if isinstance(frame, pl.DataFrame) else pl.from_pandas(frame)
    labels = (
        labels_of(as_questions(runs)) if runs is not None else labels_of(df) if "run_id" in df.columns else {}
    )
    percent = {c for c in df.columns if _is_proportion(df, c)}
    headings = [_HEADINGS.get(c, c.replace("_", " ")) for c in df.columns]
    if "question_type" in df.columns and "question_type_norm" in df.columns:  # both: say which is which
        headings[df.columns.index("question_type_norm")] = "normalised type"
    rows: list[list[object]] = []
    for r in df.iter_rows(named=True):
        row: list[object] = []
        for c in df.columns:
            value = r[c]
            if c in RUN_COLUMNS and isinstance(value, str):
                row.append(run_cell(value, labels))
            elif _P_VALUE.search(c) and isinstance(value, float) and value == value:
                row.append(Cell(f"{value:.3g}", "num"))
            else:
                row.append(_shown(value, percent=c in percent, digits=digits))
        rows.append(row)
    return Table(df, render(headings, rows, caption=caption))
