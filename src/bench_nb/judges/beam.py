"""BEAM's scoring rules: rubric items graded 0 / 0.5 / 1, and event ordering by Kendall's tau-b.

BEAM (Tavakoli et al. 2025) gives every question a rubric: a list of criteria (``Question.extra["rubric"]``).
bench_nb follows the paper's rules (docs/benchmarks.md, docs/statistics.md), in its own code and prompts:

- Every ability but event ordering: each rubric item is graded 0, 0.5 or 1; the question's score is the mean
  over its items (``rubric_score``). The official code sums ``int(score)`` instead, so a 0.5 counts as 0: that
  reading is kept beside the other as ``Verdict.published_score`` (``partial_credit="as-published"``).
- Event ordering: the answer is split into items (``answer_items``), each reference event (the rubric, in
  order) is aligned to the answer item that states it, and the score is Kendall's tau-b between the reference
  order and the order of the aligned items, normalised to ``(tau + 1) / 2`` (``ordering_score``). Both
  readings are the same number.

Two judges:

- ``rubric`` (offline, deterministic): an item scores 1 when at least ``FULL`` (80%) of its content words
  (normalised as SQuAD does, stopwords and the "LLM response should state:" lead-in removed) appear in the
  answer, 0.5 from ``HALF`` (50%), else 0; an abstention item scores 1 when the answer abstains. Events are
  aligned to the answer item with the most content-word overlap, at least ``ALIGN`` (50%). Paraphrases,
  formatting and instructions are invisible to it: read its scores as a rough lower bound.
- ``rubric:<model>`` (LLM): one call per rubric item with bench_nb's own grading prompt (``RUBRIC_SYSTEM``; the
  official prompt is not used: its question placeholder is never filled upstream), and one call per ordering
  question that aligns the events. A reply that stays unreadable leaves the question unscored.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench_nb.benchmarks.beam import PartialCredit
from bench_nb.errors import JudgeError
from bench_nb.judges.base import build_judge
from bench_nb.judges.deterministic import is_abstaining, normalize_answer
from bench_nb.judges.llm import MODEL_OPTIONS, Graded, ModelJudge, json_object
from bench_nb.judges.prompts import prompt_sha
from bench_nb.models.client import Completion
from bench_nb.records import Question, Verdict, VerdictLabel

ORDERING_ABILITY = "event_ordering"
FULL, HALF, ALIGN = 0.8, 0.5, 0.5
ITEM_SCORES = (0.0, 0.5, 1.0)

_LEAD_IN = re.compile(r"^\s*(llm\s+)?response\s+should\s+\w+(\s+\w+)?\s*:\s*", re.IGNORECASE)
# fmt: off
_STOP = frozenset([
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as", "is",
    "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "i", "my", "me", "you",
    "your", "we", "our", "they", "their", "he", "she", "his", "her", "them", "there", "which", "what", "when",
    "how", "who", "whom", "do", "does", "did", "should", "would", "could", "can", "will", "not", "no", "any",
    "some", "all", "about", "into", "than", "then", "so", "such"
])
# fmt: on
# An enumerated item: "1.", "1)", "(1)", "-", "*", "•" at a line start, or "1) ..." inline.
_ENUM_LINE = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|[-*•])\s+")
_ENUM_INLINE = re.compile(r"(?:^|\s)\(?(\d{1,2})[.)]\s+")


def rubric_score(items: Sequence[float], partial_credit: PartialCredit = "float") -> float:
    """A question's score from its items' grades: their mean; ``"as-published"`` truncates each grade to an
    integer first (BEAM's code: a 0.5 counts as 0).

    Raises:
        ValueError: no items, or a grade that is not 0, 0.5 or 1.
    """
    if not items:
        raise ValueError("a rubric score needs at least one item")
    bad = [x for x in items if x not in ITEM_SCORES]
    if bad:
        raise ValueError(f"rubric item grades are 0, 0.5 or 1, not {bad[0]!r}")
    values = [float(int(x)) for x in items] if partial_credit == "as-published" else list(items)
    return sum(values) / len(values)


def ordering_score(positions: Sequence[int | None]) -> float:
    """The normalised tau-b of an alignment: ``positions[i]`` is the answer item (0-based) that states the
    i-th reference event, or None when the answer does not state it (those share the rank after the last
    item). 0 when nothing is aligned or every event has the same rank (tau-b undefined); 1 for a single event
    found; else ``(tau_b + 1) / 2``."""
    found = [p for p in positions if p is not None]
    if not found:
        return 0.0
    if len(positions) == 1:
        return 1.0
    last = max(found) + 1
    ranks = [float(last if p is None else p) for p in positions]
    from scipy.stats import kendalltau  # imported on first use: a second of import only ordering items need

    tau = float(kendalltau([float(i) for i in range(len(positions))], ranks, variant="b").statistic)
    return 0.0 if math.isnan(tau) else (tau + 1) / 2


def answer_items(answer: str) -> list[str]:
    """The answer split into the items it lists: enumerated lines, else an inline "1) ... 2) ..." list, else
    sentences."""
    lines = [ln for ln in answer.splitlines() if ln.strip()]
    enumerated = [_ENUM_LINE.sub("", ln).strip() for ln in lines if _ENUM_LINE.match(ln)]
    if len(enumerated) >= 2:
        return enumerated
    marks = list(_ENUM_INLINE.finditer(answer))
    if len(marks) >= 2:
        bounds = [m.start() for m in marks] + [len(answer)]
        return [
            _ENUM_INLINE.sub(" ", answer[a:b], count=1).strip(" ,;") for a, b in itertools.pairwise(bounds)
        ]
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n+", answer) if p.strip()]
    return parts or ([answer.strip()] if answer.strip() else [])


# BEAM's own: the overlap judge's tokens (normalize_answer, _STOP); another list would change recorded verdicts.
def _content_words(text: str) -> list[str]:
    """The words an overlap is counted on: normalised (``normalize_answer``), stopwords removed."""
    return [w for w in normalize_answer(_LEAD_IN.sub("", text)).split() if w not in _STOP]


def overlap(criterion: str, text: str) -> float:
    """The share of the criterion's content words found in ``text`` (1.0 for a criterion without any)."""
    need = _content_words(criterion)
    if not need:
        return 1.0
    have = set(normalize_answer(text).split())
    return sum(w in have for w in need) / len(need)


def grade_item_offline(criterion: str, answer: str, *, abstention: bool = False) -> float:
    """0, 0.5 or 1 for one rubric item (see the module docstring)."""
    if abstention and is_abstaining(answer):
        return 1.0
    share = overlap(criterion, answer)
    return 1.0 if share >= FULL else 0.5 if share >= HALF else 0.0


def align_offline(reference: Sequence[str], items: Sequence[str]) -> list[int | None]:
    """Each reference event's answer item: the one with the largest overlap, if at least ``ALIGN``."""
    out: list[int | None] = []
    for event in reference:
        shares = [overlap(event, item) for item in items]
        best = max(range(len(items)), key=lambda i: shares[i], default=None)
        out.append(best if best is not None and shares[best] >= ALIGN else None)
    return out


def rubric_of(question: Question) -> list[str] | None:
    """A BEAM question's rubric items (``Question.extra["rubric"]``), or None when it has none."""
    rubric = question.extra.get("rubric")
    if isinstance(rubric, list) and rubric and all(isinstance(r, str) for r in rubric):
        return list(rubric)
    return None


def is_ordering(question: Question) -> bool:
    """Whether a BEAM question asks for events in order (scored by tau-b, not by rubric items)."""
    return question.question_type == ORDERING_ABILITY or question.norm_type == "event-ordering"


def rubric_verdict(name: str, items: Sequence[float], explanation: str) -> Verdict:
    """The graded verdict of a rubric question (float mean; the published reading beside it)."""
    score = rubric_score(items)
    label: VerdictLabel = "correct" if score == 1 else "incorrect"
    return Verdict(
        score,
        label,
        explanation,
        judge=name,
        items=tuple(items),
        published_score=rubric_score(items, "as-published"),
    )


def ordering_verdict(name: str, positions: Sequence[int | None], explanation: str) -> Verdict:
    """The graded verdict of an ordering question from where each event was found in the answer (tau-b)."""
    score = ordering_score(positions)
    label: VerdictLabel = "correct" if score == 1 else "incorrect"
    found = sum(p is not None for p in positions)
    why = f"{explanation}; {found} of {len(positions)} events found, normalised tau-b {score:.3f}"
    return Verdict(score, label, why, judge=name, published_score=score)


def _no_rubric(name: str, question: Question) -> Verdict:
    return Verdict(None, "unscored", f"question {question.question_id} has no rubric to grade by", judge=name)


@dataclass
class RubricJudge:
    """The offline rubric judge (see the module docstring): a rough lower bound of BEAM's score."""

    name: str = "rubric"
    graded: bool = True

    def judge(self, question: Question, hypothesis: str) -> Verdict:
        """Grade offline: an ordering question by aligning events, any other by each rubric item's word
        overlap."""
        rubric = rubric_of(question)
        if rubric is None:
            return _no_rubric(self.name, question)
        if is_ordering(question):
            positions = align_offline(rubric, answer_items(hypothesis))
            return ordering_verdict(self.name, positions, "events aligned by content-word overlap")
        items = [grade_item_offline(c, hypothesis, abstention=question.is_abstention) for c in rubric]
        why = f"rubric items by content-word overlap: {', '.join(f'{x:g}' for x in items)}"
        return rubric_verdict(self.name, items, why)


RUBRIC_SYSTEM = (
    "You grade one criterion of an AI assistant's response in a long-term memory benchmark. The assistant "
    "answered a user's question about their earlier conversations. Decide how well the response meets the "
    "criterion, and nothing else: 1 when it fully meets it, 0.5 when it meets part of it or only vaguely, 0 "
    "when it does not meet it or contradicts it. Judge the content, not the style or length, unless the "
    "criterion is about style or format.\n"
    'Reply with only a JSON object: {"score": 0 or 0.5 or 1, "reason": "<one sentence>"}'
)
RUBRIC_USER = "Question:\n{question}\n\nCriterion:\n{criterion}\n\nResponse:\n{response}"
ORDERING_SYSTEM = (
    "You compare the order of events in an AI assistant's response with a reference order, in a long-term "
    "memory benchmark. The response's items are numbered. For each reference event, in order, give the number "
    "of the response item that states the same event (a paraphrase counts), or null when no item states it.\n"
    'Reply with only a JSON object: {"positions": [<item number or null>, ...]} with one entry per reference '
    "event."
)
ORDERING_USER = (
    "Question:\n{question}\n\nReference events, in order:\n{reference}\n\nResponse items:\n{items}"
)
RUBRIC_REMINDER = 'Reply with only the JSON object {"score": 0 or 0.5 or 1, "reason": "<one sentence>"}.'
ORDERING_REMINDER = 'Reply with only the JSON object {"positions": [<item number or null>, ...]}.'


RUBRIC_PROMPT_HASHES: dict[str, str] = {
    "beam-rubric": prompt_sha(RUBRIC_SYSTEM + "\n" + RUBRIC_USER),
    "beam-ordering": prompt_sha(ORDERING_SYSTEM + "\n" + ORDERING_USER),
}


def parse_item_grade(text: str) -> tuple[float, str] | None:
    """``(grade, reason)`` from a rubric-item reply, or None; the grade must be 0, 0.5 or 1."""
    data = json_object(text)
    if data is None:
        return None
    raw = data.get("score")
    if isinstance(raw, bool):
        return None
    try:
        grade = float(raw) if isinstance(raw, int | float | str) else math.nan
    except ValueError:
        return None
    if grade not in ITEM_SCORES:
        return None
    reason = data.get("reason", data.get("explanation", ""))
    return grade, reason if isinstance(reason, str) else json.dumps(reason)


def parse_positions(text: str, events: int, items: int) -> list[int | None] | None:
    """The 0-based alignment from an ordering reply (1-based numbers in it), or None when unreadable."""
    data = json_object(text)
    raw = None if data is None else data.get("positions")
    if not isinstance(raw, list) or len(raw) != events:
        return None
    out: list[int | None] = []
    for p in raw:
        if p is None:
            out.append(None)
        elif isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= items:
            out.append(p - 1)
        else:
            return None
    return out


class LLMRubricJudge(ModelJudge):
    """BEAM's rules with a model grading each rubric item (``rubric:<alias>``; see the module docstring)."""

    graded = True

    def __init__(self, alias: str, *, name: str | None = None, **model: Any) -> None:
        super().__init__(alias, name or f"rubric:{alias}", **model)
        self.prompt_hashes = dict(RUBRIC_PROMPT_HASHES)

    def grade(self, question: Question, hypothesis: str) -> Graded:
        """The verdict and the model calls it took."""
        rubric = rubric_of(question)
        if rubric is None:
            return Graded(_no_rubric(self.name, question), ())
        calls: list[Completion] = []
        if is_ordering(question):
            items = answer_items(hypothesis)
            if not items:
                return Graded(
                    ordering_verdict(self.name, [None] * len(rubric), "the answer lists nothing"), ()
                )
            user = ORDERING_USER.format(
                question=question.question,
                reference="\n".join(f"{i}. {e}" for i, e in enumerate(rubric, 1)),
                items="\n".join(f"{i}. {e}" for i, e in enumerate(items, 1)),
            )
            positions = self._ask(
                question,
                ORDERING_SYSTEM,
                user,
                ORDERING_REMINDER,
                calls,
                lambda t: parse_positions(t, len(rubric), len(items)),
            )
            if positions is None:
                return Graded(self._unscored(calls, "the event alignment"), tuple(calls))
            return Graded(ordering_verdict(self.name, positions, "events aligned by the model"), tuple(calls))
        grades: list[float] = []
        reasons: list[str] = []
        for criterion in rubric:
            user = RUBRIC_USER.format(question=question.question, criterion=criterion, response=hypothesis)
            got = self._ask(question, RUBRIC_SYSTEM, user, RUBRIC_REMINDER, calls, parse_item_grade)
            if got is None:
                return Graded(self._unscored(calls, f"rubric item {len(grades) + 1}"), tuple(calls))
            grades.append(got[0])
            reasons.append(got[1])
        why = "; ".join(f"[{g:g}] {r}" for g, r in zip(grades, reasons, strict=True))
        return Graded(rubric_verdict(self.name, grades, why), tuple(calls))

    def _ask(
        self, question: Question, system: str, user: str, reminder: str, calls: list[Completion], parse: Any
    ) -> Any:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return self.ask(question.question_id, messages, parse, reminder, calls)

    def _unscored(self, calls: Sequence[Completion], what: str) -> Verdict:
        return Verdict(
            None, "unscored", f"unparseable reply for {what} {self.unreadable(calls)}", judge=self.name
        )


def make_rubric_judge(alias: str | None = None, **opts: Any) -> RubricJudge | LLMRubricJudge:
    """``rubric`` (alias None: offline) or ``rubric:<alias>`` (a model).

    Raises:
        JudgeError: an unknown option or model alias.
    """
    if alias is None:
        if opts:
            raise JudgeError(f"judge 'rubric' takes no options (got {', '.join(sorted(opts))})")
        return RubricJudge()
    return build_judge(f"'rubric:{alias}'", LLMRubricJudge, alias, opts, MODEL_OPTIONS)
