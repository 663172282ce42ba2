"""BEAM's scores per ability, in both readings of partial credit, with intervals over chats."""

from __future__ import annotations

from typing import Any

import polars as pl

from bench_nb.benchmarks.registry import benchmark_traits
from bench_nb.metrics import as_questions
from bench_nb.tables.html import Cell, Table, render


def _points(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f}"


def _graded(q: pl.DataFrame) -> pl.Expr:
    """The rows of a graded benchmark (BEAM's), each benchmark's traits looked up once, not once a row."""
    names = q["benchmark"].drop_nulls().unique().to_list()
    return pl.col("benchmark").is_in([b for b in names if benchmark_traits(b).graded])


def _judge_note(q: pl.DataFrame) -> str:
    judges = sorted(set(q.filter(_graded(q))["judge"]))
    parts = []
    for j in judges:
        if j == "rubric":
            parts.append("rubric (offline: items matched by word overlap, a rough lower bound)")
        elif j.startswith("rubric:"):
            parts.append(f"{j} (bench_nb's own rubric prompt, not the official one)")
        else:
            parts.append(j)
    return "Judged by " + ", ".join(parts) + "." if parts else ""


def has_beam(data: Any) -> bool:
    """Whether the runs hold BEAM questions (the compare report shows its BEAM section then)."""
    q = as_questions(data)
    return bool(len(q)) and not q.filter(_graded(q)).is_empty()


def table_beam(data: Any) -> Table:
    """One row per ability (and overall), per run its mean score in points (0-100) with the 95% interval over
    chats (Student's t, deterministic), in both readings: "0.5 as 0.5" and "as published" (BEAM's code counts
    an item's 0.5 as 0). A partial run's overall is marked not comparable."""
    q = as_questions(data)
    if not has_beam(q):
        html = render(
            [],
            [],
            notes=["No BEAM runs here: BEAM's per-ability scores appear when runs of -b beam are compared."],
        )
        return Table(q.head(0), html)
    from bench_nb.benchmarks.beam import PARTIAL_CREDITS
    from bench_nb.charts.labels import run_labels
    from bench_nb.metrics.beam import OVERALL, READINGS, beam_scores_frame  # numpy: only for BEAM runs

    labels = run_labels(q)
    both = pl.concat([beam_scores_frame(q, reading) for reading in PARTIAL_CREDITS])
    runs = both["run_id"].unique(maintain_order=True).to_list()
    headers = ["ability", "normalised type"]
    for r in runs:
        headers += [f"{labels.get(r, r)} · {READINGS['float']}", f"{labels.get(r, r)} · as published"]
    rows = []
    index = {(r["run_id"], r["ability"], r["partial_credit"]): r for r in both.iter_rows(named=True)}
    abilities = both["ability"].unique(maintain_order=True).to_list()
    warnings = []
    for ability in abilities:
        first = next(r for r in both.iter_rows(named=True) if r["ability"] == ability)
        row: list[object] = [Cell(ability.replace("_", " ")), Cell(first["norm_type"])]
        for run in runs:
            for reading in PARTIAL_CREDITS:
                r = index.get((run, ability, reading))
                if r is None:
                    row.append(Cell("", "num"))
                    continue
                text = _points(r["score"])
                if r["ci_low"] is not None and r["ci_high"] is not None:
                    text += f" [{_points(r['ci_low'])}–{_points(r['ci_high'])}]"
                badges: tuple[tuple[str, str], ...] = ()
                if ability == OVERALL and not r["comparable"]:
                    badges = (("partial: not comparable", "bnb-flag"),)
                elif r["partial"]:
                    badges = (("partial", "bnb-flag"),)
                title = f"{r['questions']} of {r['target']} questions scored, {r['chats']} chats"
                row.append(Cell(text, "num", title=title, badges=badges))
        rows.append(row)
    partial = (
        both.filter((pl.col("ability") == OVERALL) & ~pl.col("comparable"))["run_id"]
        .unique(maintain_order=True)
        .to_list()
    )
    if partial:
        names = ", ".join(labels.get(r, r) for r in partial)
        warnings.append(
            f"Partial runs (a question not scored, an ability missing, or fewer chats than the tier has): {names}. "
            "Their overall score covers what they scored and does not compare with full runs or published figures."
        )
    notes = [
        "Mean score in points (0-100): a question scores the mean of its rubric items (0, 0.5 or 1 each; event "
        "ordering: Kendall's tau-b of the answer's order against the reference, normalised to [0, 1]); an "
        "ability is the mean over chats of each chat's mean; overall weighs the ten abilities equally. "
        "Brackets: 95% interval over chats (Student's t). \"As published\": BEAM's own code truncates each item's "
        "0.5 to 0 for every ability but event ordering. Definitions: docs/statistics.md.",
    ]
    if judge := _judge_note(q):
        notes.append(judge)
    html = render(headers, rows, caption="BEAM: mean score per ability", notes=notes, warnings=warnings)
    return Table(both, html, tuple(warnings))
