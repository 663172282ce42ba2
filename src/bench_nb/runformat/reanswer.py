"""``reanswer.jsonl`` beside a run: its wrong answers answered again from the gold evidence.

``bench-nb reanswer RUN --from gold-evidence`` (``runner.reanswer``) writes one line per question, never touching
the run's checkpoint; ``bn.failure_reasons`` reads them to confirm reader errors. A line::

    {"questionId": "q1", "hypothesis": "...", "score": 0.0, "judge": "contains", "answerer": "extractive",
     "evidenceIds": ["D1:3"], "source": "gold-evidence", "createdAt": "2026-..."}

``score`` is the run's primary judge's verdict on the new answer (null: unscored). A question answered again
later has a later line; the last line of a question is its re-answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec

from bench_nb.errors import Problem
from bench_nb.runformat.jsonl import read_json_lines

REANSWER_FILE = "reanswer.jsonl"


class Reanswer(msgspec.Struct, frozen=True, rename="camel"):
    """One question answered again from its gold evidence, and the run's primary judge's verdict on it (a line
    of ``reanswer.jsonl``, its fields named in camelCase there)."""

    question_id: str
    hypothesis: str
    score: Annotated[float, msgspec.Meta(ge=0, le=1)] | None
    judge: str
    answerer: str
    evidence_ids: tuple[str, ...]
    source: str = "gold-evidence"
    created_at: str = ""

    def line(self) -> bytes:
        """The record as one line of ``reanswer.jsonl`` (newline included)."""
        return msgspec.json.encode(self) + b"\n"


def read_reanswers(run_dir: str | Path) -> tuple[dict[str, Reanswer], list[Problem]]:
    """The run's re-answers by question id (a question's last line wins), and the lines skipped (each a
    ``Problem`` naming the file, the line and the field at fault). No file: none."""
    items, problems = read_json_lines(
        Path(run_dir) / REANSWER_FILE, lambda obj: msgspec.convert(obj, Reanswer)
    )
    return {r.question_id: r for r in items}, problems
