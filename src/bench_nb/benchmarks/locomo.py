"""LoCoMo (Maharana et al., ACL 2024) with its true categories.

One Haystack per conversation (``haystack_id = sample_id``); question ids ``<sample_id>-q<index>`` as in
MemoryBench, so runs of both tools line up question for question. Decisions (see docs/benchmarks.md):

- Categories are the paper's: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
- Category 5 is unanswerable: answer ``""``; the dataset's ``adversarial_answer`` (and a stray ``answer``, which
  two items have) are kept in ``extra``.
- Session dates ("1:56 pm on 8 May, 2023") become naive ISO-8601 ("2023-05-08T13:56:00"; the dataset gives no
  time zone); the raw string stays in ``Session.extra["date_raw"]``.
- LoCoMo has no question date: a question is dated with its conversation's last session (the latest moment the
  conversation knows), and ``extra["question_date_source"] = "last_session"`` says so.
- Evidence dia_ids are normalised ("D8:6; D9:17" -> two ids, "D:11:26" -> "D11:26", "D30:05" -> "D30:5")
  and ids naming no turn of the conversation (a bare "D", "D10:19" in conv-42) are dropped, so retrieval
  metrics count only reachable evidence; the dataset's list is kept in ``extra["evidence_raw"]`` whenever it
  changed.
- A turn that shares an image carries the image's caption in its text: "... [shares a photo: <caption>]".
- Date keys of sessions that have no turns (conv-26 has 16) are ignored.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from bench_nb.errors import DatasetError, Problem
from bench_nb.records import Benchmark, Haystack, Message, Question, Session
from bench_nb.taxonomy import LOCOMO_CATEGORIES, locomo_norm_type

from .jsonfile import read_json, report

# The ten conversations of locomo10.json in file order (the pinned file, sha256 79fa87e9...): harnesses that
# number conversations 0-9 (EverMemOS's pipeline, the public LoCoMo audit) mean these.
LOCOMO_SAMPLE_IDS: tuple[str, ...] = (
    "conv-26",
    "conv-30",
    "conv-41",
    "conv-42",
    "conv-43",
    "conv-44",
    "conv-47",
    "conv-48",
    "conv-49",
    "conv-50",
)
_AUDIT_ID = re.compile(r"^locomo_(\d+)_qa(\d+)$")
_HAYSTACK = re.compile(r"^(?P<hay>.+)-q\d+$|^(?P<numbered>locomo_\d+)_qa\d+$")


def locomo_haystack(question_id: str) -> str | None:
    """The conversation a LoCoMo question id names: ``conv-26-q3`` (bench_nb, MemoryBench) -> ``conv-26``,
    ``locomo_0_qa3`` (the EverMemOS pipeline) -> ``locomo_0``; None for another id."""
    m = _HAYSTACK.match(question_id)
    return (m["numbered"] or m["hay"]) if m else None


def locomo_id_from_numbered(question_id: str) -> str | None:
    """``locomo_<conversation 0-9>_qa<index>`` (EverMemOS, the LoCoMo audit) as bench_nb's ``conv-26-q<index>``;
    None when it is not of that form or the conversation number is not 0-9."""
    m = _AUDIT_ID.match(question_id)
    if m is None or int(m.group(1)) >= len(LOCOMO_SAMPLE_IDS):
        return None
    return f"{LOCOMO_SAMPLE_IDS[int(m.group(1))]}-q{int(m.group(2))}"


# questionTypeRegistry in MemoryBench's shape, with the true categories' names, in category-id order
# (MemoryBench's own, under its wrong labels, is ``runformat.dataset.MEMORYBENCH_LOCOMO_TYPE_REGISTRY``).
LOCOMO_TYPE_REGISTRY: dict[str, dict[str, str]] = {
    "multi-hop": {"id": "multi-hop", "alias": "multi", "description": "Multi-hop reasoning across sessions"},
    "temporal": {"id": "temporal", "alias": "temporal", "description": "Temporal reasoning"},
    "open-domain": {
        "id": "open-domain",
        "alias": "open",
        "description": "Open-domain: the conversation plus commonsense or world knowledge",
    },
    "single-hop": {"id": "single-hop", "alias": "single", "description": "Single-hop fact recall"},
    "adversarial": {"id": "adversarial", "alias": "adversarial", "description": "Adversarial (unanswerable)"},
}

_MONTHS = {
    m: i
    for i, m in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}
_DATE = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*", re.IGNORECASE
)
_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?(\d+):0*(\d+)")


def parse_locomo_date(text: str) -> str:
    """LoCoMo's "1:56 pm on 8 May, 2023" as ISO text, "2023-05-08T13:56:00" (naive: the dataset gives no time zone).

    Raises:
        ValueError: the text is not in LoCoMo's format.
    """
    m = _DATE.fullmatch(text)
    month = _MONTHS.get(m.group(5).lower()) if m else None
    if m is None or month is None:
        raise ValueError(f"not a LoCoMo date: {text!r}")
    hour, minute = int(m.group(1)), int(m.group(2))
    if not (1 <= hour <= 12 and minute < 60):
        raise ValueError(f"not a LoCoMo date: {text!r}")
    hour = hour % 12 + (12 if m.group(3).lower() == "pm" else 0)
    try:
        return datetime(int(m.group(6)), month, int(m.group(4)), hour, minute).isoformat()
    except ValueError as err:
        raise ValueError(f"not a LoCoMo date: {text!r} ({err})") from None


def normalize_evidence(raw: list[Any]) -> tuple[str, ...]:
    """Split and repair LoCoMo's evidence dia_ids; ids that name no turn shape (a bare "D") are dropped."""
    ids: list[str] = []
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item)):
            m = _DIA_ID.fullmatch(piece)
            if m:
                ids.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return tuple(ids)


def read_locomo(path: Path, problems: list[Problem] | None = None) -> Benchmark:
    """Read ``locomo10.json`` (or a file of the same shape) into a Benchmark.

    Args:
        problems: None to raise on the first problem; a list to load leniently (bad samples and questions are
            skipped and described there).
    """
    data = read_json(path)
    if not isinstance(data, list) or not data or not all(isinstance(s, dict) for s in data):
        raise DatasetError(f"{path}: expected a non-empty JSON list of LoCoMo samples (objects with 'qa')")
    haystacks: dict[str, Haystack] = {}
    questions: list[Question] = []
    for s_index, sample in enumerate(data):
        sample_id = sample.get("sample_id")
        if not isinstance(sample_id, str) or not sample_id:
            report(problems, Problem(str(path), f"sample {s_index} has no sample_id", field="sample_id"))
            continue
        try:
            haystack = _haystack(sample_id, sample.get("conversation"))
        except DatasetError as err:
            report(problems, Problem(str(path), str(err), field=f"{sample_id}.conversation"))
            continue
        haystacks[sample_id] = haystack
        qa = sample.get("qa")
        if not isinstance(qa, list):
            report(
                problems, Problem(str(path), f"sample {sample_id} has no 'qa' list", field=f"{sample_id}.qa")
            )
            continue
        for i, item in enumerate(qa):
            qid = f"{sample_id}-q{i}"
            try:
                questions.append(_question(qid, sample_id, item, haystack.sessions))
            except DatasetError as err:
                report(problems, Problem(str(path), str(err), field=f"{sample_id}.qa[{i}]", question_id=qid))
    return Benchmark(
        name="locomo", questions=tuple(questions), haystacks=haystacks, type_registry=LOCOMO_TYPE_REGISTRY
    )


def _haystack(sample_id: str, conv: Any) -> Haystack:
    if not isinstance(conv, dict):
        raise DatasetError(f"sample {sample_id} has no 'conversation' object")
    numbered = sorted(
        (int(m.group(1)), key)
        for key in conv
        if (m := _SESSION_KEY.fullmatch(key)) and isinstance(conv[key], list) and conv[key]
    )
    sessions: list[Session] = []
    for n, key in numbered:
        session_id = f"{sample_id}-{key}"
        raw_date = conv.get(f"{key}_date_time")
        date = None
        if raw_date is not None:
            try:
                date = parse_locomo_date(str(raw_date))
            except ValueError as err:
                raise DatasetError(f"sample {sample_id}, field {key}_date_time: {err}") from None
        messages = []
        for t, turn in enumerate(conv[key]):
            if not isinstance(turn, dict) or "text" not in turn or "speaker" not in turn:
                raise DatasetError(f"sample {sample_id}, {key}[{t}]: a turn needs 'speaker' and 'text'")
            text = str(turn["text"])
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]"
            messages.append(
                Message(
                    role=str(turn["speaker"]), content=text, message_id=turn.get("dia_id") or f"D{n}:{t + 1}"
                )
            )
        extra = {"date_raw": str(raw_date)} if raw_date is not None else {}
        sessions.append(Session(session_id=session_id, date=date, messages=tuple(messages), extra=extra))
    return Haystack(haystack_id=sample_id, sessions=tuple(sessions))


def _question(qid: str, sample_id: str, item: Any, sessions: tuple[Session, ...]) -> Question:
    last = sessions[-1] if sessions else None
    if not isinstance(item, dict):
        raise DatasetError(f"{qid}: a qa item must be an object")
    category = item.get("category")
    if category not in LOCOMO_CATEGORIES:
        raise DatasetError(f"{qid}: unknown category {category!r} (expected 1-5)")
    if not isinstance(item.get("question"), str):
        raise DatasetError(f"{qid}: field 'question' is missing or not a string")
    raw_evidence = item.get("evidence") or []
    if not isinstance(raw_evidence, list):
        raise DatasetError(f"{qid}: field 'evidence' must be a list of dia_ids")
    known = {m.message_id for s in sessions for m in s.messages}
    evidence = tuple(e for e in normalize_evidence(raw_evidence) if e in known)
    extra: dict[str, Any] = {"question_date_source": "last_session"}
    if list(evidence) != raw_evidence:
        extra["evidence_raw"] = list(raw_evidence)
    if last is not None and "date_raw" in last.extra:
        extra["question_date_raw"] = last.extra["date_raw"]
    if category == 5:
        answer = ""
        if "adversarial_answer" in item:
            extra["adversarial_answer"] = _text(item["adversarial_answer"])
        if "answer" in item:
            extra["answer_raw"] = _text(item["answer"])
    elif "answer" not in item:
        raise DatasetError(f"{qid}: field 'answer' is missing (category {category})")
    else:
        answer = _text(item["answer"])
    name = LOCOMO_CATEGORIES[category]
    return Question(
        question_id=qid,
        question=item["question"],
        answer=answer,
        question_type=name,
        norm_type=locomo_norm_type(category),
        haystack_id=sample_id,
        question_date=last.date if last else None,
        evidence_ids=evidence,
        category=category,
        extra=extra,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
