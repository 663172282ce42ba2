"""Every judge's verdict per question, kept beside the run in ``judgments.jsonl``.

The checkpoint holds the primary judge's verdict where MemoryBench expects it (``phases.evaluate``); this
append-only file holds all verdicts of all judges (the primary one included), one JSON object a line:
``{"questionId", "judge", "score", "label", "explanation", "unscored", "at"}``. A later line for the same
(question, judge) replaces an earlier one when read, so re-judging appends and never rewrites.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_nb.errors import Problem
from bench_nb.records import Verdict

FILENAME = "judgments.jsonl"


def append_verdicts(run_dir: str | Path, verdicts: Iterable[tuple[str, Verdict]]) -> int:
    """Append ``(question_id, verdict)`` pairs; returns how many lines were written (fsync'd)."""
    lines = []
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    for qid, v in verdicts:
        record = {
            "questionId": qid,
            "judge": v.judge,
            "score": v.score,
            "label": v.label,
            "explanation": v.explanation,
            "unscored": v.label == "unscored",
            "at": now,
        }
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    if not lines:
        return 0
    path = Path(run_dir) / FILENAME
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines))
        fh.flush()
        os.fsync(fh.fileno())
    return len(lines)


def read_verdicts(run_dir: str | Path) -> tuple[dict[tuple[str, str], dict[str, Any]], list[Problem]]:
    """All verdicts keyed by (question_id, judge), the last line winning; bad lines become problems.

    A torn last line (a run killed mid-write) is reported and skipped.
    """
    path = Path(run_dir) / FILENAME
    out: dict[tuple[str, str], dict[str, Any]] = {}
    problems: list[Problem] = []
    if not path.is_file():
        return out, problems
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                key = (str(rec["questionId"]), str(rec["judge"]))
            except (ValueError, KeyError, TypeError) as err:
                problems.append(Problem(str(path), f"line {n} skipped: {err}", field=f"line {n}"))
                continue
            out[key] = rec
    return out, problems
