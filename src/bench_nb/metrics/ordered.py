"""Sums that give the same bits on every call: rows sorted into one order, then added by numpy in it.

polars adds a group's floats in whatever order its threads reach them (``group_by(...).agg(sum)``,
``mean().over(...)``), so a float sum, and every number computed from it, could differ in its last bits
between two calls on the same frame, and between processes with another ``POLARS_MAX_THREADS``; a receipt
recomputed a moment after it was written then failed to verify (docs/gate.md). Every per-haystack or
per-group float sum that feeds a published number is taken here instead: the rows sorted by the group's keys
and then by a total order within a group (``question_id``), and each run of equal keys reduced by numpy
(``numpy.add.reduceat``), which adds a segment's values in the same order every time. Integer and boolean
sums are exact in any order and may stay in polars.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import polars as pl

ORDER = ("question_id",)  # the total order of rows within a group (unique per run)


def sort_rows(frame: pl.DataFrame, keys: Sequence[str], order: Sequence[str] = ORDER) -> pl.DataFrame:
    """``frame`` sorted by ``keys``, then by the ``order`` columns it has (stable: rows equal in all of them
    keep their order)."""
    by = [*keys, *(c for c in order if c in frame.columns and c not in keys)]
    return frame.sort(by, maintain_order=True) if by else frame


def starts(frame: pl.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """The first row of each run of equal ``keys`` in ``frame`` (sorted by them): increasing row numbers."""
    if frame.is_empty():
        return np.zeros(0, dtype=np.int64)
    ids = frame.select(pl.struct(list(keys)).rle_id()).to_series().to_numpy()
    return np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])


def sizes(first: np.ndarray, rows: int) -> np.ndarray:
    """How many rows each segment starting at ``first`` holds, of ``rows`` in all."""
    return np.diff(np.append(first, rows)).astype(np.int64)


def segment_sums(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The sum of each segment of ``values`` starting at ``first``, added in the rows' order."""
    values = np.ascontiguousarray(values, dtype=float)
    return np.add.reduceat(values, first) if len(first) else np.zeros(0)


def segment_spread(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Σ (y − ȳ)² over each segment of ``values`` starting at ``first`` (ȳ the segment's mean)."""
    values = np.ascontiguousarray(values, dtype=float)
    n = sizes(first, len(values))
    means = segment_sums(values, first) / np.maximum(n, 1)
    return segment_sums((values - np.repeat(means, n)) ** 2, first)


def sums_by(frame: pl.DataFrame, keys: Sequence[str], columns: Sequence[str]) -> pl.DataFrame:
    """``keys``, the sum of each of ``columns`` (Float64) and ``c`` (the rows, Int64) per group of ``keys``,
    sorted by them: ``frame.group_by(keys).agg(col.sum(), c=pl.len()).sort(keys)``, the same bits every call."""
    rows = sort_rows(_read_only(frame, keys, columns), keys)
    first = starts(rows, keys)
    out = rows.select(*keys)[first] if len(first) else rows.select(*keys).clear()
    sums = {c: segment_sums(rows[c].cast(pl.Float64).to_numpy(), first) for c in columns}
    return out.with_columns(
        *(pl.Series(c, v, dtype=pl.Float64) for c, v in sums.items()),
        pl.Series("c", sizes(first, len(rows)), dtype=pl.Int64),
    )


def _read_only(frame: pl.DataFrame, keys: Sequence[str], columns: Sequence[str]) -> pl.DataFrame:
    """The columns a sum reads: sorting moves every column (a questions frame has 70, text among them)."""
    return frame.select(list(dict.fromkeys([*keys, *columns, *(c for c in ORDER if c in frame.columns)])))


def means_by(frame: pl.DataFrame, keys: Sequence[str], columns: Sequence[str]) -> pl.DataFrame:
    """``keys`` and the mean of each of ``columns`` (Float64, nulls left out, null when a group has no value)
    per group of ``keys``, groups in order of appearance: ``frame.group_by(keys, maintain_order=True)
    .agg(col.mean())``, the same bits every call."""
    rows = sort_rows(_read_only(frame, keys, columns), keys)
    first = starts(rows, keys)
    bounds = [*first.tolist(), len(rows)]
    means = {}
    for c in columns:
        values = rows[c].cast(pl.Float64)
        known = values.is_not_null().to_numpy()
        y = values.fill_null(0.0).to_numpy()
        got: list[float | None] = []
        for a, b in itertools.pairwise(bounds):
            n = int(known[a:b].sum())
            # math.fsum: the correctly rounded sum, the same whatever the order or the machine (few groups)
            got.append(math.fsum(y[a:b][known[a:b]]) / n if n else None)
        means[c] = pl.Series(c, got, dtype=pl.Float64)
    per = (rows.select(*keys)[first] if len(first) else rows.select(*keys).clear()).with_columns(
        *means.values()
    )
    order = frame.select(*keys).unique(maintain_order=True)
    return order.join(per, on=list(keys), how="left", maintain_order="left", nulls_equal=True)
