"""A short "what to fix" reading of each run's per-type pattern."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from bench_nb.metrics import as_questions
from bench_nb.metrics.accuracy import accuracy_by_type_frame, accuracy_frame
from bench_nb.metrics.memscore import memscore_frame
from bench_nb.tables.bands import accuracy_band, latency_band
from bench_nb.tables.html import STYLE, Table, esc, pct

ADVICE: dict[str, str] = {
    "single-hop": "direct facts are missed: check that every session is ingested, the chunking, and that k "
    "is large enough for the fact to be retrieved",
    "multi-hop": "answers need facts from several sessions: retrieve more (larger k) or link related memories "
    "so one search returns them together",
    "temporal": "time questions fail: store each session's date with its memories and pass the question date "
    "to the answer prompt",
    "open-domain": "these need knowledge beyond the conversation: mostly the answering model, not the memory",
    "knowledge-update": "older facts win over newer ones: keep timestamps, prefer the latest fact, or supersede "
    "outdated memories",
    "preference": "stated preferences do not surface: store them as explicit memories and retrieve them for "
    "recommendation-style questions",
    "abstention": "it answers when it should say it does not know: make the answer prompt abstain when the "
    "context lacks the answer, or raise the relevance threshold",
    "other": "look at these questions one by one (explore.ipynb)",
}
# The run as a whole, read before its question types: a low score overall is the first thing to fix.
OVERALL_ADVICE = (
    "most answers are wrong whatever their type: open the explore report and read a few questions' context "
    "and answer side by side: an empty or unrelated context points at ingest or search, a context that holds "
    "the answer at the answer prompt or the judge"
)
NOTHING_RIGHT_ADVICE = (
    "no answer was right: check that ingest stored the conversations and that search returns them (the "
    "explore report shows each question's context), then that the judge reads the answers it is given"
)

# Types whose advice is about what the memory stores and retrieves: for a run whose search already returned
# every piece of evidence (full recall: the full-context baseline) it does not apply, the reader's does.
MEMORY_TYPES = frozenset({"single-hop", "multi-hop", "temporal", "knowledge-update", "preference"})
READER_ADVICE = (
    "the evidence was in the context (recall 100%), so retrieval is not what fails: the answering model "
    "misreads it: improve the answer prompt or the model (`bench-nb reanswer` from the gold evidence confirms)"
)


@dataclass(frozen=True)
class Reading:
    """One finding: a run, what is weak (a question type, latency, failures), and what to try."""

    run_id: str
    topic: str
    finding: str
    advice: str


def baselines(q: pl.DataFrame) -> set[str]:
    """Runs that retrieve nothing by design (the no-memory baseline, or any run whose search returned nothing
    for every question): memory advice (chunking, k, dates) does not apply to them."""
    from bench_nb.tables.runs import retrieved_nothing

    named = (
        set(q.filter(pl.col("provider") == "no-memory")["run_id"].to_list())
        if "provider" in q.columns
        else set()
    )
    return named | retrieved_nothing(q)


def full_recall(q: pl.DataFrame) -> set[str]:
    """Runs whose search returned all the evidence of every question it was scored on (recall@k 100%, as
    the full-context baseline's): advice to retrieve more does not apply to them."""
    if "recall_at_k" not in q.columns:
        return set()
    recall = q.group_by("run_id").agg(pl.col("recall_at_k").min().alias("least"))
    return set(recall.filter(pl.col("least") >= 1.0)["run_id"].to_list())


def _advice(typ: str, reader: bool) -> str:
    if reader and typ in MEMORY_TYPES:
        return READER_ADVICE
    return ADVICE.get(typ, ADVICE["other"])


def what_to_fix(data: Any, *, min_n: int = 5, gap: float = 0.10, top: int = 3) -> list[Reading]:
    """Findings per run: first the run's overall accuracy when it reads ``investigate`` (under 60%; at 0%: no
    answer was right), then the question types read ``investigate`` or at least ``gap`` below the
    run's overall accuracy (types with fewer than ``min_n`` scored questions are skipped), weakest first,
    at most ``top``; then slow search and failed or unscored questions. A run that retrieves nothing by
    design (``baselines``: no-memory) gets no question-type or latency advice, only its failures; a run at
    full recall (``full_recall``: full-context) gets the reader's advice instead of the memory's."""
    q = as_questions(data)
    skip, reader = baselines(q), full_recall(q)
    overall = accuracy_frame(q)
    by_type = accuracy_by_type_frame(q)
    scores = memscore_frame(q)
    out: list[Reading] = []
    base = {r["run_id"]: r["accuracy"] for r in overall.iter_rows(named=True)}
    for r in scores.iter_rows(named=True):
        rid = r["run_id"]
        mean = base.get(rid)
        if rid not in skip and accuracy_band(mean) == "investigate":
            scored = overall.filter(pl.col("run_id") == rid)["scored"][0]
            advice = NOTHING_RIGHT_ADVICE if mean == 0 else READER_ADVICE if rid in reader else OVERALL_ADVICE
            out.append(Reading(rid, "overall", f"overall {pct(mean, 0)} of {scored} scored", advice))
        if rid in skip:
            weak = by_type.clear()
        else:
            weak = by_type.filter(
                (pl.col("run_id") == rid) & (pl.col("scored") >= min_n) & pl.col("accuracy").is_not_null()
            ).sort("accuracy")
        for t in weak.iter_rows(named=True):
            acc = t["accuracy"]
            below = mean is not None and acc <= mean - gap
            if accuracy_band(acc) != "investigate" and not below:
                continue
            if sum(1 for x in out if x.run_id == rid and x.topic not in ("latency", "overall")) >= top:
                break
            typ = t["question_type_norm"] or "other"
            finding = f"{typ}: {pct(acc, 0)} of {t['scored']}"
            if mean is not None:
                finding += f" (run overall {pct(mean, 0)})"
            out.append(Reading(rid, typ, finding, _advice(typ, rid in reader)))
        if rid not in skip and latency_band(r["latency_ms"]) == "slow":
            out.append(
                Reading(
                    rid,
                    "latency",
                    f"search takes {r['latency_ms']} ms on average",
                    "search is slow (over 500 ms): check the index, the number of results asked for, and "
                    "network round trips",
                )
            )
        if r["failed"]:
            out.append(
                Reading(
                    rid,
                    "failures",
                    f"{r['failed']} of {r['target']} questions failed",
                    "failed questions count in no accuracy: see `bench-nb show-failures` and resume the run",
                )
            )
        if r["unscored"]:
            out.append(
                Reading(
                    rid,
                    "unscored",
                    f"{r['unscored']} answers could not be scored",
                    "the judge's replies did not parse: rejudge them (`bench-nb rejudge`)",
                )
            )
    return out


def table_what_to_fix(data: Any, **options: Any) -> Table:
    """``what_to_fix`` as an HTML list per run (escaped)."""
    from bench_nb.charts.labels import run_labels

    q = as_questions(data)
    labels = run_labels(q)
    readings = what_to_fix(q, **options)
    skip = baselines(q)
    parts = [STYLE, '<div class="bnb-readings"><b>What to fix</b><ul>']
    for rid, label in labels.items():
        mine = [r for r in readings if r.run_id == rid]
        if rid in skip and not mine:
            parts.append(
                f"<li><b>{esc(label)}</b>: a baseline that retrieves nothing by design: no advice.</li>"
            )
            continue
        if not mine:
            parts.append(f"<li><b>{esc(label)}</b>: no question type stands out; nothing failed.</li>")
            continue
        items = "".join(f"<li>{esc(r.finding)}: {esc(r.advice)}.</li>" for r in mine)
        parts.append(f"<li><b>{esc(label)}</b><ul>{items}</ul></li>")
    parts.append("</ul></div>")
    columns = ("run_id", "topic", "finding", "advice")
    df = pl.DataFrame([r.__dict__ for r in readings], schema=dict.fromkeys(columns, pl.Utf8))
    return Table(df, "".join(parts))
