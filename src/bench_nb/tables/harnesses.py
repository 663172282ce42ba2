"""Tables for runs from several harnesses: who wrote each run and with which judge, what its file does not
record, how much the judge's replicates spread, and what the answer key's known errors do to each score."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import polars as pl

from bench_nb.frames.backend import as_polars
from bench_nb.frames.harnesses import harness_frame, run_origins
from bench_nb.frames.judgments import judgments_frame
from bench_nb.frames.store import StoredRuns
from bench_nb.metrics.errata import (
    answer_key_ceiling_frame,
    errata_verdicts_frame,
)
from bench_nb.metrics.replicates import replicate_summary_frame
from bench_nb.runformat.load import RunSet, load_runs
from bench_nb.tables.html import Cell, Table, labels_of, render, run_cell
from bench_nb.taxonomy import NORM_TYPES


def _runs(runs: Any) -> RunSet | StoredRuns:
    return runs if isinstance(runs, (RunSet, StoredRuns)) else load_runs(runs)


def shows_harnesses(runs: Any) -> bool:
    """Whether the runs come from several harnesses or any was imported (``table_harnesses`` then says who
    wrote each)."""
    origins = run_origins(_runs(runs))
    return len({harness for _, harness, _, _ in origins}) > 1 or any(
        imported for _, _, imported, _ in origins
    )


def table_harnesses(runs: Any) -> Table:
    """One row per run: the harness that wrote it, its judge (as named, or unknown), answer prompt, answering
    model, judge replicates, and what it does not record."""
    from bench_nb.frames.questions import runs_frame

    loaded: Any = _runs(runs)
    labels = labels_of(runs_frame(loaded))
    frame = harness_frame(loaded).with_columns(
        not_recorded=pl.when(pl.col("not_recorded").list.len() > 0).then(
            pl.col("not_recorded").list.join(", ")
        )
    )
    rows_data = frame.to_dicts()
    frame = frame.drop("imported")

    def by(r: dict[str, Any], key: str) -> Cell | str:
        value = r[key]
        return value if value else Cell(f"not recorded by {r['harness']}", "", title="the file does not say")

    rows = [
        [
            run_cell(r["run_id"], labels),
            r["harness"],
            Cell(
                r["judge"] or f"not recorded by {r['harness']}",
                badges=(("unknown", "bnb-flag"),) if (r["judge"] or "").startswith("unknown") else (),
            ),
            by(r, "answer_prompt"),
            by(r, "answering_model"),
            Cell(str(r["replicates"]), "num"),
            _recorded(r),
        ]
        for r in frame.iter_rows(named=True)
    ]
    notes = [
        "Imported runs (other harnesses' result files) keep their own judge and answer prompt: their scores are "
        "that harness's, graded its way. What a file does not record is blank in every table, never zero.",
    ]
    checked = sorted({r["questions_checked_against"] for r in rows_data if r["questions_checked_against"]})
    if checked:
        notes.append(
            f"Imported questions were matched to LoCoMo's ids and checked by text against {', '.join(checked)}."
        )
    html = render(
        ["run", "harness", "judge", "answer prompt", "answering model", "judge replicates", "recorded"],
        rows,
        caption="Harnesses and judges",
        notes=notes,
    )
    return Table(frame, html)


def _recorded(r: dict[str, Any]) -> str:
    """The "recorded" cell: what the run's file lacks, and the token totals it states for the run only."""
    text = f"not recorded by {r['harness']}: {r['not_recorded']}" if r["not_recorded"] else "everything"
    totals = _run_totals(r)
    return f"{text}; {totals}" if totals else text


def _run_totals(r: dict[str, Any]) -> str | None:
    """``"answerer tokens, run totals only: 38,354,838 input, 845,277 output"``, or None."""
    parts = [
        f"{r[f'answer_{side}_tokens_run_total']:,} {side}"
        for side in ("input", "output")
        if r.get(f"answer_{side}_tokens_run_total") is not None
    ]
    return "answerer tokens, run totals only: " + ", ".join(parts) if parts else None


def not_recorded_note(runs: Any, what: str) -> str | None:
    """``"latency: not recorded by zep; by evermemos (a, b)"`` (runs by their labels, none when the label is
    the harness), or None when every run
    records ``what`` (``latency``, ``tokens``, ``retrieved context``). A run whose file states ``what`` only
    for the whole run (``tokens per question``: EverMemOS's answerer totals) is named with "per question"."""
    from bench_nb.frames.questions import runs_frame

    loaded: Any = _runs(runs)
    by_harness: dict[str, list[str]] = {}
    for run_id, harness, _, lacks in run_origins(loaded):
        lacked = next((x for x in lacks if x == what or x.startswith(f"{what} per ")), None)
        if lacked is not None:
            label = harness if lacked == what else f"{harness}, which states run totals only"
            by_harness.setdefault(label, []).append(run_id)
    if not by_harness:  # the runs' labels (a pass over every question) only for a note
        return None
    labels = labels_of(runs_frame(loaded))
    by_harness = {h: [labels.get(run_id, run_id) for run_id in ids] for h, ids in by_harness.items()}
    parts = [f"by {h}" + ("" if ids == [h] else f" ({', '.join(ids)})") for h, ids in by_harness.items()]
    note = f"{what.capitalize()}: not recorded " + "; ".join(parts) + ": blank below, never zero."
    if any(h.endswith("only") for h in by_harness):
        note += " Those totals are in the harnesses table: a run total is not a per-question figure."
    return note


def _pp(x: float | None) -> str:
    """Two decimals, half up (as the LoCoMo audit prints: 87/96 = 90.625 is 90.63)."""
    return "n/a" if x is None else str(Decimal(repr(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def table_replicates(runs: Any) -> Table | None:
    """Per run (and per question type): each replicate's accuracy, their mean, population and sample SD and
    the majority vote; None when no run has more than one replicate.

    ``runs``: run sources, or the ``judgments_df`` frame a notebook already has (then nothing is read again).
    """
    frame = as_polars(runs)
    judgments = frame if frame is not None else judgments_frame(runs)  # one frame for both summaries
    overall = replicate_summary_frame(judgments)
    if overall.is_empty() or max(overall["replicates"].fill_null(1).to_list()) < 2:
        return None
    per_type = replicate_summary_frame(judgments, "question_type")
    labels = labels_of(judgments)
    rows: list[list[object]] = []
    for r in overall.iter_rows(named=True):
        types = per_type.filter(pl.col("run_id") == r["run_id"])
        for label, row in [("all", r), *((t["question_type"], t) for t in types.iter_rows(named=True))]:
            rows.append(
                [
                    run_cell(r["run_id"], labels) if label == "all" else "",
                    label,
                    Cell(str(row["n"]), "num"),
                    Cell(str(row["replicates"]), "num"),
                    Cell(", ".join(_pp(v) for v in row["replicate_accuracies"]), "num"),
                    Cell(_pp(row["accuracy_mean"]), "num"),
                    Cell(_pp(row["accuracy_sd_pop"]), "num"),
                    Cell(_pp(row["accuracy_sd_sample"]), "num"),
                    Cell(_pp(row["majority_accuracy"]), "num"),
                ]
            )
    html = render(
        [
            "run",
            "question type",
            "n",
            "replicates",
            "accuracy per replicate %",
            "mean %",
            "SD (population)",
            "SD (sample)",
            "majority vote %",
        ],
        rows,
        caption="Judge replicates: the same judge grading every answer several times",
        notes=[
            "Mean = the mean of the replicates' accuracies (what EverMemOS's pipeline publishes); SD in "
            "percentage points, population (ddof 0, as published) and sample (ddof 1); majority vote = accuracy "
            "of the verdict most replicates gave, which is the verdict every other table uses.",
        ],
    )
    return Table(
        per_type.vstack(overall.with_columns(question_type=pl.lit("all")).select(per_type.columns)), html
    )


def _errata_questions(errata: Any, runs: Any) -> pl.DataFrame:
    """The runs' questions with the errata's columns, read once for the whole table."""
    frame = as_polars(runs)
    if frame is not None:
        return frame
    from bench_nb.frames.questions import questions_frame

    loaded: Any = _runs(runs)  # a StoredRuns too, as answer_key_ceiling reads it
    return questions_frame(loaded, errata=errata)


def ceiling_groups(
    overall: pl.DataFrame, per_type: pl.DataFrame
) -> list[tuple[dict[str, float | None], list[str]]]:
    """The answer key's ceiling per set of runs that share it: ``[({"all": c, type: c, ...}, [run_id, ...])]``
    in the runs' order. Runs on different questions (a 150-question sample and the full 1,540) have different
    ceilings, overall and per type: each run is read against its own, never the first run's or the highest."""
    groups: dict[tuple[tuple[str, float | None], ...], list[str]] = {}
    for r in overall.iter_rows(named=True):
        rid = r["run_id"]
        parts = per_type.filter(pl.col("run_id") == rid)
        ceiling = {"all": r["ceiling"], **dict(zip(parts["question_type"], parts["ceiling"], strict=True))}
        key = tuple(sorted((k, None if v is None else round(v, 9)) for k, v in ceiling.items()))
        groups.setdefault(key, []).append(rid)
    return [(dict(key), members) for key, members in groups.items()]


def table_answer_key(errata: Any, runs: Any) -> Table:
    """The answer key's known errors: the ceiling per question type beside each run's accuracy (flagged when
    above it), accuracy on right gold, and how many of each run's verdicts fall on flagged questions."""
    from bench_nb.charts.labels import run_labels
    from bench_nb.frames.errata import as_errata

    errata = as_errata(errata)
    q = _errata_questions(errata, runs)
    labels = run_labels(q)
    overall = answer_key_ceiling_frame(errata, q)
    per_type = answer_key_ceiling_frame(errata, q, by="question_type")
    types = sorted(
        per_type["question_type"].unique().to_list(),
        key=lambda t: NORM_TYPES.index(t) if t in NORM_TYPES else 99,
    )
    flagged: list[str] = []

    def acc_cell(row: dict[str, Any] | None) -> Cell:
        if row is None:
            return Cell("—", "num")
        above = bool(row["above_ceiling"])
        return Cell(
            _pp(row["accuracy"]),
            "num",
            title=f"on right gold: {_pp(row['accuracy_gold_right'])}%; credit on {row['correct_on_wrong_gold']} wrong-gold questions",
            badges=(("above ceiling", "bnb-flag"),) if above else (),
        )

    groups = ceiling_groups(overall, per_type)
    rows: list[list[object]] = []
    verdicts = errata_verdicts_frame(errata, q)
    by_run = {r["run_id"]: r for r in overall.iter_rows(named=True)}
    for ceiling, members in groups:
        name = "ceiling (perfect system)"
        if len(groups) > 1:
            name += ": " + ", ".join(labels.get(m, m) for m in members)
        rows.append(
            [
                Cell(name, title="100 · (n − wrong gold) / n, on the questions these runs scored"),
                *(
                    Cell("—" if c is None else _pp(c), "num")
                    for c in (ceiling["all"], *(ceiling.get(t) for t in types))
                ),
                "",
                "",
            ]
        )
        for rid in members:
            r = by_run[rid]
            by_t = {
                p["question_type"]: p for p in per_type.filter(pl.col("run_id") == rid).iter_rows(named=True)
            }
            if r["above_ceiling"] or any(p["above_ceiling"] for p in by_t.values()):
                flagged.append(labels.get(rid, rid))
            mine = verdicts.filter((pl.col("run_id") == rid) & pl.col("gold_wrong"))
            cited = verdicts.filter((pl.col("run_id") == rid) & ~pl.col("gold_wrong"))
            rows.append(
                [
                    run_cell(rid, labels),
                    acc_cell(r),
                    *(acc_cell(by_t.get(t)) for t in types),
                    Cell(_pp(r["accuracy_gold_right"]), "num"),
                    Cell(
                        f"{int(mine['correct'].sum())} correct / {int(mine['incorrect'].sum())} incorrect"
                        + (
                            f" (wrong citation only: {int(cited['correct'].sum())} / {int(cited['incorrect'].sum())})"
                            if len(cited)
                            else ""
                        ),
                        "num",
                    ),
                ]
            )
    counts = ", ".join(f"{k} {v}" for k, v in errata.counts().items())
    warnings = (
        [f"{', '.join(flagged)} score above a ceiling: only credit on wrong gold answers can explain that."]
        if flagged
        else []
    )
    html = render(
        ["run", "all %", *[f"{t} %" for t in types], "on right gold %", "verdicts on wrong-gold questions"],
        rows,
        caption="The answer key's known errors",
        warnings=warnings,
        notes=[
            f"Errata: {errata.source} (sha256 {errata.sha256[:12]}…): {len(errata)} entries ({counts}); "
            f"{len(errata.wrong_gold)} gold answers are wrong. A perfect system is graded wrong on those, so no "
            "honest score exceeds the ceiling; a correct verdict on a wrong-gold question means the judge "
            "accepted an answer that agrees with a wrong key, or a lenient judge passed it.",
            "On right gold = accuracy on the questions whose gold answer is right. Hover an accuracy for its "
            "credit on wrong-gold questions.",
        ],
    )
    return Table(per_type, html)
