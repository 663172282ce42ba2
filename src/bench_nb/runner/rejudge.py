"""Grade a finished run's answers with more judges, without re-running ingest, search or answer.

Every verdict is appended to the run's ``judgments.jsonl`` (``bench_nb.runformat.verdicts``), as it comes, so a
crash loses at most the verdicts in flight and a second call resumes: a (question, judge) pair that already
has a verdict is skipped unless ``force=True``. The checkpoint is left untouched, so MemoryBench still reads
the run as before, unless ``primary=`` names another judge: then each question's ``phases.evaluate`` takes
that judge's verdict and the run's ``judge`` becomes its name, written atomically (temporary file, fsync,
rename). The previous primary verdicts are first copied into ``judgments.jsonl``, so nothing is lost.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench_nb.errors import JudgeError, RunFormatError
from bench_nb.judges.base import Judge, is_replicable, majority_verdict
from bench_nb.judges.registry import calls_no_model, get_judge
from bench_nb.models.aliases import check_credentials
from bench_nb.models.client import LLMClient
from bench_nb.records import Question, Verdict, VerdictLabel
from bench_nb.redaction import redact
from bench_nb.registry import did_you_mean
from bench_nb.runformat.format import judge_fields, now_iso
from bench_nb.runformat.journal import write_atomic
from bench_nb.runformat.jsjson import dumps_js
from bench_nb.runformat.load import Run, read_run
from bench_nb.runformat.lock import lock_run
from bench_nb.runformat.question_types import question_types
from bench_nb.runformat.spec import RunSpec, primary_judge, read_spec
from bench_nb.runformat.verdicts import append_verdicts, read_replicates, read_verdicts
from bench_nb.runner.repeats import repeat_number, run_client

FLUSH_EVERY = 50  # verdicts buffered before an append (each append is one fsync)


@dataclass(frozen=True)
class RejudgeResult:
    """What a ``rejudge`` call did."""

    run_dir: Path
    judges: tuple[str, ...]
    graded: dict[str, int]  # verdicts appended now, per judge
    skipped: dict[str, int]  # questions that already had this judge's verdict
    unscored: dict[str, int]  # of the verdicts appended now, how many the judge could not score
    primary: str  # the primary judge after the call
    primary_changed: bool
    report_stale: bool  # report.json was written under another primary judge: regenerate it


def resolve_judge(spec: str | Judge, client: LLMClient | None = None) -> Judge:
    """A Judge from a spec (``"f1"``, ``"contains"``, a model alias...) through the judge registry; one that
    calls a model calls it through ``client`` (a run's own, ``runner.repeats.run_client``) when given."""
    if isinstance(spec, str):
        return get_judge(spec, **({} if client is None or calls_no_model(spec) else {"client": client}))
    if not isinstance(spec, Judge):
        raise JudgeError(f"{spec!r} is not a judge (needs a name and a judge(question, hypothesis) method)")
    return spec


def judges_with_prompts(
    specs: Sequence[str | Judge], judge_prompts: Sequence[str], client: LLMClient | None = None
) -> list[Judge]:
    """One LLM judge per (spec, judge prompt): ``gpt-4o-mini`` with ``lenient,standard,strict`` gives
    ``gpt-4o-mini[lenient]``, ``gpt-4o-mini`` and ``gpt-4o-mini[strict]`` (``bench_nb.judges.prompts``),
    calling through ``client`` when given.

    Raises:
        JudgeError: a spec is a built-in (deterministic) judge or a Judge object, which have no prompt; or
            an unknown prompt.
    """
    out: list[Judge] = []
    for spec in specs:
        name = spec.strip() if isinstance(spec, str) else getattr(spec, "name", repr(spec))
        if not isinstance(spec, str) or calls_no_model(name):
            raise JudgeError(
                f"judge {name!r} has no prompt to vary: --judge-prompts needs LLM judges (model aliases)"
            )
        out.extend(get_judge(name, judge_prompt=p, client=client) for p in judge_prompts)
    return out


def answered_questions(run: Run) -> dict[str, tuple[Question, str]]:
    """question id -> (the Question a judge needs, the run's answer), for every answered question.

    The type a judge grades by is the one the frames report (``runformat.question_types``).
    """
    out: dict[str, tuple[Question, str]] = {}
    if run.checkpoint is not None:
        ck = run.checkpoint
        for qid, q in ck.questions.items():
            hypothesis = q.phases.answer.hypothesis
            if hypothesis is None or q.phases.answer.status != "completed":
                continue
            extra = q.benchNb or {}
            norm, category, _ = question_types(
                qid,
                q.questionType,
                benchmark=ck.benchmark,
                true_labels=run.has_true_labels,
                recorded=extra.get("normType"),
            )
            question = Question(
                question_id=qid,
                question=q.question,
                answer=q.groundTruth,
                question_type=q.questionType,
                norm_type=norm,
                haystack_id=q.containerTag,
                question_date=q.questionDate,
                evidence_ids=tuple(extra.get("evidenceIds") or ()),
                category=category,
                extra=judge_fields(extra, recorded=True),
            )
            out[qid] = (question, hypothesis)
        return out
    rep = run.report or {}
    benchmark = str(rep.get("benchmark", ""))
    for i, ev in enumerate(rep.get("evaluations", [])):
        hypothesis = ev.get("hypothesis")
        if hypothesis is None:
            continue
        qid = str(ev.get("questionId", f"#{i}"))
        raw_type = str(ev.get("questionType", ""))
        norm, category, _ = question_types(qid, raw_type, benchmark=benchmark, true_labels=False)
        question = Question(
            question_id=qid,
            question=str(ev.get("question", "")),
            answer=str(ev.get("groundTruth", "")),
            question_type=raw_type,
            norm_type=norm,
            haystack_id="",
            question_date=None,
            category=category,
        )
        out[qid] = (question, str(hypothesis))
    return out


def rejudge(
    run_dir: str | os.PathLike[str],
    judges: Sequence[str | Judge] = (),
    *,
    primary: str | None = None,
    force: bool = False,
    concurrency: int = 1,
    judge_prompts: Sequence[str] = (),
    replicates: int = 1,
) -> RejudgeResult:
    """Grade a run's existing answers with more judges; optionally make one of them the primary judge.

    Args:
        run_dir: the run directory (bench_nb's or MemoryBench's).
        judges: judge specs for ``bench_nb.judges.registry.get_judge`` (``"f1"``, ``"contains"``, a model
            alias...) or Judge objects.
        primary: make this judge the one the checkpoint (and so MemoryBench) reports. It must have graded
            every evaluated question. Default: keep the run's primary judge.
        force: grade again questions that already have this judge's verdict (the new line wins).
        concurrency: how many answers to grade at once (LLM judges are network-bound).
        judge_prompts: grade with each LLM judge once per prompt (``lenient``, ``standard``, ``strict``);
            the judges are named ``alias[lenient]``, ``alias``, ``alias[strict]``. Without ``judges``, the
            run's primary judge (which must be an LLM judge).
        replicates: grade each answer this many times with each model judge (``--judge-replicates``);
            replicate n is appended with ``"replicate": n`` and its replies are cached apart from the other
            replicates'. A (question, judge, replicate) that has a verdict is skipped unless ``force``.
            Deterministic judges grade once.

    Raises:
        ModelError: a model judge's API key is not in the environment (every missing one named), before
            anything is graded.
        JudgeError: a judge failed; every verdict obtained before is already saved.
        RunFormatError: not a run directory, or a primary switch the run cannot take.
        RunLockedError: another process is writing the run (``bench-nb run``, another rejudge).
    """
    path = Path(run_dir)
    # one writer per run (runformat.lock.lock_run, which refuses a folder that is no run, leaving it as it was)
    with lock_run(path, command="bench-nb rejudge"):
        run = read_run(path)
        client = run_client(repeat_number(path, read_spec(run)))  # the run's own response cache (a repeat's)
        with contextlib.closing(client):  # its files closed when the rejudge ends
            if judge_prompts:
                resolved = judges_with_prompts(list(judges) or [primary_judge(run)], judge_prompts, client)
            else:
                resolved = [resolve_judge(j, client) for j in judges]
            names = [j.name for j in resolved]
            if len(set(names)) != len(names):
                raise JudgeError(f"judge names must be distinct, got {names}")
            if replicates < 1:
                raise JudgeError(f"replicates must be at least 1, not {replicates}")
            check_credentials(None, resolved)  # every missing key named before the first answer is graded
            todo = answered_questions(run)
            existing, _ = read_replicates(path)
            graded: dict[str, int] = {}
            skipped: dict[str, int] = {}
            unscored: dict[str, int] = {}
            for judge in resolved:
                graded[judge.name] = skipped[judge.name] = unscored[judge.name] = 0
                for replicate in range(1, (replicates if is_replicable(judge) else 1) + 1):
                    qids = [q for q in todo if force or (q, judge.name, replicate) not in existing]
                    skipped[judge.name] += len(todo) - len(qids)
                    items = [(q, *todo[q]) for q in qids]
                    verdicts = _grade(path, judge, items, max(1, concurrency), replicate=replicate)
                    graded[judge.name] += len(verdicts)
                    unscored[judge.name] += sum(v.label == "unscored" for v in verdicts)
            old = primary_judge(run)
            changed = primary is not None and primary != old
            if changed:
                assert primary is not None
                chosen = next((j for j in resolved if j.name == primary), None)
                _switch_primary(run, old, primary, getattr(chosen, "prompt_hash", None))
            return RejudgeResult(
                run_dir=path,
                judges=tuple(names),
                graded=graded,
                skipped=skipped,
                unscored=unscored,
                primary=primary if changed and primary is not None else old,
                primary_changed=changed,
                report_stale=changed and (path / "report.json").is_file(),
            )


def _grade(
    path: Path, judge: Judge, items: list[tuple[str, Question, str]], workers: int, *, replicate: int = 1
) -> list[Verdict]:
    """Grade items (as judge replicate ``replicate``), appending verdicts every FLUSH_EVERY; on a failure save
    what is done, then raise."""

    def one(qid: str, question: Question, hypothesis: str) -> tuple[str, Verdict]:
        if replicate == 1:
            verdict = judge.judge(question, hypothesis)
        else:
            verdict = judge.judge(question, hypothesis, replicate=replicate)  # type: ignore[call-arg]
        if not isinstance(verdict, Verdict):
            raise JudgeError(f"judge {judge.name!r} returned {type(verdict).__name__}, not a Verdict")
        return qid, verdict if verdict.judge == judge.name else replace(verdict, judge=judge.name)

    done: list[Verdict] = []
    buffer: list[tuple[str, Verdict]] = []
    failure: tuple[str, BaseException] | None = None
    todo = iter(items)
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            running: dict[Future[tuple[str, Verdict]], str] = {}

            def submit_next() -> None:
                item = next(todo, None)
                if item is not None:
                    running[pool.submit(one, *item)] = item[0]

            for _ in range(workers):
                submit_next()
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    qid = running.pop(fut)
                    err = fut.exception()
                    if err is not None:
                        failure = failure or (qid, err)
                        continue
                    buffer.append(fut.result())
                    if failure is None:  # after a failure, let the running ones finish, start no more
                        submit_next()
                if len(buffer) >= FLUSH_EVERY:
                    append_verdicts(path, buffer, replicate=replicate)
                    done.extend(v for _, v in buffer)
                    buffer.clear()
    finally:
        append_verdicts(path, buffer, replicate=replicate)
        done.extend(v for _, v in buffer)
    if failure is not None:
        qid, err = failure
        raise JudgeError(f"judge {judge.name!r} failed on question {qid}: {redact(str(err))}") from err
    return done


def _switch_primary(run: Run, old: str, new: str, prompt_hash: Any = None) -> None:
    path = run.path
    if run.checkpoint is None:
        raise RunFormatError(
            path, "a run with only report.json has no checkpoint to switch the primary judge in"
        )
    journal = path / "journal.jsonl"
    if journal.is_file() and journal.stat().st_size > 0:
        raise RunFormatError(
            journal, "the run has progress not yet compacted into checkpoint.json: resume or finish it first"
        )
    verdicts, _ = read_verdicts(path)
    replicated, _ = read_replicates(path)
    by_question: dict[str, list[dict[str, Any]]] = {}
    for (q, j, _), line in sorted(replicated.items()):
        if j == new:
            by_question.setdefault(q, []).append(line)
    evaluated = [
        qid for qid, q in run.checkpoint.questions.items() if q.phases.evaluate.status == "completed"
    ]
    missing = [q for q in evaluated if (q, new) not in verdicts]
    judged = sorted({j for _, j in verdicts})
    if evaluated and new not in judged:  # no verdict at all: often a misspelt name
        raise JudgeError(
            f"judge {new!r} has no verdict in the run{did_you_mean(new, judged)}; judges with verdicts: "
            f"{', '.join(judged) or 'none'}. Make one of them the primary judge, or grade the answers with "
            f"{new!r} first (rejudge -j {new})"
        )
    if missing:
        raise JudgeError(
            f"judge {new!r} has no verdict for {len(missing)} evaluated question(s) (e.g. {missing[0]}): "
            f"grade them first (rejudge -j {new}) before making it the primary judge"
        )
    # Keep the current primary verdicts: MemoryBench runs hold them only in the checkpoint.
    keep = []
    for qid in evaluated:
        if (qid, old) not in verdicts:
            ev = run.checkpoint.questions[qid].phases.evaluate
            extra = run.checkpoint.questions[qid].benchNb or {}
            graded = bool(extra.get("graded"))  # BEAM: a fractional score, kept as it is
            if extra.get("unscored") or ev.score is None or not (graded or ev.score in (0, 1)):
                verdict = Verdict(None, "unscored", ev.explanation or "", judge=old)
            else:
                label: VerdictLabel = "correct" if ev.score == 1 else "incorrect"
                verdict = Verdict(
                    float(ev.score) if graded else int(ev.score),
                    label,
                    ev.explanation or "",
                    judge=old,
                    items=tuple(extra.get("rubricScores") or ()),
                    published_score=extra.get("publishedScore") if graded else None,
                )
            keep.append((qid, verdict))
    append_verdicts(path, keep)
    ckpt_path = path / "checkpoint.json"
    data: dict[str, Any] = json.loads(ckpt_path.read_text(encoding="utf-8"))
    now = now_iso()
    for qid, q in data.get("questions", {}).items():
        rec = _majority_record(by_question.get(qid, []), new) or verdicts.get((qid, new))
        if rec is None:
            continue
        ev = q.setdefault("phases", {}).setdefault("evaluate", {})
        was_completed = ev.get("status") == "completed"
        ev["status"] = "completed"
        ev.pop("error", None)
        ev.setdefault("completedAt", now)
        unscored = bool(rec.get("unscored")) or rec.get("score") is None
        if unscored:
            ev.pop("score", None)
        else:
            graded = rec.get("publishedScore") is not None  # a graded verdict (BEAM) keeps its fraction
            ev["score"] = float(rec["score"]) if graded else int(rec["score"])
            q["benchNb"] = {**(q.get("benchNb") or {}), "graded": True if graded else None}
            if graded:
                q["benchNb"].update(publishedScore=rec["publishedScore"], rubricScores=rec.get("items"))
            q["benchNb"] = {k: v for k, v in q["benchNb"].items() if v is not None}
        ev["label"] = "unscored" if unscored else rec.get("label")
        ev["explanation"] = rec.get("explanation") or ""
        extra = q.get("benchNb")
        if unscored:
            q["benchNb"] = {**(extra or {}), "unscored": True}
        elif extra is not None and "unscored" in extra:
            extra.pop("unscored")
        if not was_completed:
            ev.setdefault("startedAt", now)
    data["judge"] = new
    if isinstance(data.get("benchNb"), dict):  # the new primary judge first (RunSpec.with_primary_judge)
        spec = RunSpec.recorded(data["benchNb"]).with_primary_judge(new, prompt_hash)
        data["benchNb"] = spec.written_over(data["benchNb"])
    data["updatedAt"] = now
    write_atomic(ckpt_path, dumps_js(data).encode("utf-8"))


def _majority_record(recs: list[dict[str, Any]], judge: str) -> dict[str, Any] | None:
    """The judge's majority verdict over its replicates of one question (its judgments records, replicate
    order) as a record, as the runner puts it in the checkpoint; None with fewer than two replicates."""
    if len(recs) < 2:
        return None
    reps = []
    for rec in recs:
        score = rec.get("score")
        if score in (0, 1) and not rec.get("unscored"):
            reps.append(Verdict(int(score), "correct" if score == 1 else "incorrect", "", judge=judge))
        else:
            reps.append(Verdict(None, "unscored", "", judge=judge))
    v = majority_verdict(reps)
    return {"score": v.score, "label": v.label, "explanation": v.explanation, "unscored": v.score is None}
