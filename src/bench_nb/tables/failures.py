"""Why answers were wrong: per run and reason, how many wrong answers and their share (``bn.metrics.failure_summary``)."""

from __future__ import annotations

from typing import Any

from bench_nb.frames.errata import ErrataSource
from bench_nb.metrics.failures import summary_and_reasons
from bench_nb.tables.html import Cell, Table, labels_of, pct, render, run_cell
from bench_nb.text import question_href

# How the table names the reasons (``metrics.failures.REASONS``) that are not their names with spaces for "_"
REASON_LABELS = {
    "answer_key_erratum": "answer-key erratum",
    "reader_error_confirmed": "reader error, confirmed",
}


def table_failures(
    data: Any,
    *,
    errata: ErrataSource | None = None,
    judges: list[str] | None = None,
    runs: Any = None,
    explore: str | None = None,
) -> Table:
    """One row per run and reason: the wrong answers put down to it and their share of the run's wrong
    answers, beside the run's wrong and scored answers. ``data``: what ``failure_reasons`` takes.

    ``explore``: the explore report's address relative to the page (``explore.html``): each row then names
    its first question, a link to that question's detail there."""
    frame, reasons = summary_and_reasons(data, errata=errata, judges=judges, runs=runs)
    labels = labels_of(frame)
    example: dict[tuple[str, str], str] = {}
    if explore:  # each row's first question, from the reasons its counts were taken from
        for rid, reason, qid in reasons.select("run_id", "failure_reason", "question_id").iter_rows():
            example.setdefault((rid, reason), qid)
    rows = []
    previous = None
    for r in frame.iter_rows(named=True):
        first = r["run_id"] != previous
        previous = r["run_id"]
        scored = r["scored"]
        rows.append(
            [
                run_cell(r["run_id"], labels) if first else "",
                Cell(REASON_LABELS.get(r["failure_reason"], r["failure_reason"].replace("_", " "))),
                Cell(f"{r['n']:,}", "num"),
                Cell(pct(r["share"]), "num"),
                Cell(f"{r['wrong']:,}" if first else "", "num"),
                Cell(f"{scored:,}" if first and scored is not None else "", "num"),
            ]
        )
        if explore:
            qid = example.get((r["run_id"], r["failure_reason"]), "")
            rows[-1].append(Cell(qid, href=question_href(explore, qid) if qid else ""))
    headers = ["run", "reason", "wrong answers", "share of wrong", "wrong (run)", "scored (run)"]
    html = render(
        headers + (["e.g. question"] if explore else []),
        rows,
        caption="Why answers were wrong",
        notes=[
            "Each wrong answer (a verdict below full marks) gets the first reason that holds: answer-key erratum "
            "(the errata say the gold answer is wrong), judge dispute (the judges split), truncation (the evidence "
            "was not surfaced and the context was cut to a budget), retrieval miss (the evidence was not "
            "surfaced), reader error (it was surfaced; confirmed when re-answering from the gold evidence alone "
            "is still wrong: bench-nb reanswer), unknown (the run records no retrieval evidence).",
        ],
    )
    return Table(frame, html)
