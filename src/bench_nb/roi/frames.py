"""ROI tables: one row per finished run, one row per probe result. Always one owner's rows only."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.roi.store import RoiStore, borrow_store
from bench_nb.roi.summary import finished_runs

RUNS_SCHEMA: dict[str, type[pl.DataType] | pl.DataType] = {
    "run_id": pl.String,
    "owner": pl.String,
    "started_at": pl.String,
    "finished_at": pl.String,
    "provider": pl.String,
    "judge": pl.String,
    "probe_mode": pl.String,
    "probes": pl.Int64,
    "judged": pl.Int64,
    "failed": pl.Int64,
    "with_memory": pl.Int64,
    "without_memory": pl.Int64,
    "exclusive": pl.Int64,
    "exclusive_rate": pl.Float64,
}

RESULTS_SCHEMA: dict[str, type[pl.DataType] | pl.DataType] = {
    "run_id": pl.String,
    "probe_id": pl.String,
    "memory_id": pl.String,
    "scope": pl.String,
    "question": pl.String,
    "probe_mode": pl.String,
    "status": pl.String,
    "with_memory": pl.Boolean,
    "without_memory": pl.Boolean,
    "exclusive": pl.Boolean,
    "confidence": pl.Float64,
    "judge": pl.String,
    "explanation": pl.String,
    "error": pl.String,
    "surfaced": pl.List(pl.String),
    "source_surfaced": pl.Boolean,
    "dropped": pl.Int64,
    "latency_ms": pl.Float64,
}


def roi_runs_frame(owner: str, db: str | Path | RoiStore) -> pl.DataFrame:
    """``owner``'s finished benchmark runs, oldest first, with their numbers (see ``roi.summary``)."""
    with borrow_store(db) as store:
        rows = [
            {k: v for k, v in s.to_dict().items() if k in RUNS_SCHEMA} for s in finished_runs(store, owner)
        ]
    return pl.DataFrame(rows, schema=RUNS_SCHEMA)


roi_runs_df = with_backend(roi_runs_frame, "roi_runs_df")


def roi_results_frame(owner: str, db: str | Path | RoiStore, *, run_id: str | None = None) -> pl.DataFrame:
    """One row per (run, probe) of ``owner``: the probe, what was surfaced, and the judgment.

    Args:
        owner: whose results.
        db: the ROI store.
        run_id: one run only (default: all of the owner's runs).
    """
    with borrow_store(db) as store:
        fetched = store.result_rows(owner, run_id)
    for row in fetched:  # each row a dict of its own, completed here
        surfaced = json.loads(row["surfaced"]) if row["surfaced"] else []
        judged = row["status"] == "judged"
        row["with_memory"] = bool(row["with_memory"]) if judged else None
        row["without_memory"] = bool(row["without_memory"]) if judged else None
        row["exclusive"] = (row["with_memory"] and not row["without_memory"]) if judged else None
        row["surfaced"] = surfaced
        row["source_surfaced"] = row["memory_id"] in surfaced
    return pl.DataFrame(fetched, schema=RESULTS_SCHEMA)


roi_results_df = with_backend(roi_results_frame, "roi_results_df")
