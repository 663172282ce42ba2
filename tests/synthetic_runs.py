"""Synthetic runs in MemoryBench's format, written from code: test fixtures and benchmark inputs.

These are NOT benchmark results: outcomes, latencies and token counts are drawn from a seeded random profile
per provider, so reports have realistic shapes to show (several providers, two judges who sometimes disagree,
a failed question, per-type differences). Every run is marked ``benchNb.synthetic = true``. Real runs come
from ``bench_nb.runner`` (``bench-nb demo`` uses it).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_nb.models.prompt import CONTEXT_FORMAT, answer_prompt_hash
from bench_nb.records import Benchmark
from bench_nb.runformat.format import (
    AnswerPhase,
    Checkpoint,
    EvaluatePhase,
    IndexingPhase,
    IngestPhase,
    Phases,
    Question,
    SearchPhase,
)
from bench_nb.runformat.spec import RunSpec, question_set_hash

# What a run graded with a provider's own judge prompt records as that prompt's hash (a made-up prompt).
CUSTOM_JUDGE_PROMPT_HASH = hashlib.sha256(b"synthetic provider's own judge prompt").hexdigest()[:16]
HOSTILE_TEXT = '<script>alert("bench_nb")</script><img src=x onerror="alert(1)"> & "quotes"'


@dataclass(frozen=True)
class Profile:
    """How a synthetic provider behaves: accuracy per normalised type, search latency, context size."""

    accuracy: dict[str, float]
    search_ms: float
    context_tokens: int
    hits: int


PROFILES: dict[str, Profile] = {
    "sqlite": Profile(
        {"single-hop": 0.85, "multi-hop": 0.6, "temporal": 0.45, "knowledge-update": 0.7, "abstention": 0.8},
        search_ms=40,
        context_tokens=420,
        hits=5,
    ),
    "full-context": Profile(
        {
            "single-hop": 0.95,
            "multi-hop": 0.85,
            "temporal": 0.75,
            "knowledge-update": 0.6,
            "abstention": 0.55,
        },
        search_ms=3,
        context_tokens=5200,
        hits=1,
    ),
    "no-memory": Profile({"abstention": 0.95}, search_ms=1, context_tokens=0, hits=0),
}


def _questions(benchmark: Benchmark, n: int | None) -> list[tuple[str, Any]]:
    """(question id, benchmark question), cycling the benchmark with suffixed ids past its size."""
    qs = list(benchmark.questions)
    n = len(qs) if n is None else n
    return [
        (q.question_id if i < len(qs) else f"{q.question_id}-r{i // len(qs)}", q)
        for i, q in ((i, qs[i % len(qs)]) for i in range(n))
    ]


def write_synthetic_run(
    runs_dir: str | Path,
    provider: str,
    *,
    benchmark: Benchmark | None = None,
    n_questions: int | None = None,
    run_id: str | None = None,
    judges: Sequence[str] = ("f1", "contains"),
    seed: int = 0,
    hostile: bool = False,
    custom_prompt: bool = False,
    failed: int = 1,
) -> Path:
    """Write one synthetic run directory and return its path.

    Args:
        runs_dir: where the run directory is created (``<runs_dir>/<run_id>``).
        provider: a key of ``PROFILES`` (its behaviour) and the run's provider name.
        benchmark: the questions to use (default: the bundled sample benchmark).
        n_questions: how many questions (the benchmark is cycled past its size).
        run_id: the run's id and directory name (default ``synthetic-<provider>``).
        judges: judge names; the first is the primary judge (the checkpoint's verdict).
        seed: seeds the random profile (with the provider's name): the same seed writes the same run.
        hostile: put HTML/script text into the first answer and retrieved context (escaping tests).
        custom_prompt: mark the run as graded with a provider's own judge prompt.
        failed: how many questions fail at the search phase.
    """
    if benchmark is None:
        from bench_nb.benchmarks import load_benchmark

        benchmark = load_benchmark("sample")
    profile = PROFILES[provider]
    rng = random.Random(f"{seed}-{provider}")
    run_id = run_id or f"synthetic-{provider}"
    run_dir = Path(runs_dir) / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    questions: dict[str, Question] = {}
    verdict_lines: list[str] = []
    stamp = "2026-01-15T10:00:00.000Z"
    for i, (qid, q) in enumerate(_questions(benchmark, n_questions)):
        msgs = [
            (m.message_id or f"{s.session_id}-{j}", m.content, s.date)
            for s in benchmark.haystacks[q.haystack_id].sessions
            for j, m in enumerate(s.messages)
        ]
        done: dict[str, Any] = {"status": "completed", "startedAt": stamp, "completedAt": stamp}
        ingest = IngestPhase(**done, durationMs=float(rng.randint(200, 900)), completedSessions=["s"])
        indexing = IndexingPhase(**done, durationMs=float(rng.randint(50, 300)))
        if i < failed:
            err = f"synthetic provider error: search timed out after 30 s ({provider})"
            phases = Phases(
                ingest=ingest,
                indexing=indexing,
                search=SearchPhase(status="failed", startedAt=stamp, error=err),
            )
            questions[qid] = _question(qid, q, phases)
            continue
        correct = rng.random() < profile.accuracy.get(q.norm_type, 0.05 if provider == "no-memory" else 0.7)
        evidence = [m for m in msgs if m[0] in q.evidence_ids] or msgs[:1]
        pool = evidence if correct else msgs
        hits = []
        for rank in range(min(profile.hits, len(msgs))):
            mid, text, date = pool[rank % len(pool)] if rank == 0 else rng.choice(msgs)
            hits.append({"id": mid, "content": text, "score": round(1 - rank * 0.1, 3), "date": date})
        answer = str(
            q.answer if correct and q.answer else ("I don't know." if not hits else hits[0]["content"])
        )
        if hostile and i == failed:
            answer = f"{HOSTILE_TEXT} {answer}"
            hits.insert(0, {"id": "hostile", "content": HOSTILE_TEXT, "score": 1.0})
        search_ms = max(1.0, round(rng.lognormvariate(0, 0.5) * profile.search_ms))
        ctx = max(0, int(rng.gauss(profile.context_tokens, profile.context_tokens * 0.2)))
        phases = Phases(
            ingest=ingest,
            indexing=indexing,
            search=SearchPhase(
                **done,
                durationMs=search_ms,
                results=[msgspec.Raw(json.dumps(h).encode()) for h in hits],
            ),
            answer=AnswerPhase(
                **done,
                durationMs=float(rng.randint(5, 60)),
                hypothesis=answer,
                promptTokens=ctx + 180,
                basePromptTokens=180,
                contextTokens=ctx,
            ),
            evaluate=EvaluatePhase(
                **done,
                durationMs=float(rng.randint(1, 5)),
                score=1 if correct else 0,
                label="correct" if correct else "incorrect",
                explanation=f"{judges[0]}: synthetic verdict",
            ),
        )
        questions[qid] = _question(qid, q, phases)
        for j, judge in enumerate(judges):
            agree = j == 0 or (rng.random() > 0.12 and not (hostile and i == failed))
            score = int(correct) if agree else 1 - int(correct)
            verdict_lines.append(
                json.dumps(
                    {
                        "questionId": qid,
                        "judge": judge,
                        "score": score,
                        "label": "correct" if score else "incorrect",
                        "explanation": f"{judge}: synthetic verdict",
                        "unscored": False,
                        "at": stamp,
                    }
                )
            )
    checkpoint = Checkpoint(
        runId=run_id,
        dataSourceRunId=run_id,
        status="completed",
        provider=provider,
        benchmark=benchmark.name,
        judge=judges[0],
        answeringModel="extractive",
        createdAt=stamp,
        updatedAt=stamp,
        targetQuestionIds=list(questions),
        questions=questions,
        benchNb=RunSpec(
            version=1,
            synthetic=True,
            k=10,
            answerer="extractive",
            judges=list(judges),
            primary_judge=judges[0],
            question_set_hash=question_set_hash(list(questions)),
            prompt_hashes={"answer": answer_prompt_hash()}
            | ({f"judge:{judges[0]}": CUSTOM_JUDGE_PROMPT_HASH} if custom_prompt else {}),
            context_format=CONTEXT_FORMAT,
            custom_prompt=custom_prompt,
            tokenizer="synthetic",
        ).bench_nb(),
    )
    (run_dir / "checkpoint.json").write_bytes(msgspec.json.format(msgspec.json.encode(checkpoint)))
    (run_dir / "judgments.jsonl").write_text("".join(line + "\n" for line in verdict_lines), encoding="utf-8")
    return run_dir


def _question(qid: str, q: Any, phases: Phases) -> Question:
    return Question(
        questionId=qid,
        containerTag=f"{q.haystack_id}-synthetic",
        question=q.question,
        groundTruth=q.answer,
        questionType=q.question_type,
        questionDate=q.question_date,
        phases=phases,
        benchNb={"normType": q.norm_type, "evidenceIds": list(q.evidence_ids)},
    )


def write_synthetic_runs(
    runs_dir: str | Path,
    providers: Sequence[str] = ("sqlite", "full-context", "no-memory"),
    **options: Any,
) -> list[Path]:
    """One synthetic run per provider (same questions, same judges); options as ``write_synthetic_run``."""
    return [write_synthetic_run(runs_dir, p, **options) for p in providers]
