"""BEAM (Tavakoli et al., "Beyond a Million Tokens: Benchmarking and Enhancing Long-Term Memory in LLMs").

A tier is a folder of chat folders, as in the paper's repository (``chats/<tier>/<N>/``)::

    <tier>/<N>/chat.json                                  the conversation: a list of batches
    <tier>/<N>/probing_questions/probing_questions.json   {ability: [question, ...]} for the ten abilities

Tiers: ``100K`` (the paper's "128K": 20 chats), ``500K`` (35), ``1M`` (35), ``10M`` (10). Decisions (see
docs/benchmarks.md):

- One Haystack per chat (``haystack_id = "<tier>-<N>"``), ingested once for all its questions; one Session per
  batch (``session_id = "<tier>-<N>-b<batch_number>"``, dated with the batch's time anchor when it has one);
  every message keeps its integer id as ``message_id`` (unique within the chat), and in ``Message.extra`` its
  turn number within the batch (``turn``), the dataset's ``"b,t"`` index and ``question_type`` when present.
  A message's own time anchor ("March-15-2024") becomes its ISO ``timestamp``; the raw string stays in
  ``extra["time_anchor"]``.
- Question ids ``<tier>-<N>-<ability>-<i>``; ``question_type`` is the ability, ``norm_type`` its normalised
  name (``bench_nb.taxonomy.BEAM_TO_NORM``); ``answer`` the ideal answer (its key varies by ability:
  ``ideal_response``, ``ideal_answer``, ``answer``, ``ideal_summary``, or ``expected_compliance`` for the
  instruction and preference abilities); ``extra["rubric"]`` the rubric items (for event ordering, the
  reference order); evidence ids the ``source_chat_ids`` (message ids), flattened.
- Files are pinned by sha256 per tier (``data/beam_pins.json``, computed from the repository's commit); a file
  the project could not see is unpinned and refused for download until it is pinned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from bench_nb.errors import DatasetError, Problem
from bench_nb.records import Benchmark, Haystack, Message, Question, Session
from bench_nb.taxonomy import BEAM_ABILITIES, BEAM_TO_NORM

from .jsonfile import read_json, report

TIERS: tuple[str, ...] = ("100K", "500K", "1M", "10M")
#: How a rubric item graded 0.5 counts: as 0.5 (``"float"``), or truncated to 0 as BEAM's own code does
#: (``"as-published"``); the judges' ``rubric_score`` and the metrics' ``beam_scores`` read it.
PartialCredit = Literal["float", "as-published"]
PARTIAL_CREDITS: tuple[PartialCredit, ...] = ("float", "as-published")
CHAT_FILE = "chat.json"
QUESTIONS_FILE = "probing_questions/probing_questions.json"
# Where each ability keeps its ideal answer, first key present wins.
_ANSWER_KEYS = ("ideal_response", "ideal_answer", "answer", "ideal_summary", "expected_compliance")

BEAM_TYPE_REGISTRY: dict[str, dict[str, str]] = {
    ability: {
        "id": ability,
        "alias": BEAM_TO_NORM[ability],
        "description": ability.replace("_", " ").capitalize(),
    }
    for ability in BEAM_ABILITIES
}


@dataclass(frozen=True)
class TierPins:
    """The pinned files of one tier: ``sha256`` by path inside the tier folder; ``unpinned``: files known to
    exist upstream whose hash the project could not compute (refused for download)."""

    tier: str
    chats: int
    sha256: dict[str, str]
    unpinned: tuple[str, ...]
    base_url: str
    commit: str
    repository: str

    def files(self) -> list[str]:
        """Every file of the tier, pinned or not, in chat order."""
        names = [*self.sha256, *self.unpinned]
        return sorted(names, key=lambda n: (int(n.split("/", 1)[0]), n))

    def url(self, relpath: str) -> str:
        """The download URL of ``relpath``, a file inside the tier folder, at the pinned commit."""
        return f"{self.base_url}/{self.tier}/{relpath}"


@cache
def _pins_file() -> dict[str, Any]:
    text = resources.files("bench_nb.benchmarks").joinpath("data", "beam_pins.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def tier_pins(tier: str) -> TierPins:
    """The pins of a tier (``100K``, ``500K``, ``1M``, ``10M``; case-insensitive).

    Raises:
        DatasetError: an unknown tier.
    """
    name = normalize_tier(tier)
    data = _pins_file()
    t = data["tiers"][name]
    return TierPins(
        tier=name,
        chats=int(t["chats"]),
        sha256=dict(t["sha256"]),
        unpinned=tuple(t["unpinned"]),
        base_url=str(data["base_url"]),
        commit=str(data["commit"]),
        repository=str(data["repository"]),
    )


def normalize_tier(tier: str) -> str:
    """``"100k"`` -> ``"100K"`` (``"128K"``, the paper's name for the first tier, is accepted too)."""
    key = tier.strip().upper()
    if key == "128K":
        key = "100K"
    if key not in TIERS:
        raise DatasetError(f"unknown BEAM tier {tier!r}; tiers: {', '.join(TIERS)}")
    return key


def parse_beam_date(text: str) -> str:
    """``"March-15-2024"`` -> ``"2024-03-15"``.

    Raises:
        ValueError: another format.
    """
    return datetime.strptime(text.strip(), "%B-%d-%Y").date().isoformat()


def chat_folders(root: Path) -> list[Path]:
    """The chat folders of a tier folder (numeric names), in numeric order."""
    if not root.is_dir():
        raise DatasetError(f"{root}: not a folder; a BEAM tier is a folder of chat folders (1/, 2/, ...)")
    folders = [p for p in root.iterdir() if p.is_dir() and p.name.isdigit()]
    if not folders:
        raise DatasetError(
            f"{root}: no chat folders (1/, 2/, ... each holding {CHAT_FILE} and {QUESTIONS_FILE})"
        )
    return sorted(folders, key=lambda p: int(p.name))


def folder_files(root: Path) -> list[str]:
    """The files of a local tier folder the reader reads: each chat folder's chat and questions, in numeric
    order."""
    return [
        f"{c.name}/{rel}"
        for c in chat_folders(root)
        for rel in (CHAT_FILE, QUESTIONS_FILE)
        if (c / rel).is_file()
    ]


def read_beam(path: Path, problems: list[Problem] | None = None, *, tier: str | None = None) -> Benchmark:
    """Read a BEAM tier folder.

    Args:
        path: the tier folder (``.../100K``), holding one folder per chat.
        problems: None to raise on the first problem; a list to load leniently (a chat whose files cannot be
            read and questions that cannot be read are skipped and described there).
        tier: the tier's name; default: the folder's name when it is a tier name, else ``100K``.

    Raises:
        DatasetError: not a tier folder, or (strict mode) a file or record that cannot be read.
    """
    root = Path(path)
    if tier is None:
        tier = root.name.upper() if root.name.upper() in TIERS else "100K"
    tier = normalize_tier(tier)
    questions: list[Question] = []
    haystacks: dict[str, Haystack] = {}
    for folder in chat_folders(root):
        hid = f"{tier}-{folder.name}"
        try:
            haystack = _haystack(hid, folder / CHAT_FILE, read_json(folder / CHAT_FILE))
            probing = read_json(folder / QUESTIONS_FILE)
            if not isinstance(probing, dict):
                raise DatasetError(f"{folder / QUESTIONS_FILE}: expected an object of abilities")
        except DatasetError as err:
            report(problems, Problem(str(folder), str(err), field=folder.name))
            continue
        haystacks[hid] = haystack
        for ability in BEAM_ABILITIES:
            items = probing.get(ability)
            if not isinstance(items, list):
                what = "no" if items is None else f"not a list of questions ({type(items).__name__}), so no"
                report(
                    problems,
                    Problem(str(folder / QUESTIONS_FILE), f"{what} {ability!r} questions", field=ability),
                )
                continue
            for i, item in enumerate(items):
                qid = f"{hid}-{ability}-{i}"
                try:
                    questions.append(_question(qid, hid, ability, item))
                except DatasetError as err:
                    report(problems, Problem(str(folder / QUESTIONS_FILE), str(err), f"{ability}[{i}]", qid))
    return Benchmark(
        name=f"beam-{tier.lower()}",
        questions=tuple(questions),
        haystacks=haystacks,
        type_registry=dict(BEAM_TYPE_REGISTRY),
    )


def _haystack(hid: str, file: Path, batches: Any) -> Haystack:
    if not isinstance(batches, list):
        raise DatasetError(f"{file}: expected a list of batches")
    sessions: list[Session] = []
    seen: set[str] = set()
    for b_index, batch in enumerate(batches):
        if not isinstance(batch, dict) or not isinstance(batch.get("turns"), list):
            raise DatasetError(f"{file}: batch {b_index} has no 'turns' list")
        number = batch.get("batch_number", b_index + 1)
        anchor = batch.get("time_anchor")
        messages: list[Message] = []
        for t_index, turn in enumerate(batch["turns"]):
            for m in turn if isinstance(turn, list) else [turn]:
                messages.append(_message(file, number, t_index, m, seen))
        date = _date(file, anchor) if anchor else None
        extra: dict[str, Any] = {"batch_number": number}
        if anchor:
            extra["time_anchor"] = anchor
        sessions.append(Session(f"{hid}-b{number}", date, tuple(messages), extra=extra))
    return Haystack(haystack_id=hid, sessions=tuple(sessions))


def _message(file: Path, batch: Any, turn: int, m: Any, seen: set[str]) -> Message:
    if not isinstance(m, dict) or "content" not in m or "id" not in m:
        raise DatasetError(f"{file}: batch {batch} turn {turn}: a message without 'id' or 'content'")
    mid = str(m["id"])
    if mid in seen:
        raise DatasetError(f"{file}: message id {mid} appears twice")
    seen.add(mid)
    extra: dict[str, Any] = {"batch": batch, "turn": turn}
    for key in ("index", "question_type", "time_anchor"):
        if m.get(key) is not None:
            extra[key] = m[key]
    anchor = m.get("time_anchor")
    return Message(
        role=str(m.get("role", "")),
        content=str(m["content"]),
        timestamp=_date(file, anchor) if anchor else None,
        message_id=mid,
        extra=extra,
    )


def _date(file: Path, anchor: Any) -> str:
    try:
        return parse_beam_date(str(anchor))
    except ValueError:
        raise DatasetError(f"{file}: time anchor {anchor!r} is not like 'March-15-2024'") from None


def _question(qid: str, hid: str, ability: str, item: Any) -> Question:
    if not isinstance(item, dict) or not isinstance(item.get("question"), str):
        raise DatasetError(f"question {qid}: no 'question' text")
    rubric = item.get("rubric")
    if not isinstance(rubric, list) or not rubric or not all(isinstance(r, str) for r in rubric):
        raise DatasetError(f"question {qid}: 'rubric' must be a non-empty list of strings")
    answer = next((item[k] for k in _ANSWER_KEYS if isinstance(item.get(k), str)), "")
    extra = {k: v for k, v in item.items() if k not in ("question", "rubric")}
    extra["rubric"] = list(rubric)
    extra["ability"] = ability
    return Question(
        question_id=qid,
        question=item["question"],
        answer=answer,
        question_type=ability,
        norm_type=BEAM_TO_NORM[ability],
        haystack_id=hid,
        evidence_ids=_evidence(item.get("source_chat_ids")),
        extra=extra,
    )


def _evidence(value: Any) -> tuple[str, ...]:
    """``source_chat_ids``, a list or an object of lists of message ids, flattened in order, deduplicated."""
    ids: list[str] = []
    stack = list(value.values()) if isinstance(value, dict) else [value]
    for v in stack:
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, int | str) and not isinstance(x, bool) and str(x) not in ids:
                ids.append(str(x))
    return tuple(ids)
