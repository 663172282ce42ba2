"""A small HTML table writer: every value escaped, cells may carry a CSS class and a tooltip.

The tables here need per-cell classes (the bands) and badges beside escaped run text, which is simplest
to write directly; nothing from a run is ever inserted into the markup unescaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from bench_nb.frames.questions import is_pandas_frame, to_backend

if TYPE_CHECKING:
    import pandas as pd

STYLE = """<style>
.bnb-table{border-collapse:collapse;font:13px/1.4 Helvetica,Arial,sans-serif;color:#1f2328;margin:6px 0 14px}
.bnb-table caption{text-align:left;font-weight:bold;font-size:14px;padding:4px 0}
.bnb-table th,.bnb-table td{border-bottom:1px solid #d0d7de;padding:4px 10px;text-align:left !important;vertical-align:top}
.bnb-table th{background:#f6f8fa;font-weight:600}
.bnb-table td.num{text-align:right !important;font-variant-numeric:tabular-nums;white-space:nowrap}
.bnb-table td.text{white-space:pre-wrap;max-width:420px;word-break:break-word}
.bnb-band{display:inline-block;border-radius:9px;padding:0 7px;font-size:11px;font-weight:600;white-space:nowrap}
.bnb-excellent{background:#dafbe1;color:#116329}.bnb-good{background:#ddf4ff;color:#0550ae}
.bnb-adequate{background:#fff8c5;color:#7d4e00}.bnb-investigate,.bnb-slow{background:#ffebe9;color:#a40e26}
.bnb-flag{display:inline-block;border-radius:4px;padding:0 5px;font-size:11px;background:#fbefff;color:#6639ba;
  border:1px solid #d8b9ff;margin-left:4px}
.bnb-warning{border-left:4px solid #bf8700;background:#fff8c5;padding:8px 12px;margin:8px 0;
  font:13px/1.4 Helvetica,Arial,sans-serif;color:#1f2328}
.bnb-settings{border-left:4px solid #1a7f37;background:#f6f8fa;padding:8px 12px;margin:8px 0;
  font:13px/1.4 Helvetica,Arial,sans-serif;color:#1f2328}
.bnb-note{font:12px/1.4 Helvetica,Arial,sans-serif;color:#57606a;margin:2px 0 10px}
.bnb-table td.bnb-sub{padding-left:24px !important;color:#57606a}
.bnb-readings{font:13px/1.5 Helvetica,Arial,sans-serif;color:#1f2328}
</style>"""


def esc(value: object) -> str:
    """HTML-escaped text of ``value`` (quotes included)."""
    return html.escape("" if value is None else str(value), quote=True)


@dataclass(frozen=True)
class Cell:
    """One table cell: ``text`` (escaped when written), an optional CSS class, tooltip and badges."""

    text: str
    cls: str = ""
    title: str = ""
    badges: tuple[tuple[str, str], ...] = ()  # (text, css class) shown after the text

    def render(self, tag: str = "td") -> str:
        attrs = f' class="{esc(self.cls)}"' if self.cls else ""
        if self.title:
            attrs += f' title="{esc(self.title)}"'
        extra = "".join(f' <span class="{esc(c)}">{esc(t)}</span>' for t, c in self.badges)
        return f"<{tag}{attrs}>{esc(self.text)}{extra}</{tag}>"


def cell(value: object, cls: str = "", **kw: object) -> Cell:
    return value if isinstance(value, Cell) else Cell("" if value is None else str(value), cls, **kw)  # type: ignore[arg-type]


def band_badge(band: str | None) -> tuple[tuple[str, str], ...]:
    return () if not band else ((band, f"bnb-band bnb-{band}"),)


@dataclass(frozen=True)
class Table:
    """A rendered table: ``data`` (the numbers, a pandas frame) and ``html`` (what notebooks display).

    ``frame`` holds the numbers as the table was built (a polars frame, or a pandas one); ``data`` converts
    it to pandas on first access, so displaying a table never imports pandas.
    """

    frame: Any
    html: str
    warnings: tuple[str, ...] = field(default=())

    @cached_property
    def data(self) -> pd.DataFrame:
        """The numbers behind the table, as a pandas frame."""
        if is_pandas_frame(self.frame):
            return self.frame
        return to_backend(self.frame, "pandas")

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.data.to_string(index=False)


def render(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    caption: str = "",
    notes: Sequence[str] = (),
    warnings: Sequence[str] = (),
) -> str:
    """The HTML of one table: warnings above it, notes below it; every text escaped."""
    parts = [STYLE]
    parts.extend(f'<div class="bnb-warning">⚠ {esc(w)}</div>' for w in warnings)
    parts.append('<table class="bnb-table">')
    if caption:
        parts.append(f"<caption>{esc(caption)}</caption>")
    parts.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead><tbody>")
    for row in rows:
        parts.append("<tr>" + "".join(cell(v).render() for v in row) + "</tr>")
    parts.append("</tbody></table>")
    parts.extend(f'<div class="bnb-note">{esc(n)}</div>' for n in notes)
    return "".join(parts)


def missing(x: object) -> bool:
    """No number: None or NaN."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None or missing(x) else f"{x * 100:.{digits}f}%"


def interval(lo: float | None, hi: float | None) -> str:
    if lo is None or hi is None or missing(lo) or missing(hi):
        return ""
    return f"[{lo * 100:.1f}–{hi * 100:.1f}]"


def num(x: float | None, digits: int = 0) -> str:
    return "n/a" if x is None or missing(x) else f"{x:,.{digits}f}"
