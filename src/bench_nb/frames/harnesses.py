"""Who wrote each run: one record per run with its harness, judge, answer prompt, answering model, judge
replicates and what its file does not record (``tables.table_harnesses`` shows them).

A run store keeps each run's record from export (``frames.store``), so the harness table and the
"not recorded" notes of a store equal those of the run directories it was exported from.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from bench_nb.frames.columns import HARNESSES
from bench_nb.frames.questions import StoredFrames
from bench_nb.runformat.load import Run, RunSet, load_runs
from bench_nb.runformat.spec import read_spec

HARNESS_SCHEMA: dict[str, Any] = HARNESSES.schema()
RUN_TOTALS = ("answer_input_tokens", "answer_output_tokens")  # ImportInfo.run_tokens' names


def harness_record(run: Run) -> dict[str, Any]:
    """One run's record (``HARNESS_SCHEMA``'s fields; ``not_recorded`` a list, empty when it records all)."""
    ck = run.view
    info = run.imported
    spec = read_spec(run)
    judge = info.judge if info is not None else spec.judge
    prompt = info.answer_prompt if info is not None else spec.answer_prompt
    return {
        "run_id": run.run_id,
        "harness": run.harness,
        "imported": info is not None,
        "judge": judge or None,
        "answer_prompt": prompt,
        "answering_model": (ck.answeringModel if ck is not None else None) or None,
        "replicates": info.replicates if info is not None else _own_replicates(run),
        "not_recorded": list(info.not_recorded) if info is not None else [],
        "questions_checked_against": info.checked_against if info is not None else None,
        **{
            f"{name}_run_total": (info.run_tokens.get(name) if info is not None else None)
            for name in RUN_TOTALS
        },
    }


def _own_replicates(run: Run) -> int:
    """The most replicates of the primary judge in a bench_nb run's judgments (1 without replicates)."""
    from bench_nb.runformat.verdicts import read_replicates

    judge = read_spec(run).judge if run.view is not None else None
    seen = [rep for (_, j, rep) in read_replicates(run.path)[0] if j == judge]
    return max(seen, default=1)


def harness_frame(runs: Any) -> pl.DataFrame:
    """One row per run (``HARNESS_SCHEMA``): from a run store's records, else read from the runs."""
    if isinstance(runs, StoredFrames):
        records = runs.harness_records()
    else:
        records = [harness_record(run) for run in (runs if isinstance(runs, RunSet) else load_runs(runs))]
    return pl.DataFrame(records, schema=HARNESS_SCHEMA)


def run_origins(runs: Any) -> list[tuple[str, str, bool, tuple[str, ...]]]:
    """(run id, harness, imported, what it does not record) per run: ``harness_frame`` without the judge
    replicates (which read each run's judgments)."""
    if isinstance(runs, StoredFrames):
        return [
            (r["run_id"], r["harness"], r["imported"], tuple(r["not_recorded"]))
            for r in runs.harness_records()
        ]
    loaded = runs if isinstance(runs, RunSet) else load_runs(runs)
    return [
        (run.run_id, run.harness, run.imported is not None, run.imported.not_recorded if run.imported else ())
        for run in loaded
    ]
