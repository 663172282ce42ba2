"""Write a leniency audit of a judge: run directories of answers whose grade is known, graded by the judge.

``write_audit_runs(run_dir, judges)`` takes a finished run's questions (and its retrieved context, for the
names of each haystack and for the labelling widget), generates known-wrong and known-correct answers
(``bench_nb.judges.audit``), writes one run directory per generator under ``<run_dir>/audit/<generator>/``
(MemoryBench's format; ``benchNb.audit`` records the kind, generator, seed and source run; each question's
``benchNb.auditHow`` says how its answer was made), then grades each with the judges through ``rejudge``
(so verdicts land in ``judgments.jsonl``, resumable, and the first judge becomes the primary one).

``known_wrong=True`` instead copies the run's own answers as one known-wrong set (generator ``imported``):
for a set of deliberately wrong answers made elsewhere, such as the LoCoMo audit's stress test.

``bench_nb.judge_audit`` and ``bench_nb.metrics.judge_quality.judge_error_rates`` read the result.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from bench_nb.errors import JudgeError
from bench_nb.judges.audit import GENERATORS, AuditAnswer, generate_audit, kind_of
from bench_nb.judges.base import Judge
from bench_nb.records import Question
from bench_nb.runformat import format as mbf
from bench_nb.runformat.format import now_iso
from bench_nb.runformat.journal import write_atomic
from bench_nb.runformat.load import Run, RunSet, load_runs, read_run
from bench_nb.runformat.lock import LOCK, lock_run
from bench_nb.runformat.spec import RunSpec
from bench_nb.runner.rejudge import RejudgeResult, answered_questions, rejudge
from bench_nb.text import hit_text

AUDIT_DIR = "audit"


@dataclass(frozen=True)
class AuditRun:
    """One audit run directory that was written and graded."""

    path: Path
    run_id: str
    generator: str
    kind: str
    answers: int
    graded: RejudgeResult


def default_audit_dir(run_dir: str | os.PathLike[str]) -> Path:
    """Where a run's audit sets go by default: ``<run_dir>/audit``, or ``<file>.audit`` beside a run that is
    one file (another harness's result file)."""
    path = Path(run_dir)
    return path.with_name(path.name + ".audit") if path.is_file() else path / AUDIT_DIR


def find_audit_runs(runs: Iterable[object]) -> RunSet:
    """The audit sets written beside the given runs (``<run>/audit/<generator>/``), loaded; empty when none."""
    paths = []
    for run in runs:
        root = Path(run.path) if isinstance(run, Run) else Path(str(run))
        if root.is_dir():
            paths.extend(sorted(str(p.parent) for p in (root / AUDIT_DIR).glob("*/checkpoint.json")))
    return load_runs(paths) if paths else RunSet()


def write_audit_runs(
    run_dir: str | os.PathLike[str],
    judges: Sequence[str | Judge],
    *,
    generators: Sequence[str] = GENERATORS,
    out_dir: str | os.PathLike[str] | None = None,
    seed: int = 0,
    known_wrong: bool = False,
    concurrency: int = 1,
    replace: bool = False,
) -> list[AuditRun]:
    """Generate the audit sets of a run, write them as run directories and grade them with ``judges``.

    A second call with the same arguments resumes: the sets already written are kept (their answers are
    the same for the same seed) and only verdicts still missing are asked for.

    Args:
        run_dir: a finished run (bench_nb's or MemoryBench's directory, or another harness's result file:
            any one run ``load_runs`` reads).
        judges: the judges to audit (specs or Judge objects); the first becomes each set's primary judge.
        generators: which sets to make (``bench_nb.judges.audit.GENERATORS``).
        out_dir: where the sets go (default ``<run_dir>/audit``).
        seed: the generators' random seed.
        known_wrong: the run's own answers are known to be wrong: copy them as one set (``imported``).
        concurrency: answers graded at once.
        replace: delete and rewrite sets already written (a different seed or generators).

    Raises:
        JudgeError: no judge given, or a judge failed (verdicts obtained before are saved).
        ValueError: an unknown generator.
    """
    if not judges:
        raise JudgeError("a judge audit needs at least one judge (-j)")
    source = _read_source(Path(run_dir))
    todo = answered_questions(source)
    if not todo:
        raise JudgeError(f"{run_dir}: the run has no answered question to audit")
    questions = [q for q, _ in todo.values()]
    hits = _hit_texts(source)
    if known_wrong:
        sets = {
            "imported": [
                AuditAnswer(q.question_id, "imported", "wrong", a, "imported") for q, a in todo.values()
            ]
        }
    else:
        texts: dict[str, list[str]] = {}
        for q in questions:
            texts.setdefault(q.haystack_id, []).extend(hits.get(q.question_id, []))
        sets = generate_audit(questions, generators, haystack_texts=texts, seed=seed)
    root = Path(out_dir) if out_dir is not None else default_audit_dir(run_dir)
    by_id = {q.question_id: q for q in questions}
    out = []
    for generator, answers in sets.items():
        kind = "wrong" if generator == "imported" else kind_of(generator)
        path = root / generator
        run_id = f"{source.run_id}.audit-{generator}"
        path.mkdir(parents=True, exist_ok=True)
        # the set is a run directory: written (or cleared for ``replace``) under its lock, never under a rejudge
        with lock_run(path, "bench-nb judge-audit", new=True):
            if replace:
                _clear(path)
            if not (path / "checkpoint.json").is_file():
                _write_run(path, run_id, source, by_id, answers, generator=generator, kind=kind, seed=seed)
        graded = rejudge(path, judges, concurrency=concurrency)
        primary = graded.judges[0]
        if graded.primary != primary:  # the switch, keeping what the grading did (graded, unscored)
            switched = rejudge(path, [], primary=primary)
            graded = dataclasses.replace(
                graded,
                primary=switched.primary,
                primary_changed=switched.primary_changed,
                report_stale=switched.report_stale,
            )
        out.append(AuditRun(path, run_id, generator, kind, len(answers), graded))
    return out


def _clear(path: Path) -> None:
    """Everything in a run directory but its lock file (which a run keeps: ``runformat.lock``)."""
    for child in path.iterdir():
        if child.name == LOCK:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _read_source(path: Path) -> Run:
    """The run to audit: a run directory, or one file another harness wrote (an EverMemOS eval_results.json
    such as the LoCoMo audit's stress test), read as ``load_runs`` reads it."""
    if path.is_dir():
        return read_run(path)
    runs = load_runs(path)
    if len(runs) != 1:
        problems = "; ".join(str(p) for p in runs.all_problems[:3]) or "no run in it"
        raise JudgeError(f"{path}: expected one run to audit, found {len(runs)} ({problems})")
    return runs[0]


def _hit_texts(run: Run) -> dict[str, list[str]]:
    """question id -> the texts of its retrieved hits (from the checkpoint)."""
    if run.checkpoint is None:
        return {}
    return {
        qid: [hit_text(h) for h in mbf.decode_results(q.phases.search.results)]
        for qid, q in run.checkpoint.questions.items()
    }


def _write_run(
    path: Path,
    run_id: str,
    source: Run,
    by_id: dict[str, Question],
    answers: Sequence[AuditAnswer],
    *,
    generator: str,
    kind: str,
    seed: int,
) -> None:
    """The audit set as a run directory, answered and not yet graded (``judge`` empty until the first
    judge becomes primary, which writes each question's ``phases.evaluate``)."""
    checkpoint = source.checkpoint
    src_questions = checkpoint.questions if checkpoint is not None else {}
    now = now_iso()
    questions: dict[str, mbf.Question] = {}
    for a in answers:
        q = by_id[a.question_id]
        src = src_questions.get(a.question_id)
        search = (
            mbf.SearchPhase(status="completed", results=src.phases.search.results)
            if src
            else mbf.SearchPhase()
        )
        questions[a.question_id] = mbf.Question(
            questionId=a.question_id,
            containerTag=q.haystack_id,
            question=q.question,
            groundTruth=q.answer,
            questionType=q.question_type,
            questionDate=q.question_date,
            phases=mbf.Phases(
                ingest=mbf.IngestPhase(status="completed"),
                indexing=mbf.IndexingPhase(status="completed"),
                search=search,
                answer=mbf.AnswerPhase(status="completed", hypothesis=a.answer),
            ),
            benchNb={"normType": q.norm_type, "auditHow": a.how},
        )
    provider = (
        checkpoint.provider if checkpoint is not None else str((source.report or {}).get("provider", ""))
    )
    benchmark = checkpoint.benchmark if checkpoint is not None else ""
    ck = mbf.Checkpoint(
        runId=run_id,
        dataSourceRunId=run_id,
        status="completed",
        provider=provider,
        benchmark=benchmark,
        judge="",
        answeringModel=f"audit:{generator}",
        createdAt=now,
        updatedAt=now,
        targetQuestionIds=list(questions),
        questions=questions,
        benchNb=RunSpec(
            audit={"kind": kind, "generator": generator, "seed": seed, "sourceRunId": source.run_id}
        ).bench_nb(),
    )
    path.mkdir(parents=True, exist_ok=True)
    write_atomic(path / "checkpoint.json", msgspec.json.format(msgspec.json.encode(ck), indent=2))
