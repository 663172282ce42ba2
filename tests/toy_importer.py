"""A toy harness's importer in one file: how its result file reads as runs of the run format, and its
registration (nothing else in bench_nb changes).

The toy harness writes ``{"toy_harness": 1, "system": ..., "model": ..., "rows": [{"id", "question", "gold",
"answer", "correct"}]}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench_nb.errors import Problem
from bench_nb.runformat.format import Checkpoint, Question
from bench_nb.runformat.harnesses import Importer, register_importer
from bench_nb.runformat.harnesses.common import ImportInfo, imported_phases, settings, text, unscored_mark
from bench_nb.runformat.harnesses.locomo_ids import LocomoIndex

NAME = "toy-harness"


def looks_like(data: Any) -> bool:
    """The toy harness's output: ``toy_harness`` and a ``rows`` list."""
    return isinstance(data, dict) and "toy_harness" in data and isinstance(data.get("rows"), list)


def read(
    path: Path, index: LocomoIndex | None, problems: list[Problem], data: Any
) -> list[tuple[Checkpoint, ImportInfo]]:
    """The one run of a toy file; a row without an id or with a verdict that is not true/false is a problem."""
    info = ImportInfo(harness=NAME, judge="exact", not_recorded=("latency", "tokens", "retrieved context"))
    questions: dict[str, Question] = {}
    for pos, row in enumerate(data["rows"]):
        qid, correct = text(row.get("id")), row.get("correct")
        if not qid or not isinstance(correct, bool):
            problems.append(
                Problem(str(path), "no id, or correct is not true/false; skipped", field=f"rows[{pos}]")
            )
            continue
        questions[qid] = Question(
            questionId=qid,
            containerTag=qid,
            question=text(row.get("question")),
            groundTruth=text(row.get("gold")),
            questionType="fact",
            phases=imported_phases(correct, hypothesis=text(row.get("answer"))),
            benchNb=unscored_mark(correct),
        )
        info.verdicts[qid] = [correct]
    model = text(data.get("model"))
    checkpoint = Checkpoint(
        runId=path.stem,
        status="completed",
        provider=text(data.get("system")) or "unknown",
        benchmark="toy",
        judge=info.judge,
        answeringModel=model,
        targetQuestionIds=list(questions),
        questions=questions,
        benchNb=settings(info, model),
    )
    return [(checkpoint, info)]


def register() -> Importer:
    """Register the toy importer (``unregister_importer("toy-harness")`` removes it)."""
    return register_importer(Importer(NAME, read, looks_like, locomo_ids=False))
