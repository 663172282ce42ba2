"""Why each answer was wrong: one reason per wrong answer, in a fixed priority order.

A **wrong answer** is a question of a run with a verdict (``frames.verdicts``) that is not full marks:
``score < 1`` (a binary judge's incorrect, a graded judge's partial or zero). Each gets the first reason that
holds, in this order (``REASONS``; docs/statistics.md, "Why answers were wrong"):

1. ``answer_key_erratum``: the gold answer itself is wrong (the errata's ``gold_wrong``, with ``errata=``).
2. ``judge_dispute``: the judges split on the answer (one scored it correct, another incorrect: the rule of
   ``disputed_questions``, each replicate a rater of its own).
3. ``truncation``: the gold evidence was not surfaced (``hit_at_k == 0``) and the context was cut to a budget
   (the provider recorded it: full-context's ``contextCut`` on its hits): the evidence existed but was dropped.
   An imported run that records no retrieval evidence but says the context was cut (LongMemEval-V2's
   ``memory_context_was_truncated``, read into the question's ``benchNb.contextCut``) counts here too.
4. ``retrieval_miss``: the gold evidence was not surfaced (``hit_at_k == 0`` at the recorded
   ``retrieval_level``).
5. ``reader_error_confirmed``: the evidence was surfaced (``hit_at_k > 0``) and the answer is still wrong, and
   answered again from the gold evidence alone (``bench-nb reanswer RUN --from gold-evidence``,
   ``reanswer.jsonl``) it is still wrong: the answerer fails even given exactly the evidence.
6. ``reader_error``: the evidence was surfaced and the answer is still wrong (not re-answered, or re-answered
   right from the evidence alone: the rest of the context misled it).
7. ``unknown``: the run records no retrieval evidence for the question (no retrieval metrics: a provider whose
   hits cannot be traced to the haystack, ``no-memory``, a benchmark without evidence ids, a report-only run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from bench_nb.frames.backend import as_polars, with_backend
from bench_nb.frames.columns import FAILURES
from bench_nb.frames.errata import ErrataSource, apply_errata, as_errata
from bench_nb.frames.judgments import (
    judgments_frame,
    known_judges,
    replicates_as_raters,
    search_hits,
    split_verdicts,
)
from bench_nb.frames.questions import QUESTION_SCHEMA, StoredFrames, questions_frame
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.records import CONTEXT_CUT
from bench_nb.runformat.load import RunSet, load_runs
from bench_nb.runformat.reanswer import read_reanswers

REASONS: tuple[str, ...] = (
    "answer_key_erratum",
    "judge_dispute",
    "truncation",
    "retrieval_miss",
    "reader_error_confirmed",
    "reader_error",
    "unknown",
)
FAILURE_SCHEMA: dict[str, Any] = FAILURES.schema()
_SUMMARY_SCHEMA = {
    "run_id": pl.Utf8,
    "provider": pl.Utf8,
    "failure_reason": pl.Utf8,
    "n": pl.Int64,
    "share": pl.Float64,
    "wrong": pl.Int64,
    "scored": pl.Int64,
}


def _sources(
    data: Any, runs: RunSet | StoredFrames | None, errata: ErrataSource | None
) -> tuple[pl.DataFrame, Any]:
    """The questions frame (errata applied) and the runs behind it."""
    given = as_polars(data)
    if given is None:
        runset: Any = data if isinstance(data, (RunSet, StoredFrames)) else load_runs(data)
        return questions_frame(runset, errata=errata), runset
    # a pandas frame's all-null columns come back as text: the questions frame's dtypes again (a frame that has
    # them stays itself, and so keeps what was worked out from it: frames.backend.once_per_frame)
    schema = given.schema
    casts = [pl.col(c).cast(t) for c, t in QUESTION_SCHEMA.items() if c in schema and schema[c] != t]
    frame = given.with_columns(casts) if casts else given
    if errata is not None and (
        "gold_wrong" not in frame.columns or frame["gold_wrong"].null_count() == len(frame)
    ):
        frame = apply_errata(frame, as_errata(errata))
    runset = runs if runs is not None else load_runs(frame["run_path"].unique(maintain_order=True).to_list())
    return frame, runset


def _cut_contexts(runset: Any, wrong: pl.DataFrame) -> list[bool]:
    """For each row of ``wrong``: its search results say the context was cut to a budget."""
    if isinstance(runset, RunSet):
        by_path = {str(run.path): run for run in runset}
        out = []
        for run_path, qid in wrong.select("run_path", "question_id").iter_rows():
            run = by_path.get(run_path)
            first = search_hits(run, qid, 1) if run is not None else []
            raw = first[0].get("raw") if first and isinstance(first[0], dict) else None
            q = run.checkpoint.questions.get(qid) if run is not None and run.checkpoint is not None else None
            said = bool(q is not None and (q.benchNb or {}).get(CONTEXT_CUT) is True)  # an importer read it
            out.append(said or (isinstance(raw, dict) and CONTEXT_CUT in raw))
        return out
    stored = getattr(runset, "hits", None)  # a run store: its hits table keeps each result's raw JSON
    if not isinstance(stored, pl.LazyFrame):
        return [False] * len(wrong)
    cut = (
        stored.filter(pl.col("rank") == 1)
        .join(wrong.lazy().select("run_id", "question_id"), on=["run_id", "question_id"], how="semi")
        .filter(pl.col("raw").str.contains(f'"{CONTEXT_CUT}"', literal=True))
        .select("run_id", "question_id")
        .collect()
    )
    keys = set(cut.iter_rows())
    return [(r, q) in keys for r, q in wrong.select("run_id", "question_id").iter_rows()]


def _reanswer_scores(wrong: pl.DataFrame) -> list[float | None]:
    """Each row's score answered again from the gold evidence (``reanswer.jsonl`` beside its run), else None."""
    found: dict[str, dict[str, Any]] = {}
    out: list[float | None] = []
    for run_path, qid in wrong.select("run_path", "question_id").iter_rows():
        if run_path not in found:
            found[run_path] = read_reanswers(Path(run_path))[0] if run_path else {}
        r = found[run_path].get(qid)
        out.append(None if r is None else r.score)
    return out


def failure_reasons_frame(
    data: Any,
    *,
    errata: ErrataSource | None = None,
    judges: list[str] | None = None,
    runs: RunSet | StoredFrames | None = None,
) -> pl.DataFrame:
    """One row per wrong answer (a verdict below full marks) with ``failure_reason``: the first of ``REASONS``
    that holds (answer-key erratum, judge dispute, truncation, retrieval miss, reader error confirmed by a
    re-answer from the gold evidence, reader error, unknown). Columns: docs/frames.md (``failure_reasons``).

    Args:
        data: run sources (anything ``load_runs`` takes), a loaded ``RunSet`` or run store, or a
            ``questions_df`` frame (its runs are read from ``run_path`` for verdicts, hits and re-answers).
        errata: the benchmark's answer-key errata (``load_errata``, a file, or ``"locomo"``): a wrong gold
            answer is the reason before any other. Without it no answer is put down to the key.
        judges: only these judges' verdicts count for a dispute (default all).
        runs: the loaded runs behind a frame given as ``data``, so they are not read again.
    """
    questions, runset = _sources(data, runs, errata)
    wrong = with_verdicts(questions).filter(pl.col("score").is_not_null() & (pl.col("score") < 1))
    if wrong.is_empty():
        return FAILURES.empty()
    verdicts = judgments_frame(runset)
    judges = known_judges(verdicts, judges)
    if judges is not None:
        verdicts = verdicts.filter(pl.col("judge").is_in(judges))
    disputed = split_verdicts(replicates_as_raters(verdicts)).select(
        "run_id", "question_id", judge_disputed=pl.lit(True)
    )
    wrong = wrong.join(
        disputed, on=["run_id", "question_id"], how="left", maintain_order="left"
    ).with_columns(
        judge_disputed=pl.col("judge_disputed").fill_null(False),
        context_cut=pl.Series(_cut_contexts(runset, wrong), dtype=pl.Boolean),
        reanswer_score=pl.Series(_reanswer_scores(wrong), dtype=pl.Float64),
    )
    hit = pl.col("hit_at_k")
    reason = (
        pl.when(pl.col("gold_wrong").fill_null(False))
        .then(pl.lit("answer_key_erratum"))
        .when(pl.col("judge_disputed"))
        .then(pl.lit("judge_dispute"))
        .when(((hit == 0) | hit.is_null()) & pl.col("context_cut"))
        .then(pl.lit("truncation"))
        .when(hit == 0)
        .then(pl.lit("retrieval_miss"))
        .when((hit > 0) & (pl.col("reanswer_score") < 1))
        .then(pl.lit("reader_error_confirmed"))
        .when(hit > 0)
        .then(pl.lit("reader_error"))
        .otherwise(pl.lit("unknown"))
    )
    return wrong.with_columns(failure_reason=reason).select(
        [pl.col(c).cast(t) for c, t in FAILURE_SCHEMA.items()]
    )


failure_reasons = with_backend(failure_reasons_frame, "failure_reasons")


def failure_summary_frame(
    data: Any,
    *,
    errata: ErrataSource | None = None,
    judges: list[str] | None = None,
    runs: RunSet | StoredFrames | None = None,
) -> pl.DataFrame:
    """Per run and reason: how many wrong answers (``n``) and their share of the run's wrong answers
    (``share`` = n / ``wrong``), beside the run's scored answers (``scored``); reasons in ``REASONS`` order.

    Args:
        data: what ``failure_reasons`` takes, or its frame (then ``scored`` is null: the frame has only the
            wrong answers).
        errata, judges, runs: as ``failure_reasons``.
    """
    return summary_and_reasons(data, errata=errata, judges=judges, runs=runs)[0]


def summary_and_reasons(
    data: Any,
    *,
    errata: ErrataSource | None = None,
    judges: list[str] | None = None,
    runs: RunSet | StoredFrames | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``failure_summary_frame``'s frame and the ``failure_reasons`` frame it counted (``table_failures``
    names an example question of each row from it: the reasons worked out once, and those counted)."""
    given = as_polars(data)
    if given is not None and "failure_reason" in given.columns:
        reasons, scored = given, None
    else:
        questions, runset = _sources(data, runs, errata)
        reasons = failure_reasons_frame(questions, runs=runset, judges=judges)
        scored = (
            with_verdicts(questions)
            .filter(pl.col("score").is_not_null())
            .group_by("run_id")
            .agg(scored=pl.len().cast(pl.Int64))
        )
    if reasons.is_empty():
        return pl.DataFrame(schema=_SUMMARY_SCHEMA), reasons
    counts = (
        reasons.group_by("run_id", "provider", "failure_reason", maintain_order=True)
        .agg(n=pl.len().cast(pl.Int64))
        .with_columns(wrong=pl.col("n").sum().over("run_id").cast(pl.Int64))
        .with_columns(share=pl.col("n") / pl.col("wrong"))
    )
    if scored is None:
        counts = counts.with_columns(scored=pl.lit(None, pl.Int64))
    else:
        counts = counts.join(scored, on="run_id", how="left")
    runs_order = reasons["run_id"].unique(maintain_order=True).to_list()
    summary = counts.sort(
        pl.col("run_id").replace_strict(runs_order, list(range(len(runs_order))), return_dtype=pl.Int64),
        pl.col("failure_reason").cast(pl.Enum(REASONS)),
    ).select([pl.col(c).cast(t) for c, t in _SUMMARY_SCHEMA.items()])
    return summary, reasons


failure_summary = with_backend(failure_summary_frame, "failure_summary")
