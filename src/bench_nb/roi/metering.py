"""Metering: every model call of the prober and the judge is a usage event in the store.

A usage event holds the owner, the purpose (``prober`` or ``judge``), the model and the billed input and output
tokens. Calls made on the owner's own key are marked ``own_key`` and left out of the deployment's totals
(:func:`deployment_usage`). Benchmark results are not usage events.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.roi.records import ModelUsage, Purpose
from bench_nb.roi.store import RoiStore, borrow_store


@dataclass(frozen=True)
class Meter:
    """Records model calls for one owner (and run) in the store."""

    store: RoiStore
    owner: str
    own_key: bool = False
    run_id: str | None = None

    def record(self, purpose: Purpose, usage: Iterable[ModelUsage]) -> None:
        """Record each model call of ``usage`` in the store, under ``purpose`` (probe writing or judging)."""
        for event in usage:
            self.store.add_usage(self.owner, purpose, event, own_key=self.own_key, run_id=self.run_id)


def usage_frame(owner: str, db: str | Path | RoiStore) -> pl.DataFrame:
    """The owner's usage events, oldest first (one row per model call)."""
    with borrow_store(db) as store:
        rows = store.usage_rows(owner)
    schema = {
        "id": pl.Int64,
        "owner": pl.String,
        "purpose": pl.String,
        "model": pl.String,
        "input_tokens": pl.Int64,
        "output_tokens": pl.Int64,
        "own_key": pl.Boolean,
        "run_id": pl.String,
        "created_at": pl.String,
    }
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)


usage_df = with_backend(usage_frame, "usage_df")


def deployment_usage(db: str | Path | RoiStore) -> dict[str, dict[str, int]]:
    """The deployment's token totals per purpose, without calls made on owners' own keys.

    Returns:
        ``{purpose: {"calls": n, "input_tokens": n, "output_tokens": n}}`` for ``prober`` and ``judge``.
    """
    with borrow_store(db) as store:
        rows = store.usage_totals()
    totals = {p: {"calls": 0, "input_tokens": 0, "output_tokens": 0} for p in ("prober", "judge")}
    for r in rows:
        totals[r.pop("purpose")] = r  # calls, input_tokens, output_tokens
    return totals
