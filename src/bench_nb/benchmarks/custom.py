"""The custom benchmark format: bring your own conversations and questions (JSON or JSONL).

The format is described, with an example, in docs/benchmarks.md; ``bench_nb.benchmarks.custom_models`` holds
its pydantic models. A ``.jsonl`` file holds one record per line, each with a ``kind`` ("benchmark",
"conversation" or "question"); any other suffix is read as one JSON object. Errors name the file, the line
(JSONL) and the field; in lenient mode every good record still loads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic

from bench_nb.errors import DatasetError, Problem
from bench_nb.records import Benchmark, Haystack, Message, Question, Session
from bench_nb.taxonomy import normalize_question_type

from .custom_models import (
    CustomBenchmarkHeader,
    CustomConversation,
    CustomMessage,
    CustomQuestion,
    CustomSession,
    CustomType,
)
from .jsonfile import FieldError, read_json, report

_MODELS: dict[str, type[pydantic.BaseModel]] = {
    "benchmark": CustomBenchmarkHeader,
    "conversation": CustomConversation,
    "question": CustomQuestion,
}


def read_custom(path: Path, problems: list[Problem] | None = None) -> Benchmark:
    """Read a benchmark in the custom format (JSON, or JSONL when the name ends in ``.jsonl``).

    Args:
        problems: None to raise a DatasetError on the first problem; a list to load leniently (bad records
            are skipped and described there, good ones load).
    """
    records = _jsonl_records(path) if path.suffix.lower() == ".jsonl" else _json_records(path)
    header = CustomBenchmarkHeader()
    conversations: dict[str, tuple[str, CustomConversation]] = {}
    questions: list[tuple[str, CustomQuestion]] = []
    seen_header = False
    for where, kind, obj in records:
        if isinstance(obj, _Unreadable):
            report(problems, Problem(where, obj.message))
            continue
        model = _MODELS.get(kind)
        if model is None:
            report(
                problems, Problem(where, f"unknown kind {kind!r} (benchmark, conversation, question)", "kind")
            )
            continue
        try:
            record = model.model_validate(obj)
        except pydantic.ValidationError as err:
            for e in err.errors():
                qid = obj.get("id") if kind == "question" and isinstance(obj, dict) else None
                field = _loc(e["loc"])
                report(
                    problems, Problem(where, e["msg"], field or None, qid if isinstance(qid, str) else None)
                )
            continue
        if isinstance(record, CustomBenchmarkHeader):
            if seen_header:
                report(problems, Problem(where, "a second benchmark header", "kind"))
            header, seen_header = record, True
        elif isinstance(record, CustomConversation):
            if record.id in conversations:
                report(problems, Problem(where, f"duplicate conversation id {record.id!r}", "id"))
                continue
            conversations[record.id] = (where, record)
        elif isinstance(record, CustomQuestion):
            questions.append((where, record))
    haystacks = {}
    for cid, (where, conv) in conversations.items():
        try:
            haystacks[cid] = _haystack(conv)
        except FieldError as err:
            report(problems, Problem(where, err.message, err.field))
    out = _questions(questions, haystacks, problems)
    registry = {t: _type_entry(t, header.types[t]) for t in header.types}
    for q in out:
        registry.setdefault(q.question_type, _type_entry(q.question_type, CustomType()))
    return Benchmark(name=header.name, questions=tuple(out), haystacks=haystacks, type_registry=registry)


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _json_records(path: Path) -> Iterator[tuple[str, str, Any]]:
    data = read_json(path)
    where = str(path)
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: expected a JSON object with 'conversations' and 'questions'")
    unknown = set(data) - {"format", "name", "description", "types", "conversations", "questions"}
    if unknown:
        raise DatasetError(f"{where}: unknown top-level field(s) {sorted(unknown)}")
    yield where, "benchmark", {k: data[k] for k in ("format", "name", "description", "types") if k in data}
    for key, kind in (("conversations", "conversation"), ("questions", "question")):
        items = data.get(key)
        if not isinstance(items, list):
            raise DatasetError(f"{where} (field {key}): expected a list")
        for i, obj in enumerate(items):
            yield f"{where} ({key}[{i}])", kind, obj


def _jsonl_records(path: Path) -> Iterator[tuple[str, str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise DatasetError(f"{path}: cannot read the dataset: {err}") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except ValueError as err:
            yield where, "", _Unreadable(f"not valid JSON: {err}")
            continue
        if isinstance(obj, dict) and isinstance(obj.get("kind"), str):
            yield where, obj["kind"], {k: v for k, v in obj.items() if k != "kind"}
        else:
            yield where, "", _Unreadable("each line must be a JSON object with a 'kind'")


class _Unreadable:
    def __init__(self, message: str) -> None:
        self.message = message


def _haystack(conv: CustomConversation) -> Haystack:
    sessions = []
    seen: set[str] = set()
    for s, session in enumerate(conv.sessions):
        if session.id in seen:
            raise FieldError(
                f"sessions[{s}].id", f"duplicate session id {session.id!r} in conversation {conv.id}"
            )
        seen.add(session.id)
        messages = []
        for m, msg in enumerate(session.messages):
            mid = msg.id or f"{session.id}:{m + 1}"
            if mid in seen:
                raise FieldError(
                    f"sessions[{s}].messages[{m}].id", f"duplicate id {mid!r} in conversation {conv.id}"
                )
            seen.add(mid)
            messages.append(
                Message(
                    role=msg.role,
                    content=msg.content,
                    timestamp=msg.timestamp,
                    message_id=mid,
                    has_answer=msg.has_answer,
                )
            )
        date = session.date or next((m.timestamp for m in session.messages if m.timestamp), None)
        sessions.append(Session(session.id, date, tuple(messages), extra=dict(session.metadata)))
    return Haystack(haystack_id=conv.id, sessions=tuple(sessions))


def _questions(
    items: list[tuple[str, CustomQuestion]], haystacks: dict[str, Haystack], problems: list[Problem] | None
) -> list[Question]:
    ids_by_haystack: dict[str, set[str | None]] = {
        hid: {*(s.session_id for s in h.sessions), *(m.message_id for s in h.sessions for m in s.messages)}
        for hid, h in haystacks.items()
    }
    out: list[Question] = []
    seen: set[str] = set()
    for where, q in items:
        if q.id in seen:
            report(problems, Problem(where, "duplicate question id", "id", q.id))
            continue
        known = ids_by_haystack.get(q.conversation)
        if known is None:
            report(
                problems,
                Problem(where, f"no conversation {q.conversation!r} was loaded", "conversation", q.id),
            )
            continue
        missing = [e for e in q.evidence if e not in known]
        if missing:
            report(
                problems,
                Problem(where, f"{missing} name no message or session of {q.conversation}", "evidence", q.id),
            )
            continue
        norm = q.norm_type or normalize_question_type(q.type, question_id=q.id)
        answer = q.answer if isinstance(q.answer, str) else json.dumps(q.answer)
        if not answer.strip() and norm != "abstention":
            report(
                problems,
                Problem(where, "empty answer: give one, or type the question as abstention", "answer", q.id),
            )
            continue
        seen.add(q.id)
        out.append(
            Question(
                question_id=q.id,
                question=q.question,
                answer=answer,
                question_type=q.type,
                norm_type=norm,
                haystack_id=q.conversation,
                question_date=q.question_date,
                evidence_ids=tuple(q.evidence),
                category=q.category,
                extra=dict(q.metadata),
            )
        )
    return out


def _type_entry(type_id: str, t: CustomType) -> dict[str, str]:
    return {"id": type_id, "alias": t.alias or type_id, "description": t.description}


def write_custom(benchmark: Benchmark, path: str | Path) -> Path:
    """Write a Benchmark in the custom format (the inverse of ``read_custom``): JSONL when the name ends in
    ``.jsonl``, else one JSON object."""
    p = Path(path)
    header = CustomBenchmarkHeader(
        name=benchmark.name,
        types={
            k: CustomType(alias=v.get("alias"), description=v.get("description", ""))
            for k, v in benchmark.type_registry.items()
        },
    )
    doc = header.model_dump(mode="json", exclude_defaults=True)
    doc["conversations"] = [_dump_conversation(h) for h in benchmark.haystacks.values()]
    doc["questions"] = [_dump_question(q) for q in benchmark.questions]
    if p.suffix.lower() == ".jsonl":
        lines = [
            {"kind": "benchmark", **{k: v for k, v in doc.items() if k not in ("conversations", "questions")}}
        ]
        lines += [{"kind": "conversation", **c} for c in doc["conversations"]]
        lines += [{"kind": "question", **q} for q in doc["questions"]]
        p.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    else:
        p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return p


def _dump_conversation(h: Haystack) -> dict[str, Any]:
    conv = CustomConversation(
        id=h.haystack_id,
        sessions=[
            CustomSession(
                id=s.session_id,
                date=s.date,
                metadata=dict(s.extra),
                messages=[
                    CustomMessage(
                        id=m.message_id,
                        role=m.role,
                        content=m.content,
                        timestamp=m.timestamp,
                        has_answer=m.has_answer,
                    )
                    for m in s.messages
                ],
            )
            for s in h.sessions
        ],
    )
    return conv.model_dump(mode="json", exclude_defaults=True)


def _dump_question(q: Question) -> dict[str, Any]:
    model = CustomQuestion(
        id=q.question_id,
        conversation=q.haystack_id,
        question=q.question,
        answer=q.answer,
        type=q.question_type,
        norm_type=q.norm_type,  # type: ignore[arg-type]
        evidence=list(q.evidence_ids),
        question_date=q.question_date,
        category=q.category,
        metadata=dict(q.extra),
    )
    return model.model_dump(mode="json", exclude_defaults=True)
