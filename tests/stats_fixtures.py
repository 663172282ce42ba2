"""Fixture runs and judges for the statistics tests: small run directories written with MemoryBench's structs.

``make_run`` writes ``checkpoint.json`` (msgspec structs of ``bench_nb.runformat.format``), one
``results/<qid>.json`` per question, and the given judges' verdicts in ``judgments.jsonl``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from bench_nb.records import Question, Verdict
from bench_nb.runformat import format as mbf
from bench_nb.runformat.verdicts import append_verdicts

QUESTIONS: list[dict[str, str]] = [
    {"id": "q1", "q": "What is the dog's name?", "gt": "Biscuit", "type": "single-hop"},
    {"id": "q2", "q": "Where does Priya work?", "gt": "Leeds", "type": "single-hop"},
    {"id": "q3", "q": "When did Tomas start cello?", "gt": "March 2024", "type": "temporal"},
    {"id": "q4", "q": "What instrument does Tomas play?", "gt": "cello", "type": "multi-hop"},
    {"id": "q5", "q": "What city was the conference in?", "gt": "Manchester", "type": "multi-hop"},
    {"id": "q6", "q": "What is Priya's favourite colour?", "gt": "", "type": "adversarial"},
]
NORM = {
    "single-hop": "single-hop",
    "temporal": "temporal",
    "multi-hop": "multi-hop",
    "adversarial": "abstention",
}


def _verdict(score: int | None, judge: str, why: str = "") -> Verdict:
    if score is None:
        return Verdict(None, "unscored", why or "could not parse", judge=judge)
    return Verdict(score, "correct" if score else "incorrect", why or f"{judge} says {score}", judge=judge)


def write_run(
    root: Path,
    run_id: str,
    *,
    provider: str = "sqlite",
    answers: Mapping[str, str | None],
    primary: str = "contains",
    primary_scores: Mapping[str, int | None] | None = None,
    verdicts: Mapping[str, Mapping[str, int | None]] | None = None,
    bench_nb: dict[str, Any] | None = None,
    evaluate_failed: tuple[str, ...] = (),
    questions: list[dict[str, str]] | None = None,
    haystacks: Mapping[str, str] | None = None,
) -> Path:
    """One run directory. ``answers`` maps question id -> hypothesis (None: the answer phase failed).
    ``haystacks`` maps question id -> its haystack (the container tag ``<haystack>-<run id>``; default the
    question's own).

    ``primary_scores`` go into ``phases.evaluate`` (None = unscored); ``verdicts`` (judge -> qid -> score)
    into judgments.jsonl. ``bench_nb=None`` writes a MemoryBench-style run (no benchNb anywhere).
    """
    run_dir = root / run_id
    (run_dir / "results").mkdir(parents=True)
    qs: dict[str, mbf.Question] = {}
    for spec in questions or QUESTIONS:
        qid = spec["id"]
        if qid not in answers:
            continue
        hits = [
            {"memory": f"memory about {spec['gt'] or 'nothing'} for {qid}", "similarity": 0.9},
            {"content": f"<b>second</b> hit of {qid}", "score": 0.5},
        ]
        phases = mbf.Phases(
            ingest=mbf.IngestPhase(status="completed", durationMs=10),
            indexing=mbf.IndexingPhase(status="completed", durationMs=5),
            search=mbf.SearchPhase(
                status="completed",
                durationMs=20,
                results=[msgspec.Raw(msgspec.json.encode(h)) for h in hits],
                resultFile=f"data/runs/{run_id}/results/{qid}.json",
            ),
        )
        hyp = answers[qid]
        if hyp is None:
            phases.answer = mbf.AnswerPhase(status="failed", error="answer model 500")
        else:
            phases.answer = mbf.AnswerPhase(status="completed", durationMs=30, hypothesis=hyp)
            score = (primary_scores or {}).get(qid, 0)
            if qid in evaluate_failed:
                phases.evaluate = mbf.EvaluatePhase(status="failed", error="judge 429")
            elif score is None:
                phases.evaluate = mbf.EvaluatePhase(status="completed", label="unscored", explanation="??")
            else:
                phases.evaluate = mbf.EvaluatePhase(
                    status="completed",
                    durationMs=40,
                    score=score,
                    label="correct" if score else "incorrect",
                    explanation=f"primary says {score}",
                )
        q_extra = None
        if bench_nb is not None:
            q_extra = {"normType": NORM[spec["type"]]}
            if hyp is not None and (primary_scores or {}).get(qid, 0) is None:
                q_extra["unscored"] = True
        qs[qid] = mbf.Question(
            questionId=qid,
            containerTag=f"{(haystacks or {}).get(qid, qid)}-{run_id}",
            question=spec["q"],
            groundTruth=spec["gt"],
            questionType=spec["type"],
            phases=phases,
            benchNb=q_extra,
        )
        (run_dir / "results" / f"{qid}.json").write_bytes(
            msgspec.json.encode({"questionId": qid, "results": hits})
        )
    ck = mbf.Checkpoint(
        runId=run_id,
        dataSourceRunId=run_id,
        status="completed",
        provider=provider,
        benchmark="sample",
        judge=primary,
        answeringModel="extractive",
        createdAt="2026-01-01T00:00:00.000Z",
        updatedAt="2026-01-01T00:10:00.000Z",
        targetQuestionIds=list(qs),
        questions=qs,
        benchNb=bench_nb,
    )
    (run_dir / "checkpoint.json").write_bytes(msgspec.json.format(msgspec.json.encode(ck), indent=2))
    for judge, scores in (verdicts or {}).items():
        append_verdicts(run_dir, [(qid, _verdict(s, judge)) for qid, s in scores.items()])
    return run_dir


def write_native_run(root: Path, scores: Mapping[str, int], question_type: str) -> Path:
    """A MemoryBench-style run ``native`` (no benchNb) that answered each question of ``scores`` with that
    primary score: the other side of an imported run in a paired comparison."""
    questions = [{"id": qid, "q": f"question {qid}", "gt": "gold", "type": question_type} for qid in scores]
    answers: dict[str, str | None] = {qid: "an answer" for qid in scores}
    return write_run(
        root, "native", answers=answers, primary_scores=scores, bench_nb=None, questions=questions
    )


class ContainsJudge:
    """A real deterministic judge: correct when the ground truth appears in the answer."""

    def __init__(self, name: str = "t-contains") -> None:
        self.name = name
        self.calls: list[str] = []

    def judge(self, question: Question, hypothesis: str) -> Verdict:
        self.calls.append(question.question_id)
        if question.is_abstention:
            ok = "not" in hypothesis.lower() or "no information" in hypothesis.lower()
        else:
            ok = question.answer.lower() in hypothesis.lower()
        return Verdict(int(ok), "correct" if ok else "incorrect", f"contains={ok}", judge=self.name)


class StrictJudge:
    """Correct only when the answer is exactly the ground truth; unscored on an empty answer."""

    name = "t-strict"

    def judge(self, question: Question, hypothesis: str) -> Verdict:
        if not hypothesis.strip():
            return Verdict(None, "unscored", "empty answer", judge=self.name)
        ok = hypothesis.strip().lower() == question.answer.strip().lower()
        return Verdict(int(ok), "correct" if ok else "incorrect", f"exact={ok}", judge=self.name)


class FailingJudge:
    """Grades ``ok`` questions, then raises on the question ``fail_on`` (a judge API down after retries)."""

    def __init__(self, fail_on: str, name: str = "t-failing") -> None:
        self.name = name
        self.fail_on = fail_on

    def judge(self, question: Question, hypothesis: str) -> Verdict:
        if question.question_id == self.fail_on:
            raise RuntimeError("judge API unavailable")
        return Verdict(1, "correct", "ok", judge=self.name)
