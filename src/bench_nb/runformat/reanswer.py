"""``reanswer.jsonl`` beside a run: its wrong answers answered again from the gold evidence.

``bench-nb reanswer RUN --from gold-evidence`` (``runner.reanswer``) writes one line per question, never touching
the run's checkpoint; ``bn.failure_reasons`` reads them to confirm reader errors. A line::

    {"questionId": "q1", "hypothesis": "...", "score": 0.0, "judge": "contains", "answerer": "extractive",
     "evidenceIds": ["D1:3"], "source": "gold-evidence", "createdAt": "2026-..."}

``score`` is the run's primary judge's verdict on the new answer (null: unscored). A question answered again
later has a later line; the last line of a question is its re-answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_nb.errors import Problem
from bench_nb.runformat.jsonl import read_json_lines

REANSWER_FILE = "reanswer.jsonl"


@dataclass(frozen=True)
class Reanswer:
    """One question answered again from its gold evidence, and the run's primary judge's verdict on it."""

    question_id: str
    hypothesis: str
    score: float | None
    judge: str
    answerer: str
    evidence_ids: tuple[str, ...]
    source: str = "gold-evidence"
    created_at: str = ""

    def line(self) -> bytes:
        """The record as one line of ``reanswer.jsonl`` (newline included)."""
        record = {
            "questionId": self.question_id,
            "hypothesis": self.hypothesis,
            "score": self.score,
            "judge": self.judge,
            "answerer": self.answerer,
            "evidenceIds": list(self.evidence_ids),
            "source": self.source,
            "createdAt": self.created_at,
        }
        return msgspec.json.encode(record) + b"\n"


def _read(obj: Any) -> Reanswer:
    if not isinstance(obj, dict):
        raise TypeError("not a JSON object")
    score = obj.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise ValueError(f"score must be a number or null, not {score!r}")
    if score is not None and not 0 <= score <= 1:
        raise ValueError(f"score {score} is not in [0, 1]")
    return Reanswer(
        question_id=str(obj["questionId"]),
        hypothesis=str(obj.get("hypothesis") or ""),
        score=None if score is None else float(score),
        judge=str(obj.get("judge") or ""),
        answerer=str(obj.get("answerer") or ""),
        evidence_ids=tuple(str(e) for e in obj.get("evidenceIds") or ()),
        source=str(obj.get("source") or "gold-evidence"),
        created_at=str(obj.get("createdAt") or ""),
    )


def read_reanswers(run_dir: str | Path) -> tuple[dict[str, Reanswer], list[Problem]]:
    """The run's re-answers by question id (a question's last line wins), and the lines skipped (each a
    ``Problem`` naming the file and line). No file: none."""
    items, problems = read_json_lines(Path(run_dir) / REANSWER_FILE, _read)
    return {r.question_id: r for r in items}, problems
