"""``table_receipts(runs)``: each run's receipt (``bench-nb receipt``), its sha256, signature and whether it
verified against the run (``receipts.receipt.verify_receipt``: every number recomputed)."""

from __future__ import annotations

from typing import Any

import polars as pl

from bench_nb.frames.store import StoredRuns
from bench_nb.receipts.receipt import receipt_checks
from bench_nb.runformat.load import RunSet, load_runs
from bench_nb.tables.html import Cell, Table, render

_SCHEMA = {
    "run_id": pl.Utf8,
    "receipt": pl.Utf8,
    "sha256": pl.Utf8,
    "signed_by": pl.Utf8,
    "verified": pl.Boolean,
    "difference": pl.Utf8,
}


def table_receipts(runs: Any) -> Table:
    """One row per run that has a receipt (``RUN.receipt.json`` beside it, or ``receipt.json`` in it): the
    receipt's sha256, who signed it, and whether it verified against the run or the first difference. No
    row when no run has one (``Table.frame`` is then empty: a report shows the table only with rows)."""
    loaded = runs if isinstance(runs, (RunSet, StoredRuns)) else load_runs(runs)
    checks = receipt_checks(loaded)
    frame = pl.DataFrame(
        [
            {
                "run_id": run_id,
                "receipt": c.receipt,
                "sha256": c.sha256,
                "signed_by": c.signed_by,
                "verified": c.ok and c.recomputed,
                "difference": c.difference,
            }
            for run_id, c in checks
        ],
        schema=_SCHEMA,
    )
    rows = [
        [
            r["run_id"],
            Cell((r["sha256"] or "")[:16], title=r["sha256"] or ""),
            f"key {r['signed_by']}" if r["signed_by"] else "unsigned",
            Cell("verified", badges=(("every number recomputed", "bnb-band bnb-excellent"),))
            if r["verified"]
            else Cell(
                f"failed: {r['difference']}", badges=(("does not verify", "bnb-band bnb-investigate"),)
            ),
        ]
        for r in frame.iter_rows(named=True)
    ]
    html = render(
        ["run", "receipt sha256", "signature", "verified"],
        rows,
        caption="Receipts",
        notes=[
            "A receipt (bench-nb receipt) is a hash-bound summary of a run: per-question answer and verdict "
            "hashes and every headline number. Verified: recomputed from the run here, all equal. Check a "
            "signature against the signer's public key with bench-nb verify --public-key (docs/gate.md)."
        ],
    )
    return Table(frame, html)
