"""Hand-made run directories for the loader and metric tests, written with MemoryBench's own structs.

``question`` builds one checkpoint entry (``runformat.format.Question``) from a few facts; ``write_run``
writes ``checkpoint.json`` pretty-printed as MemoryBench does, plus ``results/<questionId>.json`` for each
completed search, unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from bench_nb.runformat import format as mbf

Outcome = Literal["correct", "incorrect", "failed", "pending", "in_progress"]


def question(
    qid: str,
    outcome: Outcome = "correct",
    *,
    qtype: str = "single-hop",
    text: str | None = None,
    ground_truth: str = "Biscuit",
    hypothesis: str = "Biscuit",
    search_ms: float = 400,
    answer_ms: float = 3000,
    ms: float = 1000,
    tokens: tuple[int, int, int] | None = (800, 600, 200),
    failed_phase: str = "answer",
    error: str = "OpenAI 500: server error",
    hits: Sequence[Any] = ({"memory": "Priya adopted a greyhound named Biscuit", "similarity": 0.9},),
    k: int = 3,
) -> mbf.Question:
    """One question whose phases end in ``outcome`` (``failed`` fails ``failed_phase``)."""
    durations = {"ingest": ms, "indexing": ms, "search": search_ms, "answer": answer_ms, "evaluate": ms}
    status: dict[str, mbf.PhaseStatus] = dict.fromkeys(mbf.PHASES, "completed")
    if outcome == "failed":
        i = mbf.PHASES.index(failed_phase)
        status = {
            p: "completed" if j < i else "failed" if j == i else "pending" for j, p in enumerate(mbf.PHASES)
        }
    elif outcome == "pending":
        status = dict.fromkeys(mbf.PHASES, "pending")
    elif outcome == "in_progress":
        status = {
            "ingest": "completed",
            "indexing": "in_progress",
            **dict.fromkeys(mbf.PHASES[2:], "pending"),
        }

    def timing(p: str) -> dict[str, Any]:
        if status[p] != "completed":
            return {"error": error} if status[p] == "failed" else {}
        return {"startedAt": "2026-03-30T10:00:00.000Z", "durationMs": durations[p]}

    score = 1 if outcome == "correct" else 0
    prompt = (
        {}
        if tokens is None
        else dict(zip(("promptTokens", "basePromptTokens", "contextTokens"), tokens, strict=True))
    )
    done = status["search"] == "completed"
    phases = mbf.Phases(
        ingest=mbf.IngestPhase(status=status["ingest"], completedSessions=["s1"], **timing("ingest")),
        indexing=mbf.IndexingPhase(status=status["indexing"], **timing("indexing")),
        search=mbf.SearchPhase(
            status=status["search"],
            resultFile=f"data/runs/r/results/{qid}.json" if done else None,
            results=[msgspec.Raw(msgspec.json.encode(h)) for h in hits] if done else None,
            **timing("search"),
        ),
        answer=mbf.AnswerPhase(
            status=status["answer"],
            **({"hypothesis": hypothesis, **prompt} if status["answer"] == "completed" else {}),
            **timing("answer"),
        ),
        evaluate=mbf.EvaluatePhase(
            status=status["evaluate"],
            **(
                {
                    "score": score,
                    "label": "correct" if score else "incorrect",
                    "explanation": "matches" if score else "does not match",
                    "retrievalMetrics": mbf.RetrievalMetrics(hitAtK=score, mrr=score, k=k),
                }
                if status["evaluate"] == "completed"
                else {}
            ),
            **timing("evaluate"),
        ),
    )
    return mbf.Question(
        questionId=qid,
        containerTag=f"{qid}-r",
        question=text or f"What is the answer to {qid}?",
        groundTruth=ground_truth,
        questionType=qtype,
        phases=phases,
    )


def write_run(
    run_dir: Path,
    questions: Sequence[mbf.Question],
    *,
    run_id: str | None = None,
    provider: str = "supermemory",
    benchmark: str = "locomo",
    results_files: bool = True,
    bench_nb: dict[str, Any] | None = None,
) -> Path:
    """Write a run directory; returns it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    ck = mbf.Checkpoint(
        runId=run_id or run_dir.name,
        dataSourceRunId=run_id or run_dir.name,
        status="completed",
        provider=provider,
        benchmark=benchmark,
        judge="gpt-4o",
        answeringModel="gpt-4o",
        createdAt="2026-03-30T10:00:00.000Z",
        updatedAt="2026-03-30T11:00:00.000Z",
        targetQuestionIds=[q.questionId for q in questions],
        questions={q.questionId: q for q in questions},
        benchNb=bench_nb,
    )
    (run_dir / "checkpoint.json").write_bytes(msgspec.json.format(msgspec.json.encode(ck), indent=2))
    if results_files:
        (run_dir / "results").mkdir(exist_ok=True)
        for q in questions:
            if q.phases.search.status == "completed":
                body = {"questionId": q.questionId, "results": mbf.decode_results(q.phases.search.results)}
                (run_dir / "results" / f"{q.questionId}.json").write_bytes(msgspec.json.encode(body))
    return run_dir
