"""Per-run tables: the MemScore leaderboard, success rate, accuracy per type, latency, tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from bench_nb.frames.backend import once_per_frame
from bench_nb.metrics import as_questions
from bench_nb.metrics.accuracy import accuracy_across_benchmarks, accuracy_by_type_frame, success_rate_frame
from bench_nb.metrics.latency import latency_stats_frame
from bench_nb.metrics.memscore import memscore_frame
from bench_nb.metrics.retrieval import retrieval_summary_frame
from bench_nb.metrics.tokens import token_summary_frame
from bench_nb.tables.bands import accuracy_band, latency_band
from bench_nb.tables.html import Cell, Table, band_badge, interval, labels_of, num, pct, render, run_cell

CUSTOM_PROMPT = "provider's own judge prompt"


def _most_results(q: pl.DataFrame) -> pl.DataFrame:
    """Per run the most results its search returned for a question, null when no count is recorded (once per
    frame: a report's tables ask four times)."""
    return once_per_frame(
        "most results", q, lambda q: q.group_by("run_id").agg(most=pl.col("search_result_count").max())
    )


def retrieved_nothing(q: pl.DataFrame) -> set[str]:
    """Runs whose search returned nothing for any question (the no-memory baseline): their search time
    says nothing about a memory's speed, so it gets no band. A count that is not recorded (null: an imported
    run) is not a zero: a run that records none is ``retrieval_not_recorded``, never here."""
    if "search_result_count" not in q.columns:
        return set()
    return set(_most_results(q).filter(pl.col("most") == 0)["run_id"].to_list())


def retrieval_not_recorded(q: pl.DataFrame) -> set[str]:
    """Runs that record no search result count for any question (other harnesses' result files)."""
    if "search_result_count" not in q.columns:
        return set(q["run_id"].unique().to_list())
    return set(_most_results(q).filter(pl.col("most").is_null())["run_id"].to_list())


def _provider_runs(q: pl.DataFrame, provider: str) -> list[str]:
    return q.filter(pl.col("provider") == provider)["run_id"].unique(maintain_order=True).to_list()


def answerer_bound(q: pl.DataFrame, ms: pl.DataFrame) -> tuple[str | None, str | None]:
    """(note, warning) on what bounds the accuracy when the runs were answered offline (``extractive``).

    The note says the answerer bounds every accuracy and reads the runs against the full-context run (the
    same answerer given the whole conversation: its ceiling) and the no-memory run (nothing retrieved: the
    floor), and, when abstention questions are there (LoCoMo's adversarial), each run's accuracy without them:
    an "I don't know" takes full credit on those, and no-memory always says it. The warning, when no-memory
    has the best accuracy: it is not the best memory system, and why. (None, None) for LLM-answered runs.
    """
    from bench_nb.models.answerers import calls_no_model

    if "answering_model" not in q.columns or "provider" not in q.columns:
        return None, None
    models = set(q["answering_model"].drop_nulls().unique().to_list())
    if not models or not all(map(calls_no_model, models)):
        return None, None
    labels = labels_of(q)
    acc = {r["run_id"]: r["accuracy"] for r in ms.iter_rows(named=True)}

    def named(provider: str) -> list[str]:
        return [f"{labels.get(r, r)} {pct(acc.get(r))}" for r in _provider_runs(q, provider) if r in acc]

    parts = [
        "What bounds these accuracies: the answerer. They were answered offline by the extractive answerer "
        "(one retrieved sentence as the answer, no model), which bounds them as much as the memory does"
    ]
    bounds = []
    if ceiling := named("full-context"):
        bounds.append(
            f"the full-context ceiling ({', '.join(ceiling)}: the whole conversation given; a model answerer's "
            "upper reference, while the extractive one picks a single sentence from it, so a run can pass it)"
        )
    if floor := named("no-memory"):
        bounds.append(f"the no-memory floor ({', '.join(floor)}: nothing retrieved)")
    parts[0] += f"; read each run against {' and '.join(bounds)}." if bounds else "."
    abstain = q.filter(pl.col("question_type_norm") == "abstention")
    if len(abstain):
        from bench_nb.metrics.accuracy import accuracy_frame

        rest = accuracy_frame(q.filter(pl.col("question_type_norm") != "abstention"))
        rest_acc = {r["run_id"]: r["accuracy"] for r in rest.iter_rows(named=True)}
        without = ", ".join(  # in the leaderboard's order
            f"{labels.get(r, r)} {pct(rest_acc.get(r))}" for r in ms["run_id"].to_list() if r in rest_acc
        )
        per_run = abstain["question_id"].n_unique()
        parts.append(
            f"{per_run} abstention question(s) (LoCoMo's adversarial category, LongMemEval's _abs) give full "
            "credit for "
            f'"I don\'t know.", which a run that retrieves nothing always answers; without them: {without} '
            "(bench-nb run --exclude-types adversarial asks only the others, as the literature scores LoCoMo)."
        )
    parts.append("For a comparison of the memories themselves, answer with a model (-m gpt-4o-mini).")
    warning = None
    ranked = ms.filter(pl.col("accuracy").is_not_null()).sort("accuracy", descending=True)
    top = ranked["run_id"].to_list()[:1]
    if top and top[0] in _provider_runs(q, "no-memory") and len(ranked) > 1:
        warning = (
            f"{labels.get(top[0], top[0])}, which retrieves nothing, has the best accuracy: that makes it the "
            "offline answerer's best reading, not the best memory system (see the note below the table)."
        )
    return " ".join(parts), warning


def _search_cell(text: str, ms: float | None, nothing: bool, unrecorded: bool = False) -> Cell:
    """A search-latency cell: its band, "nothing retrieved" for a run whose search returned nothing, or "not
    recorded" for a run that records neither its search time nor what it returned."""
    if unrecorded and ms is None:
        return Cell(
            text, "num", title="this run's file records no search", badges=(("not recorded", "bnb-flag"),)
        )
    if nothing:
        return Cell(
            text,
            "num",
            title="this run's search returned nothing",
            badges=(("nothing retrieved", "bnb-flag"),),
        )
    return Cell(text, "num", badges=band_badge(latency_band(ms)))


def table_memscore(data: Any, *, warnings: Sequence[str] = ()) -> Table:
    """The MemScore leaderboard, best accuracy first: accuracy with its 95% interval and band, mean search
    latency with its band, context tokens, evaluated / target and failures.

    A run graded with a provider's own judge prompt is flagged; ``warnings`` (e.g. from
    ``table_settings(runs).warnings``) are shown above the table.
    """
    q = as_questions(data)
    labels = labels_of(q)
    nothing, unrecorded = retrieved_nothing(q), retrieval_not_recorded(q)
    ms = memscore_frame(q).sort("accuracy", descending=True, nulls_last=True)
    rows = []
    for r in ms.iter_rows(named=True):
        badges: tuple[tuple[str, str], ...] = ((CUSTOM_PROMPT, "bnb-flag"),) if r["custom_prompt"] else ()
        rows.append(
            [
                run_cell(r["run_id"], labels, badges=badges),
                Cell(r["memscore"], "num"),
                Cell(
                    f"{pct(r['accuracy'])} {interval(r['accuracy_ci_low'], r['accuracy_ci_high'])}",
                    "num",
                    badges=(("mean score", "bnb-flag"),)
                    if r["quality_measure"] == "mean score"
                    else band_badge(accuracy_band(r["accuracy"])),
                ),
                _search_cell(
                    num(r["latency_ms"]), r["latency_ms"], r["run_id"] in nothing, r["run_id"] in unrecorded
                ),
                Cell(num(r["context_tokens"]), "num"),
                Cell(f"{r['evaluated']} / {r['target']}", "num"),
                Cell(str(r["failed"]), "num"),
                Cell(str(r["unscored"]), "num"),
            ]
        )
    notes = [
        "Accuracy: correct / scored evaluated questions, 95% Wilson interval in brackets. "
        "Bands: accuracy ≥80% excellent, 70–80 good, 60–70 adequate, <60 investigate; "
        "search <100 ms excellent, 100–300 good, 300–500 adequate, >500 slow.",
        "Search ms and context tokens are MemoryBench's MemScore parts (mean search latency, mean context "
        "tokens per question; n/a when some question has no token counts).",
    ]
    graded = [
        labels.get(r, r) for r in ms.filter(pl.col("quality_measure") == "mean score")["run_id"].to_list()
    ]
    if graded:
        notes.append(
            "Flagged 'mean score' (graded runs: BEAM): the quality is the mean score of the scored questions, "
            "not a share of correct answers, with a 95% normal-approximation interval: "
            + ", ".join(graded)
            + "."
        )
    bound, bound_warning = answerer_bound(q, ms)
    if bound:
        notes.append(bound)
    if bound_warning:
        warnings = [*warnings, bound_warning]
    custom = [labels.get(r, r) for r in ms.filter(pl.col("custom_prompt"))["run_id"].to_list()]
    if custom:
        notes.append(
            f"Flagged '{CUSTOM_PROMPT}': graded with the provider's own judge prompt, not the shared one."
        )
        warnings = [
            *warnings,
            f"Graded with a provider's own judge prompt, not comparable: {', '.join(custom)}.",
        ]
    warn = tuple(warnings)
    html = render(
        [
            "run",
            "MemScore",
            "accuracy [95% CI]" if not graded else "accuracy or mean score [95% CI]",
            "search ms",
            "context tokens",
            "evaluated / target",
            "failed",
            "unscored",
        ],
        rows,
        caption="MemScore leaderboard",
        notes=notes,
        warnings=warn,
    )
    return Table(ms, html, warn)


def table_success(data: Any) -> Table:
    """Success rate per run (evaluated / target) with failed, in-progress, pending and unscored counts."""
    q = as_questions(data)
    labels = labels_of(q)
    sr = success_rate_frame(q)
    rows = [
        [
            run_cell(r["run_id"], labels),
            Cell(f"{pct(r['success_rate'])} {interval(r['ci_low'], r['ci_high'])}", "num"),
            *(
                Cell(str(r[c]), "num")
                for c in ("target", "evaluated", "failed", "in_progress", "pending", "unscored")
            ),
        ]
        for r in sr.iter_rows(named=True)
    ]
    html = render(
        [
            "run",
            "success rate [95% CI]",
            "target",
            "evaluated",
            "failed",
            "in progress",
            "pending",
            "unscored",
        ],
        rows,
        caption="Success rate",
        notes=[
            "Success rate = evaluated / target questions. MemoryBench leaves failed and pending questions "
            "out of every number; here they are counted and shown."
        ],
    )
    return Table(sr, html)


def table_across_benchmarks(data: Any) -> Table:
    """Per provider, task-averaged and question-averaged accuracy over the benchmarks its runs span, with 95%
    intervals (``metrics.accuracy.accuracy_across_benchmarks``; docs/statistics.md, "Across benchmarks")."""
    frame = accuracy_across_benchmarks(as_questions(data))
    rows = [
        [
            Cell(str(r["provider"])),
            Cell(str(r["benchmarks"]), "num"),
            Cell(str(r["questions"]), "num"),
            Cell(f"{pct(r['task_averaged'])} {interval(r['task_ci_low'], r['task_ci_high'])}", "num"),
            Cell(
                f"{pct(r['question_averaged'])} {interval(r['question_ci_low'], r['question_ci_high'])}",
                "num",
            ),
        ]
        for r in frame.iter_rows(named=True)
    ]
    html = render(
        ["provider", "benchmarks", "questions", "task-averaged [95% CI]", "question-averaged [95% CI]"],
        rows,
        caption="Accuracy across benchmarks",
        notes=[
            "Task-averaged: the mean of the benchmarks' accuracies (each benchmark once). Question-averaged: all "
            "scored questions pooled (a larger benchmark counts more). Intervals from each benchmark's "
            "haystack-clustered variance (docs/statistics.md)."
        ],
    )
    return Table(frame, html)


def table_accuracy_by_type(data: Any, *, raw: bool = False) -> Table:
    """Accuracy per question type (rows) and run (columns), each with its 95% interval, n and band."""
    q = as_questions(data)
    labels = labels_of(q)
    acc = accuracy_by_type_frame(q, raw=raw)
    type_col = "question_type" if raw else "question_type_norm"
    types = acc[type_col].unique(maintain_order=True).to_list()
    runs = list(labels)
    by_key = {(r["run_id"], r[type_col]): r for r in acc.iter_rows(named=True)}
    rows = []
    for t in types:
        row: list[object] = [t if t is not None else "(none)"]
        for rid in runs:
            r = by_key.get((rid, t))
            if r is None or not r["scored"]:
                row.append(Cell("—", "num"))
                continue
            graded = r["measure"] == "mean score"
            row.append(
                Cell(
                    # the point to the interval's decimal: "0% [0.1–2.0]" read as a point outside its interval
                    f"{pct(r['accuracy'])} {interval(r['ci_low'], r['ci_high'])} n={r['scored']}",
                    "num",
                    badges=() if graded else band_badge(accuracy_band(r["accuracy"])),
                )
            )
        rows.append(row)
    measures = set(acc["measure"].to_list())
    caption, notes = _measure_caption(measures, "per question type")
    html = render(["question type", *(labels[r] for r in runs)], rows, caption=caption, notes=notes)
    return Table(acc, html)


def _measure_caption(measures: set[str], what: str) -> tuple[str, list[str]]:
    """The caption and notes of a table of accuracies, mean scores (graded runs: BEAM) or both."""
    wilson = "Each cell: accuracy [95% Wilson interval] and the number of scored questions."
    mean = (
        "Graded runs (BEAM): the mean score of the scored questions (each in [0, 1], a rubric's mean), with a "
        "95% normal-approximation interval; no accuracy band. BEAM's own aggregation (per chat, then per "
        "ability) is in the BEAM section."
    )
    if measures == {"mean score"}:
        return f"Mean score {what}", [mean]
    if "mean score" in measures:
        return f"Accuracy or mean score {what}", [wilson, mean]
    return f"Accuracy {what}", [wilson]


def table_latency(
    data: Any, *, phases: Sequence[str] = ("ingest", "indexing", "search", "answer", "evaluate", "total")
) -> Table:
    """Latency p50 / p95 (interpolated) per phase (rows) and run (columns), in ms; search read in bands."""
    q = as_questions(data)
    labels = labels_of(q)
    nothing = retrieved_nothing(q)
    lat = latency_stats_frame(q)
    by_key = {(r["run_id"], r["phase"]): r for r in lat.iter_rows(named=True)}
    rows = []
    for phase in phases:
        row: list[object] = [phase]
        for rid in labels:
            r = by_key.get((rid, phase))
            if r is None or not r["count"]:
                row.append(Cell("—", "num"))
                continue
            text = f"{num(r['p50_linear'])} / {num(r['p95_linear'])}"
            if phase == "search":
                row.append(_search_cell(text, r["p50_linear"], rid in nothing))
            else:
                row.append(Cell(text, "num"))
        rows.append(row)
    html = render(
        ["phase", *labels.values()],
        rows,
        caption="Latency p50 / p95 per phase (ms)",
        notes=[
            "Linearly interpolated percentiles over evaluated questions (MemoryBench's nearest-rank "
            "median_memorybench / p95_memorybench are in latency_stats). Search band read on p50."
        ],
    )
    return Table(lat, html)


# The cost columns of the tokens table: (frame column, header); the per-part ones only when a run reports its
# memory side's model calls.
_COST = (("cost_usd", "cost (USD)"),)
_COST_PARTS = (
    ("answer_cost_usd", "answer (USD)"),
    ("judge_cost_usd", "judges (USD)"),
    ("memory_cost_usd", "memory (USD)"),
    ("total_cost_usd", "total (USD)"),
)


def _cost_columns(q: pl.DataFrame) -> tuple[tuple[str, str], ...]:
    """``_COST_PARTS`` when a run's provider reports model calls of its own (``memory_calls`` above 0), else
    the one answer-and-judges column when the frame has it, else none."""
    if "memory_calls" in q.columns and (q["memory_calls"].fill_null(0) > 0).any():
        return _COST_PARTS
    return _COST if "cost_usd" in q.columns else ()


def table_tokens(data: Any) -> Table:
    """Tokens per run: mean prompt and context tokens per question, p50/p95 context, totals, tokenizer;
    cost when the runs record it (a ``cost_usd`` column), split into answer, judges, memory side and their
    total when a run's provider reports its own model calls (``memory_*`` columns, docs/runner.md)."""
    q = as_questions(data)
    labels = labels_of(q)
    tok = token_summary_frame(q)
    costs = _cost_columns(q)
    if costs:
        sums = q.group_by("run_id").agg(
            pl.when(pl.col(c).is_not_null().any()).then(pl.col(c).sum()).alias(c) for c, _ in costs
        )
        tok = tok.join(sums, on="run_id", how="left", maintain_order="left")
    rows = []
    for r in tok.iter_rows(named=True):
        row: list[object] = [
            run_cell(r["run_id"], labels),
            Cell(f"{r['with_tokens']} / {r['evaluated']}", "num"),
            Cell(num(r["mean_prompt_tokens"]), "num"),
            Cell(num(r["mean_context_tokens"]), "num"),
            Cell(f"{num(r['p50_context_tokens'])} / {num(r['p95_context_tokens'])}", "num"),
            Cell(num(r["total_prompt_tokens"]), "num"),
            r["tokenizer"] or "n/a",
        ]
        row.extend(Cell(f"${r[c]:,.4f}" if r[c] is not None else "n/a", "num") for c, _ in costs)
        rows.append(row)
    headers = [
        "run",
        "with tokens / evaluated",
        "mean prompt",
        "mean context",
        "context p50 / p95",
        "total prompt",
        "tokenizer",
    ]
    notes = [
        "Answer-prompt tokens counted client-side, as MemoryBench does; context = prompt − base prompt."
        + ("" if costs else " These runs record no cost.")
    ]
    if costs == _COST_PARTS:
        notes.append(
            "Memory: the model calls the memory system made itself (ingestion and search), list prices; n/a "
            "when its provider does not report them (cloud APIs), and then the total is n/a too. A part that "
            "calls no model costs $0; n/a means not known (an unpriced call, or no record). Context tokens are "
            "the answer prompt's, whatever the memory system spent."
        )
    html = render(
        headers + [h for _, h in costs],
        rows,
        caption="Tokens" + (" and cost" if costs else ""),
        notes=notes,
    )
    return Table(tok, html)


_LEVEL_TEXT = {
    "message": "message",
    "session": "session",
    "mixed": "message and session",
    "unrecorded": "not recorded",
}


def _k(lo: int | None, hi: int | None) -> str:
    if lo is None or hi is None:
        return "n/a"
    return str(lo) if lo == hi else f"{lo}–{hi}"


def table_retrieval(data: Any) -> Table:
    """Retrieval metrics per run, each run's level beside them; warnings when the runs' levels differ or a
    run records no level (MemoryBench computes recall, F1 and nDCG without ground truth)."""
    q = as_questions(data)
    labels = labels_of(q)
    ret = retrieval_summary_frame(q)
    rows = []
    by_level: dict[str, list[str]] = {}  # runs with metrics, by level
    none: list[str] = []  # runs without
    for r in ret.iter_rows(named=True):
        label = labels.get(r["run_id"], r["run_id"])
        has = r["with_metrics"] > 0
        if has:
            by_level.setdefault(r["level"], []).append(label)
        else:
            none.append(label)
        rows.append(
            [
                run_cell(r["run_id"], labels),
                _LEVEL_TEXT.get(r["level"], r["level"]) if has else "none",
                Cell(f"{r['with_metrics']} / {r['evaluated']}", "num"),
                *(
                    Cell(pct(r[f]) if has else "n/a", "num")
                    for f in ("hit_at_k", "recall_at_k", "precision_at_k")
                ),
                *(Cell(num(r[f], 3) if has else "n/a", "num") for f in ("mrr", "ndcg")),
                Cell(_k(r["k_min"], r["k_max"]), "num"),
            ]
        )
    warnings = []
    scored = {lv: runs for lv, runs in by_level.items() if lv != "unrecorded"}
    if len(scored) > 1:
        parts = "; ".join(f"{_LEVEL_TEXT[lv]}: {', '.join(runs)}" for lv, runs in scored.items())
        warnings.append(
            f"These runs' retrieval metrics were computed at different levels ({parts}). A session holds many "
            "messages, so session-level figures are higher by construction: compare runs of one level."
        )
    if "unrecorded" in by_level:
        warnings.append(
            "No retrieval level recorded (a run made by MemoryBench, or shared as report.json only). MemoryBench "
            "computes recall, F1 and nDCG without ground truth, so they repeat hit and precision: "
            f"{', '.join(by_level['unrecorded'])}."
        )
    notes = [
        "Means over the evaluated questions that have retrieval metrics (MemoryBench's rule), against the "
        "question's evidence at the level shown; full-context returns the haystack in order: read its recall, "
        "not its MRR or nDCG. Definitions: docs/runner.md."
    ]
    if none:
        notes.append(
            "No retrieval metrics (hits that trace to no message or session, or no evidence): "
            + ", ".join(none)
            + "."
        )
    html = render(
        ["run", "level", "with metrics / evaluated", "hit@k", "recall@k", "precision@k", "MRR", "nDCG", "k"],
        rows,
        caption="Retrieval",
        notes=notes,
        warnings=warnings,
    )
    return Table(ret, html, tuple(warnings))
