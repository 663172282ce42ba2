"""Answers whose grade is known in advance, to audit a judge: wrong ones (its false-positive rate) and right
ones (its false-negative rate). Offline and seeded: the same questions and seed give the same answers.

Known wrong (``WRONG_GENERATORS``):

- ``specific``: specific but wrong, built from the gold answer so it looks right: a date shifted (``7 May
  2023`` becomes ``19 June 2023``, a year moved by one to three), a number changed (``three`` becomes
  ``five``, ``12`` becomes ``15``), a name swapped for another name from the same haystack, the gold's last
  content word swapped for a word of another answer of the same type (``voice chat`` becomes ``voice
  poetry``), else the gold answer of another question of the same type (same haystack first, on the same
  topic first, about the same length) that neither contains this gold nor is contained in it.
- ``vague``: vague but topical: the question's own topic words, without any word of the gold answer
  ("It came up when they talked about Melanie, plate, pottery and class.").
- ``dont-know``: "I don't know." on every answerable question (on unanswerable ones it is the right
  answer, so it goes to the known-correct side instead).

Known correct (``CORRECT_GENERATORS``):

- ``paraphrase``: the gold answer reworded without changing its content: a date written in another format
  (``7 May 2023`` as ``May 7, 2023``), a list in another order, or the answer inside a short sentence; on an
  unanswerable question, an abstention ("That is not mentioned in the conversations.").

Abstention questions (no gold answer) get a ``specific`` wrong answer (another question's gold: a confident
answer to an unanswerable question is wrong) and an abstaining ``paraphrase``; ``vague`` and ``dont-know``
skip them. Each generated answer records how it was made (``how``), so a reader can check it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from bench_nb.providers.query import STOP_WORDS
from bench_nb.records import Question
from bench_nb.registry import did_you_mean

Kind = Literal["wrong", "correct"]
WRONG_GENERATORS: tuple[str, ...] = ("specific", "vague", "dont-know")
CORRECT_GENERATORS: tuple[str, ...] = ("paraphrase",)
GENERATORS: tuple[str, ...] = WRONG_GENERATORS + CORRECT_GENERATORS
DONT_KNOW = "I don't know."
ABSTAIN = "That is not mentioned in the conversations."


@dataclass(frozen=True)
class AuditAnswer:
    """One generated answer: its question, generator, whether it is known wrong or correct, and how."""

    question_id: str
    generator: str
    kind: Kind
    answer: str
    how: str


def kind_of(generator: str) -> Kind:
    """``"wrong"`` for the wrong-answer generators, ``"correct"`` for the paraphrases."""
    if generator in WRONG_GENERATORS:
        return "wrong"
    if generator in CORRECT_GENERATORS:
        return "correct"
    raise ValueError(
        f"unknown audit generator {generator!r}{did_you_mean(generator, GENERATORS)}; known: {', '.join(GENERATORS)}"
    )


# --- words, names, dates, numbers ------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# Word lists packed several to a line.
# fmt: off
_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December"
]
_MONTH_INDEX = {m.lower(): i for i, m in enumerate(_MONTHS, start=1)}
_MONTH_INDEX.update({m[:3].lower(): i for i, m in enumerate(_MONTHS, start=1)})
_MONTH_RE = "|".join(sorted(_MONTH_INDEX, key=len, reverse=True))
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})\s*({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(
    rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE
)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_MONTH_ONLY = re.compile(rf"\b({'|'.join(_MONTHS)})\b")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_NUMBER_WORDS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"
]
_NUMBER_WORD_RE = re.compile(rf"\b({'|'.join(_NUMBER_WORDS)})\b", re.IGNORECASE)
_WEEKDAYS = frozenset(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])
_NOT_NAMES = STOP_WORDS | frozenset(_MONTH_INDEX) | _WEEKDAYS | frozenset([
    "i", "im", "ive", "ill", "id", "yes", "no", "oh", "hey", "hi", "hello", "wow", "thanks", "thank", "okay",
    "ok", "yeah", "sure", "well", "so", "and", "but", "the"
])
# fmt: on


# The shared STOP_WORDS, contractions kept whole: the words a generated answer must share with, or avoid from, the gold.
def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` that are not English stop words."""
    return {w.casefold() for w in _WORD.findall(text) if w.casefold() not in STOP_WORDS}


def haystack_names(texts: Iterable[str]) -> list[str]:
    """Capitalised words used as names in ``texts``: capitalised at least twice, never sentence-initial
    only, not a stop word, month or weekday; most frequent first."""
    counts: dict[str, int] = {}
    for text in texts:
        for m in re.finditer(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b", text):
            word = m.group(1)
            if word.lower() not in _NOT_NAMES:
                counts[word] = counts.get(word, 0) + 1
    return [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= 2]


def _keep_case(new: str, old: str) -> str:
    return new.capitalize() if old[:1].isupper() else new


def _shift_date(text: str, rng: random.Random) -> tuple[str, str] | None:
    """The first full date, month-year or year in ``text`` moved; None when there is none."""
    days = rng.choice((-1, 1)) * rng.randint(9, 75)
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy"), (_ISO, "iso")):
        m = pattern.search(text)
        if m is None:
            continue
        try:
            if order == "dmy":
                d = date(int(m.group(3)), _MONTH_INDEX[m.group(2).lower()], int(m.group(1)))
            elif order == "mdy":
                d = date(int(m.group(3)), _MONTH_INDEX[m.group(1).lower()], int(m.group(2)))
            else:
                d = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except (ValueError, KeyError):
            continue
        s = d + timedelta(days=days)
        if order == "dmy":
            new = f"{s.day} {_MONTHS[s.month - 1]} {s.year}"
        elif order == "mdy":
            new = f"{_MONTHS[s.month - 1]} {s.day}, {s.year}"
        else:
            new = s.isoformat()
        return text[: m.start()] + new + text[m.end() :], f"date shifted: {m.group(0)} -> {new}"
    m = _MONTH_YEAR.search(text)
    if m is not None:
        month = _MONTH_INDEX[m.group(1).lower()]
        step = rng.choice((-3, -2, -1, 1, 2, 3))
        k = (int(m.group(2)) * 12 + month - 1) + step
        new = f"{_MONTHS[k % 12]} {k // 12}"
        return text[: m.start()] + new + text[m.end() :], f"month shifted: {m.group(0)} -> {new}"
    m = _YEAR.search(text)
    if m is not None:
        new = str(int(m.group(1)) + rng.choice((-3, -2, -1, 1, 2, 3)))
        return text[: m.start()] + new + text[m.end() :], f"year shifted: {m.group(0)} -> {new}"
    m = _MONTH_ONLY.search(text)
    if m is not None:
        month = _MONTH_INDEX[m.group(1).lower()]
        new = _MONTHS[(month - 1 + rng.choice((-3, -2, -1, 1, 2, 3))) % 12]
        return text[: m.start()] + new + text[m.end() :], f"month changed: {m.group(0)} -> {new}"
    return None


def _change_number(text: str, rng: random.Random) -> tuple[str, str] | None:
    m = _NUMBER.search(text)
    if m is not None:
        old = m.group(0)
        value = float(old)
        delta = rng.choice((-1, 1)) * max(1, round(abs(value) * rng.uniform(0.2, 0.6)))
        new_value = value + delta if value + delta >= 0 else value + abs(delta)
        new = f"{new_value:g}" if "." in old else str(int(new_value))
        return re.sub(rf"\b{re.escape(old)}\b", new, text), f"number changed: {old} -> {new}"
    m = _NUMBER_WORD_RE.search(text)
    if m is not None:
        old = m.group(1)
        i = _NUMBER_WORDS.index(old.lower())
        choices = [w for j, w in enumerate(_NUMBER_WORDS) if j != i and abs(j - i) <= 3 and j > 0]
        new = rng.choice(choices)
        # every occurrence ("one-on-one" becomes "three-on-three"), so the old number is gone
        changed = _NUMBER_WORD_RE.sub(
            lambda x: _keep_case(new, x.group(1)) if x.group(1).lower() == old.lower() else x.group(1), text
        )
        return changed, f"number changed: {old} -> {new}"
    return None


def _swap_name(text: str, avoid: str, names: Sequence[str], rng: random.Random) -> tuple[str, str] | None:
    """Replace a name of ``text`` with another of ``names`` that appears neither in it nor in ``avoid``."""
    present = [n for n in names if re.search(rf"\b{re.escape(n)}\b", text)]
    if not present:
        return None
    old = present[0]
    others = [n for n in names if n not in text and n not in avoid]
    if not others:
        return None
    new = rng.choice(others[:12])
    return re.sub(rf"\b{re.escape(old)}\b", new, text), f"name swapped: {old} -> {new}"


class _Pool:
    """The answers other questions give, by type and haystack, with their content words (computed once)."""

    def __init__(self, questions: Sequence[Question]) -> None:
        self.items = [(q, content_words(q.answer)) for q in questions if q.answer.strip()]
        self.by_key: dict[tuple[str | None, str | None], list[tuple[Question, set[str]]]] = {}
        for q, words in self.items:
            for key in (
                (q.norm_type, q.haystack_id),
                (q.norm_type, None),
                (None, q.haystack_id),
                (None, None),
            ):
                self.by_key.setdefault(key, []).append((q, words))

    def candidates(self, question: Question, *, same_haystack: bool) -> list[tuple[Question, set[str]]]:
        """Answers of the same type (any type for an unanswerable question), of the same haystack or of
        any, that neither hold every content word of this gold nor have all theirs in it."""
        key = (
            None if question.is_abstention else question.norm_type,
            question.haystack_id if same_haystack else None,
        )
        gold = content_words(question.answer)
        return [
            (q, w)
            for q, w in self.by_key.get(key, [])
            if q.question_id != question.question_id and not (gold and (gold <= w or w <= gold))
        ]


def _swap_word(question: Question, pool: _Pool, rng: random.Random) -> tuple[str, str] | None:
    """The gold's last content word replaced by a content word of another answer of the same type (same
    haystack first), when the gold has two content words or more."""
    gold = question.answer.strip()
    words = [w for w in _WORD.findall(gold) if w.casefold() not in STOP_WORDS]
    if len(words) < 2:
        return None
    avoid = content_words(gold) | content_words(question.question)
    same = pool.candidates(question, same_haystack=True) or pool.candidates(question, same_haystack=False)
    choices = sorted({w for _, ws in same for w in ws if w not in avoid and len(w) > 2})
    if not choices:
        return None
    old, new = words[-1], rng.choice(choices)
    # every occurrence of the word, so that it is gone from the answer
    text = re.sub(rf"\b{re.escape(old)}\b", lambda m: _keep_case(new, m.group(0)), gold, flags=re.IGNORECASE)
    return text, f"word swapped: {old} -> {new}"


def _other_answer(question: Question, pool: _Pool, rng: random.Random) -> tuple[str, str] | None:
    """The gold answer of another question of the same type (any type for an unanswerable question), same
    haystack first, then sharing a content word with the question or gold (plausible), then of about the
    same length; never one that contains this gold or is contained in it."""
    topic = content_words(question.answer) | content_words(question.question)
    length = max(1, len(question.answer.split()))
    candidates = pool.candidates(question, same_haystack=True) or pool.candidates(
        question, same_haystack=False
    )
    if not candidates:
        return None

    def rank(qw: tuple[Question, set[str]]) -> tuple[int, float]:
        q, words = qw
        n = max(1, len(q.answer.split()))
        return (not (words & topic), abs(n - length) / max(n, length))

    ranked = sorted(candidates, key=rank)
    best = rank(ranked[0])
    close = [qw for qw in ranked[:40] if rank(qw)[0] == best[0] and rank(qw)[1] <= best[1] + 0.25]
    pick = rng.choice(close)[0]
    return pick.answer.strip(), f"the answer of question {pick.question_id}"


# --- the generators ---------------------------------------------------------------------------------------


def specific_wrong(
    question: Question, pool: Sequence[Question] | _Pool, names: Sequence[str], rng: random.Random
) -> AuditAnswer | None:
    """A specific but wrong answer (see the module docstring); None when none can be made.

    ``pool``: the questions whose answers may be borrowed (or a prepared ``_Pool`` of them).
    """
    answers = pool if isinstance(pool, _Pool) else _Pool(pool)
    made: tuple[str, str] | None = None
    if not question.is_abstention and question.answer.strip():
        gold = question.answer.strip()
        made = (
            _shift_date(gold, rng)
            or _change_number(gold, rng)
            or _swap_name(gold, question.question, names, rng)
            or _swap_word(question, answers, rng)
        )
    made = made or _other_answer(question, answers, rng)
    if made is None:
        return None
    return AuditAnswer(question.question_id, "specific", "wrong", made[0], made[1])


# fmt: off
_QUESTION_WORDS = frozenset([
    "what", "when", "where", "which", "who", "whom", "whose", "why", "how", "many", "much", "long", "often",
    "kind", "type", "name", "did", "does", "do", "is", "was", "were", "are", "has", "have", "had", "will",
    "would", "could", "should", "can"
])
# fmt: on


def vague_topical(question: Question) -> AuditAnswer | None:
    """The question's topic, without any word of the gold answer; None for unanswerable questions."""
    if question.is_abstention or not question.answer.strip():
        return None
    gold = content_words(question.answer)
    words: list[str] = []
    for w in _WORD.findall(question.question):
        low = w.casefold().removesuffix("'s")
        if low in STOP_WORDS or low in _QUESTION_WORDS or low in gold or low in (x.casefold() for x in words):
            continue
        words.append(w.removesuffix("'s"))
    if not words:
        return None
    topic = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
    return AuditAnswer(
        question.question_id,
        "vague",
        "wrong",
        f"It came up when they talked about {topic}.",
        "topic words only",
    )


def dont_know(question: Question) -> AuditAnswer | None:
    """The answer "I don't know." on an answerable question (None on an unanswerable one, where it is right)."""
    if question.is_abstention:
        return None
    return AuditAnswer(question.question_id, "dont-know", "wrong", DONT_KNOW, "abstains")


_WRAPPERS = (
    ("I believe the answer is {}.", "in a sentence"),
    ("{}, as far as I remember.", "in a sentence"),
    ("From what was said: {}.", "in a sentence"),
)


def paraphrase(question: Question, rng: random.Random) -> AuditAnswer | None:
    """The gold answer reworded, same content (see the module docstring); an abstention when there is none."""
    if question.is_abstention:
        return AuditAnswer(question.question_id, "paraphrase", "correct", ABSTAIN, "abstains")
    gold = question.answer.strip().rstrip(".")
    if not gold:
        return None
    m = _DAY_MONTH_YEAR.search(gold)
    if m is not None:
        new = f"{_MONTHS[_MONTH_INDEX[m.group(2).lower()] - 1]} {int(m.group(1))}, {m.group(3)}"
        text = gold[: m.start()] + new + gold[m.end() :]
        return AuditAnswer(question.question_id, "paraphrase", "correct", text, "date reformatted")
    m = _MONTH_DAY_YEAR.search(gold)
    if m is not None:
        new = f"{int(m.group(2))} {_MONTHS[_MONTH_INDEX[m.group(1).lower()] - 1]} {m.group(3)}"
        text = gold[: m.start()] + new + gold[m.end() :]
        return AuditAnswer(question.question_id, "paraphrase", "correct", text, "date reformatted")
    items = [x.strip() for x in re.split(r",\s*(?:and\s+)?|\s+and\s+", gold) if x.strip()]
    if len(items) >= 2 and all(len(x.split()) <= 4 for x in items):
        order = items[::-1]
        text = ", ".join(order[:-1]) + " and " + order[-1]
        return AuditAnswer(question.question_id, "paraphrase", "correct", text, "list reordered")
    template, how = rng.choice(_WRAPPERS)
    return AuditAnswer(question.question_id, "paraphrase", "correct", template.format(gold), how)


def generate_audit(
    questions: Sequence[Question],
    generators: Sequence[str] = GENERATORS,
    *,
    haystack_texts: Mapping[str, Sequence[str]] | None = None,
    seed: int = 0,
) -> dict[str, list[AuditAnswer]]:
    """Generated answers per generator, in question order (a question a generator cannot serve is left out).

    Args:
        questions: the questions (with their gold answers) to write answers for; also the pool the
            ``specific`` generator draws other answers from.
        generators: any of ``GENERATORS``.
        haystack_texts: haystack id -> texts (messages or retrieved memories) that names are taken from;
            without it names come from the questions and gold answers of the same haystack.
        seed: the random seed (each generator and question gets its own stream, so adding a generator
            does not change the others' answers).
    """
    for g in generators:
        kind_of(g)
    by_haystack: dict[str, list[str]] = {}
    for q in questions:
        by_haystack.setdefault(q.haystack_id, []).extend((q.question, q.answer))
    for hid, texts in (haystack_texts or {}).items():
        by_haystack.setdefault(hid, []).extend(texts)
    names = {hid: haystack_names(texts) for hid, texts in by_haystack.items()}
    pool = _Pool(questions)
    out: dict[str, list[AuditAnswer]] = {g: [] for g in generators}
    for q in questions:
        for g in generators:
            rng = random.Random(f"{seed}:{g}:{q.question_id}")
            if g == "specific":
                made = specific_wrong(q, pool, names.get(q.haystack_id, []), rng)
            elif g == "vague":
                made = vague_topical(q)
            elif g == "dont-know":
                made = dont_know(q)
            else:
                made = paraphrase(q, rng)
            if made is not None:
                out[g].append(made)
    return out
