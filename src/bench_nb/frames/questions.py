"""Runs -> polars frames: one row per (run, question), and one row per run.

Their columns (name, dtype, where each comes from, what it means) are declared in ``frames.columns``
(``QUESTIONS``, ``RUNS``), which builds ``QUESTION_SCHEMA`` and ``RUN_SCHEMA`` and generates docs/frames.md's
lists: a new column goes there first, then into the builder here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, Union, cast, runtime_checkable

import polars as pl

from bench_nb.benchmarks.errata import Errata
from bench_nb.benchmarks.registry import haystack_id_of
from bench_nb.errors import Problem
from bench_nb.frames.backend import as_polars, with_backend
from bench_nb.frames.columns import QUESTIONS, RETRIEVAL, RUN_COUNTS, RUNS
from bench_nb.frames.errata import ERRATA_COLUMNS, ErrataSource, apply_errata
from bench_nb.frames.usage import usage_columns
from bench_nb.gc_pause import gc_paused
from bench_nb.redaction import redact
from bench_nb.runformat.dataset import DatasetQuestion, read_memorybench_dataset
from bench_nb.runformat.format import PHASES, Question
from bench_nb.runformat.load import Run, RunSet, Sources, load_run_views
from bench_nb.runformat.question_types import question_type_columns, question_types
from bench_nb.runformat.spec import read_spec
from bench_nb.runformat.view import QuestionView

if TYPE_CHECKING:
    import pandas as pd


@runtime_checkable
class StoredFrames(Protocol):
    """Runs whose frames were built already: a run store opened by ``frames.store.load_runs``. The frame
    functions return its stored tables (same columns and dtypes) instead of decoding run directories, and its
    search results' texts and harness records as kept at export."""

    def stored_frame(self, table: Literal["questions", "judgments", "runs"]) -> pl.DataFrame:
        """The stored ``table`` (questions, judgments or runs) as a polars frame."""
        ...

    def stored_hit_texts(self, keys: pl.DataFrame, n_hits: int | None = None) -> list[list[str]]:
        """The texts of the top ``n_hits`` results (all, for None) of each row of ``keys`` (run, question)."""
        ...

    def harness_records(self) -> list[dict[str, Any]]:
        """One harness record per run (``frames.harnesses.harness_record``)."""
        ...


def stored(
    runs: object,
    table: Literal["questions", "judgments", "runs"],
    problems: list[Problem] | None = None,
    **built: object,
) -> pl.DataFrame:
    """The stored table of a run store (its problems added to ``problems``); a clear error for the options a
    store applied at export."""
    assert isinstance(runs, StoredFrames)
    if problems is not None:
        problems.extend(getattr(runs, "problems", ()))
    given = [name for name, value in built.items() if value not in (None, False)]
    if given:
        raise ValueError(
            f"{', '.join(given)} cannot be applied to a run store's frames: they were built at export "
            "(bench-nb export --dataset ...); pass run directories to rebuild them"
        )
    return runs.stored_frame(table)


_STR, _FLT, _BOOL = pl.Utf8, pl.Float64, pl.Boolean
QUESTION_SCHEMA: dict[str, Any] = QUESTIONS.schema()
RUN_SCHEMA: dict[str, Any] = RUNS.schema()


def _dataset_index(dataset: str | Path | None) -> dict[str, DatasetQuestion] | None:
    return None if dataset is None else read_memorybench_dataset(dataset).by_id()


#: What a function that reads runs takes: run directories, files or glob patterns (one or several), a loaded
#: ``RunSet`` or ``Run``, or a run store's runs (``load_runs(STORE, runs=[...])``).
RunsLike: TypeAlias = Sources | RunSet | Run | StoredFrames
#: What a metric takes: runs as ``RunsLike``, or a questions frame (``questions_df``, pandas or polars).
QuestionsLike: TypeAlias = Union[RunsLike, pl.DataFrame, "pd.DataFrame"]


def as_columns(by: str | Sequence[str], frame: pl.DataFrame | None = None) -> list[str]:
    """``by`` as a list of column names: a string is one column (``by="provider"``), never its letters.

    Given the ``frame`` they group, a name that is none of its columns raises ``ValueError`` naming it, the
    nearest column and the frame's columns (not polars' error from deep inside the table's code)."""
    keys = [by] if isinstance(by, str) else list(by)
    if frame is not None:
        for key in keys:
            if key not in frame.columns:
                from bench_nb.registry import did_you_mean

                raise ValueError(
                    f"by={by!r}: the questions frame has no column {key!r}{did_you_mean(key, frame.columns)}; "
                    f"its columns: {', '.join(frame.columns)}"
                )
    return keys


def questions_frame(
    runs: RunsLike,
    *,
    dataset: str | Path | None = None,
    strict: bool = False,
    errata: ErrataSource | None = None,
    problems: list[Problem] | None = None,
) -> pl.DataFrame:
    """One row per (run, question): phase statuses, durations, tokens, verdict, types and error.

    Args:
        runs: run directories, globs, a runs folder, a compare manifest, or a ``RunSet``.
        dataset: the benchmark file the runs were made on; gives LoCoMo's true category by question id.
        strict: raise ``RunFormatError`` (naming the file, question and field) on the first problem. By
            default what cannot be read is skipped, and a ``RunFormatWarning`` lists each problem.
        errata: the benchmark's answer-key errata (``load_errata``, a file, or ``"locomo"``): fills
            ``gold_error_type``, ``gold_corrected`` and ``gold_wrong`` (null without errata).
        problems: a list that receives the problems of the runs the frame was built from (``Problem``:
            file, field, question id, message), beside the frame: ``questions_df(runs, problems=found)``.

    Given a loaded ``RunSet``, the frame is remembered on it (keyed by its runs, ``dataset`` and ``strict``),
    so the tables, judgments, disputes and paired tests of one report build it once. polars frames are
    immutable, so sharing one is safe.

    Columns (about 70, in groups: identity, types, phases, outcome, tokens, usage, retrieval, provenance,
    answer key), each with its dtype, source and meaning: docs/frames.md (``questions_df``), or in a notebook
    ``{c.name: c.description for c in bench_nb.frames.columns.QUESTIONS.columns}``.
    """
    if isinstance(runs, StoredFrames):
        frame = stored(runs, "questions", problems, dataset=dataset)
        return frame if errata is None else apply_errata(frame, errata)
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
            if problems is not None:
                problems.extend(cache_on.all_problems)
            return cached[1]
    index = _dataset_index(dataset)
    # Paused collector, from decoding to the frame: the decoded questions are millions of new objects that
    # each collection would walk again while the columns are built. They are freed (by reference counting)
    # before it resumes, unless the caller holds them (a loaded RunSet).
    with gc_paused():
        runset, found = load_run_views(runs, strict=strict)  # warns (RunFormatWarning) of what it skipped
        if problems is not None:
            problems.extend([*found, *(p for run in runset for p in run.problems)])
        parts = [
            _checkpoint_frame(run, index) if run.view is not None else _report_frame(run, index)
            for run in runset
        ]
        del runset
    frame = pl.concat(parts) if parts else QUESTIONS.empty()
    if errata is not None:
        frame = apply_errata(frame, errata)
    if cache_on is not None:
        cache_on.questions_frame_cache = (key, frame)
    return frame


questions_df = with_backend(questions_frame, "questions_df")


def as_questions(data: QuestionsLike) -> pl.DataFrame:
    """A polars questions frame from a frame (pandas or polars) or from run sources: what the metrics take.
    A ``runs_df`` frame (one row per run) raises ``ValueError`` saying so: its ``status`` column is the run's,
    and the tables read it as a question's (``success_rate`` gave each run 1 question, none evaluated)."""
    frame = as_polars(data)
    if frame is None:
        return questions_frame(cast(RunsLike, data))  # not a frame: runs
    if "question_id" not in frame.columns and "target_questions" in frame.columns:
        raise ValueError(
            "a runs frame (runs_df: one row per run) where a questions frame (one row per question) is wanted: "
            "pass the runs themselves (their paths, a RunSet) or questions_df(runs)"
        )
    return frame


_NO_ERROR = "(no error message recorded)"


def _checkpoint_frame(run: Run, index: dict[str, DatasetQuestion] | None) -> pl.DataFrame:
    """One run's rows, built column by column (a comprehension per column over the run's questions; what
    every row shares is a literal; statuses are derived in polars) rather than row by row: at 100,000
    questions the per-row appends were most of the frame's cost."""
    ck = run.view
    assert ck is not None
    run_extra = ck.benchNb or {}
    qids = list(ck.questions)
    qs: list[Question | QuestionView] = list(ck.questions.values())
    n = len(qs)
    ph = [q.phases for q in qs]
    answers = [p.answer for p in ph]
    evaluations = [p.evaluate for p in ph]
    # Only bench_nb's runs write benchNb per question: MemoryBench's runs skip every lookup below.
    extras: list[dict[str, Any]] | None = None
    if any(q.benchNb for q in qs):
        extras = [q.benchNb or {} for q in qs]

    def extra(key: str) -> list[Any]:
        return [None] * n if extras is None else [e.get(key) for e in extras]

    norms, categories, sources = question_type_columns(
        qids,
        [q.questionType for q in qs],
        extra("normType"),
        benchmark=ck.benchmark,
        true_labels=run.has_true_labels,
        index=index,
    )
    haystack_run = ck.dataSourceRunId or ck.runId
    cols: dict[str, list[Any]] = {
        "question_id": qids,
        "question": [q.question for q in qs],
        "ground_truth": [q.groundTruth for q in qs],
        "question_date": [q.questionDate for q in qs],
        "container_tag": [q.containerTag for q in qs],
        "haystack_id": [
            haystack_id_of(
                qid, benchmark=ck.benchmark, recorded=rec, container_tag=q.containerTag, run_id=haystack_run
            )
            for qid, q, rec in zip(qids, qs, extra("haystackId"), strict=True)
        ],
        "question_type": [q.questionType for q in qs],
        "question_type_norm": norms,
        "true_category": categories,
        "type_source": sources,
    }
    durations = []
    for name in PHASES:
        phases = [getattr(p, name) for p in ph]
        cols[f"{name}_status"] = statuses = [x.status for x in phases]
        cols[f"{name}_ms"] = ms = [x.durationMs for x in phases]
        durations.append(ms)
        # a failed phase's error (only looked at when the run has a failure), redacted: a run written by
        # another harness (or an older bench_nb) may hold a secret an endpoint echoed
        cols[f"_{name}_error"] = (
            [x.error and redact(x.error) for x in phases] if "failed" in statuses else [None] * n
        )
    if run.imported is not None:  # not timed: null, never zero
        cols["total_ms"] = [None] * n
    else:  # added in phase order, from 0.0, as MemoryBench sums them
        cols["total_ms"] = [
            0.0 + (a or 0) + (b or 0) + (c or 0) + (d or 0) + (e or 0)
            for a, b, c, d, e in zip(*durations, strict=True)
        ]
    scores = [ev.score for ev in evaluations]
    cols.update(
        hypothesis=[a.hypothesis for a in answers],
        _score=scores,
        label=[ev.label for ev in evaluations],
        explanation=[ev.explanation for ev in evaluations],
        _extra_unscored=[bool(u) for u in extra("unscored")],
        graded=[bool(g) for g in extra("graded")],
        prompt_tokens=[a.promptTokens for a in answers],
        base_prompt_tokens=[a.basePromptTokens for a in answers],
        context_tokens=[a.contextTokens for a in answers],
        search_result_count=[None if r is None else len(r) for r in (p.search.results for p in ph)],
        custom_prompt=[bool(c) for c in extra("customPrompt")],
    )
    if extras is None:
        cols["published_score"] = [None] * n
        cols["tokenizer"] = [run_extra.get("tokenizer")] * n
        cols["retrieval_level"] = [run_extra.get("evidenceLevel")] * n
    else:
        cols["published_score"] = [
            _published(e, ev.status == "completed", score)
            for e, ev, score in zip(extras, evaluations, scores, strict=True)
        ]
        cols["tokenizer"] = [e.get("tokenizer", run_extra.get("tokenizer")) for e in extras]
        cols["retrieval_level"] = [e.get("retrievalLevel", run_extra.get("evidenceLevel")) for e in extras]
    cols.update(usage_columns(extras, n, run_extra))
    metrics = [ev.retrievalMetrics for ev in evaluations]
    for col, _, attr, _ in RETRIEVAL:
        cols[col] = [None if rm is None else getattr(rm, attr) for rm in metrics]
    schema = {c: _PRIVATE_SCHEMA.get(c) or QUESTION_SCHEMA[c] for c in cols}
    frame = pl.DataFrame(cols, schema=schema)
    status = {p: pl.col(f"{p}_status") for p in PHASES}
    failed_phase = pl.coalesce(
        [pl.when(status[p] == "failed").then(pl.lit(p)) for p in PHASES] + [pl.lit(None, pl.Utf8)]
    )
    errors = [pl.col(f"_{p}_error") for p in PHASES]
    error = pl.coalesce(
        [
            pl.when(status[p] == "failed").then(
                pl.when(e.is_null() | (e == "")).then(pl.lit(_NO_ERROR)).otherwise(e)
            )
            for p, e in zip(PHASES, errors, strict=True)
        ]
        + [pl.lit(None, pl.Utf8)]
    )
    evaluated = status["evaluate"] == "completed"
    score = pl.col("_score")
    unscored = evaluated & (pl.col("_extra_unscored") | score.is_null())
    constants: dict[str, Any] = {
        "run_id": ck.runId,
        "harness": run.harness,
        "provider": ck.provider,
        "benchmark": ck.benchmark,
        "judge": ck.judge,
        "answering_model": ck.answeringModel,
        "report_context_tokens": None,
        "source": "checkpoint",
        "settings_fingerprint": read_spec(run).fingerprint,
        "run_path": str(run.path),
        **dict.fromkeys(ERRATA_COLUMNS),
    }
    derived = {
        "status": pl.when(failed_phase.is_not_null())
        .then(pl.lit("failed"))
        .when(evaluated)
        .then(pl.lit("evaluated"))
        .when(pl.any_horizontal([s != "pending" for s in status.values()]))
        .then(pl.lit("in_progress"))
        .otherwise(pl.lit("pending")),
        "failed_phase": failed_phase,
        "error": error,
        "score": pl.when(evaluated).then(score),
        "unscored": unscored,
        "correct": pl.when(evaluated & ~unscored).then(score == 1),
        "custom_prompt": pl.lit(bool(run_extra.get("customPrompt"))) | pl.col("custom_prompt"),
    }
    return frame.select(
        [
            pl.lit(constants[c], dtype).alias(c)
            if c in constants
            else derived[c].cast(dtype).alias(c)
            if c in derived
            else pl.col(c)
            for c, dtype in QUESTION_SCHEMA.items()
        ]
    )


# The checkpoint frame's working columns, dropped once the public ones are derived from them.
_PRIVATE_SCHEMA: dict[str, Any] = {
    **{f"_{p}_error": _STR for p in PHASES},
    "_score": _FLT,
    "_extra_unscored": _BOOL,
}


def _published(extra: dict[str, Any], evaluated: bool, score: float | None) -> float | None:
    """``published_score``: a graded answer's score as the benchmark's official code reads it."""
    if not (extra.get("graded") and evaluated and not extra.get("unscored") and score is not None):
        return None
    published = extra.get("publishedScore")
    return float(published) if isinstance(published, int | float) else None


def _report_frame(run: Run, index: dict[str, DatasetQuestion] | None) -> pl.DataFrame:
    """The rows of a run that has only its report.json (no per-question phases or tokens)."""
    cols: dict[str, list[Any]] = {name: [] for name in QUESTION_SCHEMA}
    rep = run.report or {}
    benchmark = str(rep.get("benchmark", ""))
    fingerprint = read_spec(run).fingerprint
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
        # every column, the errata's null (apply_errata fills them)
        row: dict[str, Any] = dict.fromkeys(QUESTION_SCHEMA)
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
        for col, _, attr, _ in RETRIEVAL:
            row[col] = rm.get(attr)
        for name, value in row.items():
            cols[name].append(value)
    return pl.DataFrame(cols, schema=QUESTION_SCHEMA)


def runs_frame(runs: RunsLike, *, strict: bool = False) -> pl.DataFrame:
    """One row per run: provider, benchmark, judge, answering model, status, counts per phase status, dates.

    Args:
        runs: run directories, globs, a runs folder, a compare manifest, a ``RunSet``, or a run store's runs.
        strict: raise ``RunFormatError`` on the first problem instead of skipping what cannot be read (with a
            ``RunFormatWarning``); ``problems`` counts each run's.

    Columns, each with its dtype, source and meaning: docs/frames.md (``runs_df``), or in a notebook
    ``{c.name: c.description for c in bench_nb.frames.columns.RUNS.columns}``.
    """
    if isinstance(runs, StoredFrames):
        return stored(runs, "runs")
    runset, _ = load_run_views(runs, strict=strict)
    rows: list[dict[str, Any]] = []
    for run in runset:
        row: dict[str, Any] = {
            "run_id": run.run_id,
            "run_path": str(run.path),
            "source": run.source,
            "settings_fingerprint": read_spec(run).fingerprint,
            "problems": len(run.problems),
        }
        if run.view is not None:
            ck = run.view
            n = len(ck.questions)
            row.update(
                provider=ck.provider,
                benchmark=ck.benchmark,
                judge=ck.judge,
                answering_model=ck.answeringModel,
                status=ck.status,
                created_at=ck.createdAt,
                updated_at=ck.updatedAt,
                target_questions=len(ck.targetQuestionIds) or n,
                k=(ck.benchNb or {}).get("k"),
                written_by=run.harness,
            )
            for phase in PHASES:
                counts = Counter(getattr(q.phases, phase).status for q in ck.questions.values())
                row.update({f"{phase}_{st}": counts[st] for st in RUN_COUNTS})
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
                written_by="memorybench",
            )
            # a report lists only evaluated questions: every phase completed
            row.update({f"{p}_{st}": n if st == "completed" else 0 for p in PHASES for st in RUN_COUNTS})
        row["questions"] = n
        rows.append(row)
    return pl.DataFrame([{k: r.get(k) for k in RUN_SCHEMA} for r in rows], schema=RUN_SCHEMA)


runs_df = with_backend(runs_frame, "runs_df")
