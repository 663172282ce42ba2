"""Every judge's verdict per question, kept beside the run in ``judgments.jsonl``.

The checkpoint holds the primary judge's verdict where MemoryBench expects it (``phases.evaluate``); this
append-only file holds all verdicts of all judges (the primary one included), one JSON object a line:
``{"questionId", "judge", "score", "label", "explanation", "unscored", "at"}``, and for a graded verdict
(BEAM) ``publishedScore`` and ``items`` (each rubric item's grade). A later line for the same
(question, judge) replaces an earlier one when read, so re-judging appends and never rewrites.

Two readers: ``read_replicates`` reads line by line and names each bad line; ``read_plain_verdicts`` (what a
judgments frame reads first) checks every line at once and gives up, returning None, at the first line that
is not a plain verdict, so that the caller reads that file with ``read_replicates``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import msgspec

from bench_nb.errors import Problem
from bench_nb.records import Verdict
from bench_nb.runformat.format import now_iso
from bench_nb.runformat.jsonl import append_lines, decode_lines, read_json_lines

FILENAME = "judgments.jsonl"


def append_verdicts(
    run_dir: str | Path, verdicts: Iterable[tuple[str, Verdict]], *, replicate: int = 1
) -> int:
    """Append ``(question_id, verdict)`` pairs (all of judge replicate ``replicate``); returns how many lines
    were written (fsync'd)."""
    lines = verdict_lines(verdicts, replicate=replicate)
    append_lines(Path(run_dir) / FILENAME, lines)  # a damaged tail is repaired, a failed write undone
    return len(lines)


def verdict_lines(verdicts: Iterable[tuple[str, Verdict]], *, replicate: int = 1) -> list[str]:
    """The judgments.jsonl lines of ``(question_id, verdict)`` pairs of judge replicate ``replicate`` (for
    ``append_verdicts``, or a ``runformat.jsonl.GroupAppender`` on ``FILENAME``)."""
    lines = []
    now = now_iso()
    for qid, v in verdicts:
        record: dict[str, Any] = {
            "questionId": qid,
            "judge": v.judge,
            "score": v.score,
            "label": v.label,
            "explanation": v.explanation,
            "unscored": v.label == "unscored",
            "at": now,
        }
        if replicate != 1:
            record["replicate"] = replicate
        if v.graded:
            record["publishedScore"] = v.published_score
            if v.items:
                record["items"] = list(v.items)
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return lines


def read_verdicts(run_dir: str | Path) -> tuple[dict[tuple[str, str], dict[str, Any]], list[Problem]]:
    """Replicate 1 of every verdict, keyed by (question_id, judge), the last line winning; bad lines become
    problems (see ``read_replicates``)."""
    every, problems = read_replicates(run_dir)
    return {(q, j): rec for (q, j, r), rec in every.items() if r == 1}, problems


def read_replicates(run_dir: str | Path) -> tuple[dict[tuple[str, str, int], dict[str, Any]], list[Problem]]:
    """All verdicts keyed by (question_id, judge, replicate), the last line winning; bad lines become problems.

    A torn last line (a run killed mid-write) is reported and skipped, as is any line that is not a JSON
    object with ``questionId`` and ``judge`` (or not UTF-8), or whose ``replicate`` is not a whole number from
    1; the other lines still load (``runformat.jsonl.read_json_lines``).
    """
    items, problems = read_json_lines(Path(run_dir) / FILENAME, _keyed)
    return dict(items), problems


def _keyed(rec: Any) -> tuple[tuple[str, str, int], dict[str, Any]]:
    """A verdict line keyed by (question_id, judge, replicate)."""
    replicate = rec.get("replicate", 1)
    if not isinstance(replicate, int) or isinstance(replicate, bool) or replicate < 1:
        raise ValueError(f"replicate {replicate!r} is not a whole number from 1")
    return (str(rec["questionId"]), str(rec["judge"]), replicate), rec


class PlainVerdict(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A judgments.jsonl line as ``append_verdicts`` writes it, with the fields a judgments frame reads: the
    question id and judge strings, a score in [0, 1] or null, a string or null label and explanation, a bool
    or null ``unscored``, a whole-number ``replicate`` from 1 (default 1). The other fields it writes (``at``,
    ``publishedScore``, ``items``) are decoded as any JSON and not read; a line with a field beyond these is
    not plain: every field decoded, so that a line decodes here exactly when it decodes as JSON there
    (msgspec would skip an unknown field's value unchecked)."""

    questionId: str
    judge: str
    score: Annotated[float, msgspec.Meta(ge=0, le=1)] | None = None
    label: str | None = None
    explanation: str | None = None
    unscored: bool | None = None
    replicate: Annotated[int, msgspec.Meta(ge=1)] = 1
    at: Any = None
    publishedScore: Any = None
    items: Any = None


_PLAIN = msgspec.json.Decoder(PlainVerdict)


def read_plain_verdicts(run_dir: str | Path) -> dict[tuple[str, str, int], PlainVerdict] | None:
    """``read_replicates``' verdicts read at once, when every line is a plain verdict (``PlainVerdict``);
    None as soon as one is not (not JSON, not an object, a field missing or of another type, a score
    outside [0, 1]), with nothing reported: the caller then reads the file with ``read_replicates``.

    Each line is decoded straight into a ``PlainVerdict``, checked as it is decoded (not through a dict and a
    Python check per line); keys and the last-line-wins rule are those of ``read_replicates``.
    """
    try:
        verdicts = decode_lines(Path(run_dir) / FILENAME, _PLAIN)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return {(v.questionId, v.judge, v.replicate): v for v in verdicts}
