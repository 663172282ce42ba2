"""A small HTML table writer: every value escaped, cells may carry a CSS class and a tooltip.

The tables here need per-cell classes (the bands) and badges beside escaped run text, which is simplest
to write directly; nothing from a run is ever inserted into the markup unescaped. The writer itself
(``render``, ``Cell``, ``STYLE``) lives in ``bench_nb.text``, so result objects of lower layers (``RunSet``,
``JudgeAgreement``) display with the same look.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from bench_nb.frames.backend import is_pandas_frame, to_backend
from bench_nb.text import STYLE as STYLE
from bench_nb.text import Cell as Cell
from bench_nb.text import cell as cell
from bench_nb.text import esc as esc
from bench_nb.text import labelled as labelled
from bench_nb.text import render as render

if TYPE_CHECKING:
    import pandas as pd


def run_cell(run_id: str, labels: Mapping[str, str], **kw: Any) -> Cell:
    """A run's cell: its label (``charts.labels.run_labels``, at most 40 characters) on one line, its full run
    id as the tooltip (``title``); ``kw`` as for ``Cell`` (``badges``)."""
    return Cell(labels.get(run_id, run_id), "run", title=run_id, **kw)


def labels_of(frame: Any) -> dict[str, str]:
    """run_id -> the run's label in every table and chart of a report (``charts.labels.run_labels``, unique
    among the runs of ``frame``: a polars frame with ``run_id`` and ``provider``); run ids themselves when
    the frame names no provider."""
    from bench_nb.charts.labels import run_labels

    if "provider" not in frame.columns:
        return {r: r for r in frame["run_id"].unique(maintain_order=True).to_list()}
    return run_labels(frame)


def band_badge(band: str | None) -> tuple[tuple[str, str], ...]:
    """The badge of a band (its text and CSS class), or none without a band."""
    return () if not band else ((band, f"bnb-band bnb-{band}"),)


@dataclass(frozen=True, repr=False)
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
        return self.frame if is_pandas_frame(self.frame) else to_backend(self.frame, "pandas")

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        """A console's view and a notebook's text/plain: the numbers (not the HTML again)."""
        return repr(self.frame)

    def __str__(self) -> str:
        return self.data.to_string(index=False)


def missing(x: object) -> bool:
    """No number: None or NaN."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: float | None, digits: int = 1) -> str:
    """A proportion as a percentage with ``digits`` decimals; ``n/a`` when missing."""
    return "n/a" if x is None or missing(x) else f"{x * 100:.{digits}f}%"


def interval(lo: float | None, hi: float | None, scale: float = 100) -> str:
    """``[12.5–30.0]`` for bounds given as fractions (``scale=1`` for points); ``[-24.1 to -3.6]`` when a
    bound is negative, where a dash between two minus signs would misread; "" without both bounds."""
    if lo is None or hi is None or missing(lo) or missing(hi):
        return ""
    sep = " to " if lo < 0 or hi < 0 else "–"
    return f"[{lo * scale:.1f}{sep}{hi * scale:.1f}]"


def num(x: float | None, digits: int = 0) -> str:
    """A number with thousands separators and ``digits`` decimals; ``n/a`` when missing."""
    return "n/a" if x is None or missing(x) else f"{x:,.{digits}f}"
