"""Runs -> polars frames: one row per (run, question), and one row per run.

Columns of ``questions_df`` (snake_case; ``*_ms`` are phase durations in milliseconds):

- identity: ``run_id, harness`` (``bench_nb``, ``memorybench``, or the harness an imported file came from:
  ``evermemos``, ``zep``, ``mem0``), ``provider, benchmark, judge`` (``unknown`` when an imported file does not
  name it), ``answering_model, question_id, question, ground_truth, question_date, container_tag, haystack_id``
  (the cluster: the LoCoMo conversation, the BEAM chat, the LongMemEval question's own haystack, as
  ``bench_nb.taxonomy.haystack_id_of`` derives it when the run did not record it)
- types: ``question_type`` (raw, as the run wrote it), ``question_type_norm`` (see ``bench_nb.taxonomy``),
  ``true_category`` (LoCoMo's true category id, when known), ``type_source`` (``run``, ``dataset`` or
  ``memorybench-label``: where the normalised type came from)
- phases: ``<phase>_status`` and ``<phase>_ms`` for ingest, indexing, search, answer, evaluate;
  ``total_ms`` (sum of the five durations, MemoryBench's definition)
- outcome: ``status`` (``evaluated``, ``failed``, ``in_progress`` or ``pending``), ``failed_phase``,
  ``error``, ``hypothesis``, ``score``, ``label``, ``explanation``, ``unscored``, ``correct``; ``graded``
  (a fractional score from a rubric judge, BEAM: ``score`` is in [0, 1] and ``correct`` means a score of 1),
  ``published_score`` (a graded answer read as the benchmark's official code reads it; null otherwise)
- tokens: ``prompt_tokens, base_prompt_tokens, context_tokens``, ``tokenizer``; ``report_context_tokens``
  (a run that has only report.json, which has no per-question tokens: the report's own MemScore tokens,
  ``memscoreComponents.contextTokens``, on each of its rows; null elsewhere)
- usage (LLM components only, list prices): ``answer_input_tokens, answer_output_tokens, answer_cost_usd,
  judge_cost_usd, cost_usd``
- retrieval: ``search_result_count``, ``hit_at_k, precision_at_k, recall_at_k, f1_at_k, mrr, ndcg, k``,
  ``retrieval_level`` (``message`` or ``session``: what the metrics were computed against; see docs/runner.md)
- provenance: ``source`` (``checkpoint`` or ``report``), ``custom_prompt`` (graded with a provider's own
  prompt: not like the others), ``settings_fingerprint`` (what the run was run under, hashed:
  ``runformat.settings.settings_fingerprint``; equal for runs made under the same settings), ``run_path``
- answer key (with ``errata=``, else null): ``gold_error_type`` (the errata's error type for the question),
  ``gold_corrected`` (the corrected answer), ``gold_wrong`` (the gold answer itself is wrong); see
  ``frames.errata``
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, overload, runtime_checkable

import polars as pl

from bench_nb.benchmarks.errata import Errata
from bench_nb.frames.backend import Backend, as_polars, to_backend
from bench_nb.frames.errata import ERRATA_COLUMNS, ErrataSource, apply_errata, as_errata
from bench_nb.runformat.dataset import DatasetQuestion, read_memorybench_dataset
from bench_nb.runformat.format import PHASES, Question
from bench_nb.runformat.load import Run, RunSet, RunView, Sources, load_run_views
from bench_nb.runformat.question_types import question_types
from bench_nb.runformat.settings import read_settings
from bench_nb.runformat.view import QuestionView
from bench_nb.taxonomy import haystack_id_of

if TYPE_CHECKING:
    import pandas as pd


@runtime_checkable
class StoredFrames(Protocol):
    """Runs whose frames were built already: a run store opened by ``frames.store.load_runs``. The frame
    functions return its stored tables (same columns and dtypes) instead of decoding run directories."""

    def stored_frame(self, table: Literal["questions", "judgments", "runs"]) -> pl.DataFrame: ...


def _stored(runs: object, table: Literal["questions", "judgments", "runs"], **built: object) -> pl.DataFrame:
    """The stored table of a run store; a clear error for the options a store applied at export."""
    assert isinstance(runs, StoredFrames)
    given = [name for name, value in built.items() if value not in (None, False)]
    if given:
        raise ValueError(
            f"{', '.join(given)} cannot be applied to a run store's frames: they were built at export "
            "(bench-nb export --dataset ...); pass run directories to rebuild them"
        )
    return runs.stored_frame(table)


_STR, _INT, _FLT, _BOOL = pl.Utf8, pl.Int64, pl.Float64, pl.Boolean
QUESTION_SCHEMA: dict[str, Any] = {
    "run_id": _STR,
    "harness": _STR,
    "provider": _STR,
    "benchmark": _STR,
    "judge": _STR,
    "answering_model": _STR,
    "question_id": _STR,
    "question": _STR,
    "ground_truth": _STR,
    "question_date": _STR,
    "container_tag": _STR,
    "haystack_id": _STR,
    "question_type": _STR,
    "question_type_norm": _STR,
    "true_category": _INT,
    "type_source": _STR,
    **{f"{p}_status": _STR for p in PHASES},
    **{f"{p}_ms": _FLT for p in PHASES},
    "total_ms": _FLT,
    "status": _STR,
    "failed_phase": _STR,
    "error": _STR,
    "hypothesis": _STR,
    "score": _FLT,
    "label": _STR,
    "explanation": _STR,
    "unscored": _BOOL,
    "correct": _BOOL,
    "graded": _BOOL,
    "published_score": _FLT,
    "prompt_tokens": _INT,
    "base_prompt_tokens": _INT,
    "context_tokens": _INT,
    "tokenizer": _STR,
    "report_context_tokens": _INT,
    "answer_input_tokens": _INT,
    "answer_output_tokens": _INT,
    "answer_cost_usd": _FLT,
    "judge_cost_usd": _FLT,
    "cost_usd": _FLT,
    "search_result_count": _INT,
    "hit_at_k": _FLT,
    "precision_at_k": _FLT,
    "recall_at_k": _FLT,
    "f1_at_k": _FLT,
    "mrr": _FLT,
    "ndcg": _FLT,
    "k": _INT,
    "retrieval_level": _STR,
    "source": _STR,
    "custom_prompt": _BOOL,
    "settings_fingerprint": _STR,
    "run_path": _STR,
    # filled by frames.errata.apply_errata with errata=, else null
    "gold_error_type": _STR,
    "gold_corrected": _STR,
    "gold_wrong": _BOOL,
}
_RETRIEVAL = (
    ("hit_at_k", "hitAtK"),
    ("precision_at_k", "precisionAtK"),
    ("recall_at_k", "recallAtK"),
    ("f1_at_k", "f1AtK"),
    ("mrr", "mrr"),
    ("ndcg", "ndcg"),
    ("k", "k"),
)


def _dataset_index(dataset: str | Path | None) -> dict[str, DatasetQuestion] | None:
    return None if dataset is None else read_memorybench_dataset(dataset).by_id()


def questions_frame(
    runs: Sources | RunSet | Run | RunView,
    *,
    dataset: str | Path | None = None,
    strict: bool = False,
    errata: ErrataSource | None = None,
) -> pl.DataFrame:
    """``questions_df`` as a polars frame (the engine every metric uses).

    Given a loaded ``RunSet``, the frame is remembered on it (keyed by its runs, ``dataset`` and ``strict``),
    so the tables, judgments, disputes and paired tests of one report build it once. polars frames are
    immutable, so sharing one is safe.
    """
    if isinstance(runs, StoredFrames):
        frame = _stored(runs, "questions", dataset=dataset)
        return frame if errata is None else apply_errata(frame, as_errata(errata))
    key = None
    cache_on = runs if isinstance(runs, RunSet) else None
    if cache_on is not None:
        key = (
            tuple(id(r) for r in cache_on),
            None if dataset is None else str(dataset),
            strict,
            None if errata is None else id(errata) if isinstance(errata, Errata) else str(errata),
        )
        cached = cache_on.questions_frame_cache
        if cached is not None and cached[0] == key:
            return cached[1]
    runset, _ = load_run_views(runs, strict=strict)
    index = _dataset_index(dataset)
    cols: dict[str, list[Any]] = {name: [] for name in QUESTION_SCHEMA}
    for run in runset:
        if run.checkpoint is not None:
            _add_checkpoint_rows(cols, run, index)
        else:
            _add_report_rows(cols, run, index)
    for name in ERRATA_COLUMNS:  # the row builders leave them out: apply_errata fills them
        cols[name] = [None] * len(cols["run_id"])
    frame = pl.DataFrame(cols, schema=QUESTION_SCHEMA)
    if errata is not None:
        frame = apply_errata(frame, as_errata(errata))
    if cache_on is not None:
        cache_on.questions_frame_cache = (key, frame)
    return frame


def as_questions(data: Any) -> pl.DataFrame:
    """A polars questions frame from a frame (pandas or polars) or from run sources: what the metrics take."""
    frame = as_polars(data)
    return frame if frame is not None else questions_frame(data)


@overload
def questions_df(
    runs: Sources | RunSet | Run | RunView,
    *,
    dataset: str | Path | None = ...,
    strict: bool = ...,
    errata: ErrataSource | None = ...,
    backend: Literal["pandas"] = ...,
) -> pd.DataFrame: ...
@overload
def questions_df(
    runs: Sources | RunSet | Run | RunView,
    *,
    dataset: str | Path | None = ...,
    strict: bool = ...,
    errata: ErrataSource | None = ...,
    backend: Literal["polars"],
) -> pl.DataFrame: ...
def questions_df(
    runs: Sources | RunSet | Run | RunView,
    *,
    dataset: str | Path | None = None,
    strict: bool = False,
    errata: ErrataSource | None = None,
    backend: Backend = "pandas",
) -> pd.DataFrame | pl.DataFrame:
    """One row per (run, question): phase statuses, durations, tokens, verdict, types and error.

    Args:
        runs: run directories, globs, a runs folder, a compare manifest, or a ``RunSet``.
        dataset: the benchmark file the runs were made on; gives LoCoMo's true category by question id.
        strict: raise on the first problem instead of skipping what cannot be read.
        errata: the benchmark's answer-key errata (``load_errata``, a file, or ``"locomo"``): fills
            ``gold_error_type``, ``gold_corrected`` and ``gold_wrong`` (null without errata).
        backend: ``"pandas"`` (default) or ``"polars"``.
    """
    return to_backend(questions_frame(runs, dataset=dataset, strict=strict, errata=errata), backend)


def _add_checkpoint_rows(
    cols: dict[str, list[Any]], run: Run | RunView, index: dict[str, DatasetQuestion] | None
) -> None:
    ck = run.checkpoint
    assert ck is not None
    run_extra = ck.benchNb or {}
    custom_run = bool(run_extra.get("customPrompt"))
    tokenizer_run = run_extra.get("tokenizer")
    path = str(run.path)
    harness = run.harness
    fingerprint = read_settings(run).fingerprint
    # Appending to local lists is the hot loop at 100,000 questions: bind them once.
    a = {name: col.append for name, col in cols.items()}
    for qid, q in ck.questions.items():
        ph = q.phases
        extra = q.benchNb or {}
        norm, category, type_source = question_types(
            qid,
            q.questionType,
            benchmark=ck.benchmark,
            true_labels=run.has_true_labels,
            recorded=extra.get("normType"),
            index=index,
        )
        a["run_id"](ck.runId)
        a["harness"](harness)
        a["provider"](ck.provider)
        a["benchmark"](ck.benchmark)
        a["judge"](ck.judge)
        a["answering_model"](ck.answeringModel)
        a["question_id"](qid)
        a["question"](q.question)
        a["ground_truth"](q.groundTruth)
        a["question_date"](q.questionDate)
        a["container_tag"](q.containerTag)
        a["haystack_id"](
            haystack_id_of(
                qid,
                benchmark=ck.benchmark,
                recorded=extra.get("haystackId"),
                container_tag=q.containerTag,
                run_id=ck.dataSourceRunId or ck.runId,
            )
        )
        a["question_type"](q.questionType)
        a["question_type_norm"](norm)
        a["true_category"](category)
        a["type_source"](type_source)
        status, failed_phase, error = _question_status(q)
        total: float | None = None if run.imported is not None else 0.0  # not timed: null, never zero
        for name in PHASES:
            phase = getattr(ph, name)
            a[f"{name}_status"](phase.status)
            a[f"{name}_ms"](phase.durationMs)
            if total is not None:
                total += phase.durationMs or 0
        a["total_ms"](total)
        a["status"](status)
        a["failed_phase"](failed_phase)
        a["error"](error)
        ans, ev = ph.answer, ph.evaluate
        a["hypothesis"](ans.hypothesis)
        evaluated = ev.status == "completed"
        unscored = evaluated and (bool(extra.get("unscored")) or ev.score is None)
        a["score"](ev.score if evaluated else None)
        a["label"](ev.label)
        a["explanation"](ev.explanation)
        a["unscored"](unscored)
        a["correct"]((ev.score == 1) if evaluated and not unscored else None)
        graded = bool(extra.get("graded"))
        a["graded"](graded)
        published = extra.get("publishedScore") if graded and evaluated and not unscored else None
        a["published_score"](float(published) if isinstance(published, int | float) else None)
        a["prompt_tokens"](ans.promptTokens)
        a["base_prompt_tokens"](ans.basePromptTokens)
        a["context_tokens"](ans.contextTokens)
        a["tokenizer"](extra.get("tokenizer", tokenizer_run))
        a["report_context_tokens"](None)
        answer_usage, judge_cost, cost = _usage(extra.get("usage"))
        a["answer_input_tokens"](answer_usage.get("inputTokens"))
        a["answer_output_tokens"](answer_usage.get("outputTokens"))
        a["answer_cost_usd"](answer_usage.get("costUsd"))
        a["judge_cost_usd"](judge_cost)
        a["cost_usd"](cost)
        results = ph.search.results
        a["search_result_count"](None if results is None else len(results))
        rm = ev.retrievalMetrics
        for col, attr in _RETRIEVAL:
            a[col](None if rm is None else getattr(rm, attr))
        a["retrieval_level"](extra.get("retrievalLevel", run_extra.get("evidenceLevel")))
        a["source"]("checkpoint")
        a["custom_prompt"](custom_run or bool(extra.get("customPrompt")))
        a["settings_fingerprint"](fingerprint)
        a["run_path"](path)


def _usage(usage: Any) -> tuple[dict[str, Any], float | None, float | None]:
    """(answer usage, judges' cost, total cost) from a question's ``benchNb.usage`` (see docs/runner.md).

    Offline answerers and judges record no usage: their costs are null, not zero. A cost is null as soon as
    one of its calls had no price.
    """
    if not isinstance(usage, dict):
        return {}, None, None
    raw_answer = usage.get("answer")
    answer: dict[str, Any] = raw_answer if isinstance(raw_answer, dict) else {}
    judges = [j for j in (usage.get("judges") or {}).values() if isinstance(j, dict)]
    judge_costs: list[float | None] = [j.get("costUsd") for j in judges]
    judge_cost = _sum_known(judge_costs) if judges else None
    parts = ([answer.get("costUsd")] if answer else []) + judge_costs
    return answer, judge_cost, _sum_known(parts) if parts else None


def _sum_known(values: list[float | None]) -> float | None:
    """The sum, or None as soon as one value is unknown."""
    total = 0.0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def _question_status(q: Question | QuestionView) -> tuple[str, str | None, str | None]:
    ph = q.phases
    for name in PHASES:
        phase = getattr(ph, name)
        if phase.status == "failed":
            return "failed", name, phase.error or "(no error message recorded)"
    if ph.evaluate.status == "completed":
        return "evaluated", None, None
    if any(getattr(ph, name).status != "pending" for name in PHASES):
        return "in_progress", None, None
    return "pending", None, None


def _add_report_rows(
    cols: dict[str, list[Any]], run: Run | RunView, index: dict[str, DatasetQuestion] | None
) -> None:
    rep = run.report or {}
    benchmark = str(rep.get("benchmark", ""))
    fingerprint = read_settings(run).fingerprint
    components = rep.get("memscoreComponents")
    report_tokens = components.get("contextTokens") if isinstance(components, dict) else None
    report_tokens = (
        report_tokens if isinstance(report_tokens, int) and not isinstance(report_tokens, bool) else None
    )
    for i, ev in enumerate(rep.get("evaluations", [])):
        qid = str(ev.get("questionId", f"#{i}"))
        raw_type = str(ev.get("questionType", ""))
        norm, category, type_source = question_types(
            qid, raw_type, benchmark=benchmark, true_labels=run.has_true_labels, index=index
        )
        score = ev.get("score")
        row: dict[str, Any] = dict.fromkeys(c for c in QUESTION_SCHEMA if c not in ERRATA_COLUMNS)
        row.update(
            run_id=run.run_id,
            harness=run.harness,
            provider=rep.get("provider", ""),
            benchmark=benchmark,
            judge=rep.get("judge", ""),
            answering_model=rep.get("answeringModel", ""),
            question_id=qid,
            haystack_id=haystack_id_of(qid, benchmark=benchmark),
            question=ev.get("question", ""),
            ground_truth=ev.get("groundTruth", ""),
            question_type=raw_type,
            question_type_norm=norm,
            true_category=category,
            type_source=type_source,
            search_ms=ev.get("searchDurationMs"),
            answer_ms=ev.get("answerDurationMs"),
            total_ms=ev.get("totalDurationMs"),
            status="evaluated",
            hypothesis=ev.get("hypothesis"),
            score=score,
            label=ev.get("label"),
            explanation=ev.get("explanation"),
            unscored=score is None,
            correct=None if score is None else score == 1,
            graded=False,
            search_result_count=len(ev.get("searchResults") or []),
            report_context_tokens=report_tokens,
            source="report",
            custom_prompt=False,
            settings_fingerprint=fingerprint,
            run_path=str(run.path),
        )
        for p in PHASES:
            row[f"{p}_status"] = "completed"
        rm = ev.get("retrievalMetrics") or {}
        for col, attr in _RETRIEVAL:
            row[col] = rm.get(attr)
        for name, value in row.items():
            cols[name].append(value)


def runs_frame(runs: Sources | RunSet | Run | RunView, *, strict: bool = False) -> pl.DataFrame:
    """``runs_df`` as a polars frame."""
    if isinstance(runs, StoredFrames):
        return _stored(runs, "runs")
    runset, _ = load_run_views(runs, strict=strict)
    rows: list[dict[str, Any]] = []
    for run in runset:
        row: dict[str, Any] = {
            "run_id": run.run_id,
            "run_path": str(run.path),
            "source": run.source,
            "settings_fingerprint": read_settings(run).fingerprint,
        }
        if run.checkpoint is not None:
            ck = run.checkpoint
            extra = ck.benchNb or {}
            row.update(
                provider=ck.provider,
                benchmark=ck.benchmark,
                judge=ck.judge,
                answering_model=ck.answeringModel,
                status=ck.status,
                created_at=ck.createdAt,
                updated_at=ck.updatedAt,
                target_questions=len(ck.targetQuestionIds) or len(ck.questions),
                questions=len(ck.questions),
                k=extra.get("k"),
                written_by=run.harness,
                problems=len(run.problems),
            )
            for phase in PHASES:
                counts = {"completed": 0, "failed": 0, "pending": 0, "in_progress": 0}
                for q in ck.questions.values():
                    counts[getattr(q.phases, phase).status] += 1
                for st, n in counts.items():
                    row[f"{phase}_{st}"] = n
        else:
            rep = run.report or {}
            n = len(rep.get("evaluations", []))
            row.update(
                provider=rep.get("provider", ""),
                benchmark=rep.get("benchmark", ""),
                judge=rep.get("judge", ""),
                answering_model=rep.get("answeringModel", ""),
                status="completed",
                created_at=rep.get("timestamp"),
                updated_at=rep.get("timestamp"),
                target_questions=n,
                questions=n,
                k=None,
                written_by="memorybench",
                problems=len(run.problems),
            )
            for phase in PHASES:
                row[f"{phase}_completed"] = n
                row[f"{phase}_failed"] = 0
                row[f"{phase}_pending"] = 0
                row[f"{phase}_in_progress"] = 0
        rows.append(row)
    schema: dict[str, Any] = {
        "run_id": _STR,
        "run_path": _STR,
        "source": _STR,
        "provider": _STR,
        "benchmark": _STR,
        "judge": _STR,
        "answering_model": _STR,
        "status": _STR,
        "created_at": _STR,
        "updated_at": _STR,
        "target_questions": _INT,
        "questions": _INT,
        "k": _INT,
        "written_by": _STR,
        "problems": _INT,
        "settings_fingerprint": _STR,
    }
    for phase in PHASES:
        for st in ("completed", "failed", "pending", "in_progress"):
            schema[f"{phase}_{st}"] = _INT
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)


@overload
def runs_df(
    runs: Sources | RunSet | Run | RunView, *, strict: bool = ..., backend: Literal["pandas"] = ...
) -> pd.DataFrame: ...
@overload
def runs_df(
    runs: Sources | RunSet | Run | RunView, *, strict: bool = ..., backend: Literal["polars"]
) -> pl.DataFrame: ...
def runs_df(
    runs: Sources | RunSet | Run | RunView, *, strict: bool = False, backend: Backend = "pandas"
) -> pd.DataFrame | pl.DataFrame:
    """One row per run: provider, benchmark, judge, answering model, status, counts per phase status, dates."""
    return to_backend(runs_frame(runs, strict=strict), backend)
