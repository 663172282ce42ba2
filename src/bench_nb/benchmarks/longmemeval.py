"""LongMemEval (Wu et al., ICLR 2025): the oracle, S and M splits share one shape and one reader.

One Haystack per question (``haystack_id = question_id``) holding its sessions in haystack order, each dated.
Decisions (see docs/benchmarks.md):

- ``question_date`` and session dates ("2023/04/10 (Mon) 23:07") become naive ISO-8601
  ("2023-04-10T23:07:00"); the raw strings stay in ``Question.extra["question_date_raw"]`` and
  ``Session.extra["date_raw"]``.
- ``question_type`` stays the dataset's type; an id ending in ``_abs`` makes ``norm_type`` "abstention".
- The answer (an integer for 32 oracle questions) becomes text.
- ``answer_session_ids`` become ``evidence_ids``; ``has_answer`` stays on each message; a message's id is
  ``<session_id>:<turn number from 1>``.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from bench_nb.errors import DatasetError, Problem
from bench_nb.records import Benchmark, Haystack, Message, Question, Session
from bench_nb.taxonomy import LONGMEMEVAL_TYPE_REGISTRY, normalize_question_type

from .jsonfile import FieldError, read_json, report

_DATE = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]{3}\))?\s*(?:(\d{1,2}):(\d{2}))?\s*")


def parse_longmemeval_date(text: str) -> str:
    """LongMemEval's "2023/04/10 (Mon) 23:07" as ISO text, "2023-04-10T23:07:00" (naive; a date without a time keeps 00:00).

    Raises:
        ValueError: the text is not in LongMemEval's format or names no real date.
    """
    m = _DATE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a LongMemEval date: {text!r}")
    y, mo, d, h, mi = (int(g) if g else 0 for g in m.groups())
    try:
        return datetime(y, mo, d, h, mi).isoformat()
    except ValueError as err:
        raise ValueError(f"not a LongMemEval date: {text!r} ({err})") from None


def read_longmemeval(
    path: Path, problems: list[Problem] | None = None, *, name: str = "longmemeval"
) -> Benchmark:
    """Read a LongMemEval file (oracle, S or M) into a Benchmark.

    Args:
        problems: None to raise on the first problem; a list to load leniently (bad questions are skipped and
            described there).
        name: the benchmark name to record ("longmemeval", "longmemeval-s", "longmemeval-m").
    """
    data = read_json(path)
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{path}: expected a non-empty JSON list of LongMemEval questions")
    questions: list[Question] = []
    haystacks: dict[str, Haystack] = {}
    for index, item in enumerate(data):
        qid = item.get("question_id") if isinstance(item, dict) else None
        if not isinstance(qid, str) or not qid:
            report(
                problems,
                Problem(str(path), f"item {index} has no question_id", field=f"[{index}].question_id"),
            )
            continue
        if qid in haystacks:
            report(
                problems, Problem(str(path), "duplicate question_id", field="question_id", question_id=qid)
            )
            continue
        try:
            question, haystack = _item(qid, item)
        except FieldError as err:
            report(problems, Problem(str(path), err.message, field=err.field, question_id=qid))
            continue
        questions.append(question)
        haystacks[qid] = haystack
    return Benchmark(
        name=name, questions=tuple(questions), haystacks=haystacks, type_registry=LONGMEMEVAL_TYPE_REGISTRY
    )


def _date(value: Any, field: str) -> str:
    try:
        return parse_longmemeval_date(str(value))
    except ValueError as err:
        raise FieldError(field, str(err)) from None


def _item(qid: str, item: dict[str, Any]) -> tuple[Question, Haystack]:
    for key, kind in (("question", str), ("question_type", str), ("haystack_sessions", list)):
        if not isinstance(item.get(key), kind):
            raise FieldError(key, f"missing or not a {kind.__name__}")
    if "answer" not in item:
        raise FieldError("answer", "missing")
    session_ids = item.get("haystack_session_ids") or []
    dates = item.get("haystack_dates") or []
    raw_sessions = item["haystack_sessions"]
    if len(session_ids) != len(raw_sessions) or len(dates) != len(raw_sessions):
        raise FieldError(
            "haystack_session_ids",
            f"{len(raw_sessions)} sessions but {len(session_ids)} session ids and {len(dates)} dates",
        )
    sessions = []
    for s, (sid, raw_date, turns) in enumerate(zip(session_ids, dates, raw_sessions, strict=True)):
        if not isinstance(turns, list):
            raise FieldError(f"haystack_sessions[{s}]", "a session must be a list of turns")
        messages = []
        for t, turn in enumerate(turns):
            if not isinstance(turn, dict) or "role" not in turn or "content" not in turn:
                raise FieldError(f"haystack_sessions[{s}][{t}]", "a turn needs 'role' and 'content'")
            messages.append(
                Message(
                    role=str(turn["role"]),
                    content=str(turn["content"]),
                    message_id=f"{sid}:{t + 1}",
                    has_answer=bool(turn.get("has_answer", False)),
                )
            )
        sessions.append(
            Session(
                session_id=str(sid),
                date=_date(raw_date, f"haystack_dates[{s}]"),
                messages=tuple(messages),
                extra={"date_raw": str(raw_date)},
            )
        )
    extra: dict[str, Any] = {}
    question_date = None
    if item.get("question_date") is not None:
        question_date = _date(item["question_date"], "question_date")
        extra["question_date_raw"] = str(item["question_date"])
    answer = item["answer"]
    if not isinstance(answer, str):
        extra["answer_raw"] = answer
    qtype = item["question_type"]
    question = Question(
        question_id=qid,
        question=item["question"],
        answer=answer if isinstance(answer, str) else str(answer),
        question_type=qtype,
        norm_type=normalize_question_type(qtype, question_id=qid),
        haystack_id=qid,
        question_date=question_date,
        evidence_ids=tuple(str(x) for x in item.get("answer_session_ids") or ()),
        extra=extra,
    )
    return question, Haystack(haystack_id=qid, sessions=tuple(sessions))
