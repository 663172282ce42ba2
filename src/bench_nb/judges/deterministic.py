"""Deterministic judges: no model, same verdict every time, so offline runs and tests have a real grade.

Both judges compare the answer and the ground truth after SQuAD's normalisation (``normalize_answer``:
lowercase, punctuation removed, the articles a/an/the removed, whitespace collapsed).

- ``f1``: token F1 between answer and ground truth (SQuAD's definition: shared tokens counted with
  multiplicity); correct when F1 >= ``threshold`` (default 0.5). Short answers score well; a whole sentence
  around the right fact does not.
- ``overlap``: deliberately lenient, for audits: correct when the answer shares one content word (not a
  stop word) with the ground truth. It accepts most specific-but-wrong answers, which is what a judge audit
  (``bench_nb.judge_audit``) should catch.
- ``contains``: correct when the normalised ground truth appears in the normalised answer as a phrase (on word
  boundaries), or when every ground-truth token appears somewhere in the answer ("7 May 2023" matches
  "May 7, 2023").

Abstention questions (``question.is_abstention``: LoCoMo's adversarial category, LongMemEval's ``_abs`` ids)
are graded by both the same way: correct exactly when the answer abstains (``is_abstaining``: "I don't know",
"not mentioned", "no information", ...). Other questions are graded on the text alone (an abstaining answer
rarely contains the ground truth; the explanation says when it abstained). A non-abstention question without
a ground truth cannot be graded: ``unscored``, never incorrect.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass, field

from bench_nb.records import Question, Verdict

DEFAULT_F1_THRESHOLD = 0.5

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans(dict.fromkeys(string.punctuation + "‘’“”–—…", " "))
# Phrases that mean "I cannot answer", matched on the normalised answer (apostrophes already removed).
_ABSTAIN = re.compile(
    r"\b("
    r"i (dont|do not|cannot|cant|could not|couldnt) (know|tell|say|determine|find|recall|answer)"
    r"|(dont|do not|does not|doesnt|did not|didnt) (know|mention|say|specify|state|include|contain|provide)"
    r"|not (mentioned|specified|stated|provided|available|known|given|discussed|recorded|included)"
    r"|no (information|mention|record|details|data|evidence|answer)"
    r"|(not enough|insufficient|no relevant) (information|context|details|data)"
    r"|(cannot|cant|can not|unable to) (be )?(answer|answered|determine|determined|tell|say)"
    r"|unanswerable|unknown|unclear"
    r"|there is nothing|nothing (in|about) (the|this|my)"
    r")\b"
)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lowercase, no punctuation, no articles, single spaces."""
    text = text.lower().replace("'", "").replace("’", "")
    text = text.translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def is_abstaining(answer: str) -> bool:
    """Whether ``answer`` declines to answer (empty answers count as abstaining)."""
    norm = normalize_answer(answer)
    return not norm or _ABSTAIN.search(norm) is not None


def token_f1(answer: str, ground_truth: str) -> float:
    """SQuAD token F1 of the normalised answer against the normalised ground truth."""
    a, g = normalize_answer(answer).split(), normalize_answer(ground_truth).split()
    if not a or not g:
        return float(a == g)
    common = sum((Counter(a) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(g)
    return 2 * precision * recall / (precision + recall)


def contains_answer(answer: str, ground_truth: str) -> bool:
    """The normalised ground truth is a phrase of the normalised answer, or all its tokens are in it."""
    a, g = normalize_answer(answer), normalize_answer(ground_truth)
    if not g or not a:
        return False
    if f" {g} " in f" {a} ":
        return True
    return set(g.split()) <= set(a.split())


class _TextJudge:
    """What every deterministic judge does around its comparison (``compare``): an abstention question is
    correct exactly when the answer abstains, a question with no ground truth is unscored, and an incorrect
    answer that abstains says so."""

    name: str

    def compare(self, answer: str, ground_truth: str) -> tuple[bool, str]:
        """Whether ``answer`` matches ``ground_truth``, and why."""
        raise NotImplementedError

    def judge(self, question: Question, hypothesis: str) -> Verdict:
        """Grade ``hypothesis`` against the question's ground truth with ``compare``."""
        if question.is_abstention:
            ok = is_abstaining(hypothesis)
            why = f"unanswerable question; the answer {'abstains' if ok else 'does not abstain'}"
        elif not normalize_answer(question.answer):
            return Verdict(
                None, "unscored", "the question has no ground truth to compare with", judge=self.name
            )
        else:
            ok, why = self.compare(hypothesis, question.answer)
            if not ok and is_abstaining(hypothesis):
                why += " (the answer abstains)"
        return Verdict(int(ok), "correct" if ok else "incorrect", why, judge=self.name)


@dataclass
class F1Judge(_TextJudge):
    """Token F1 over a threshold (see the module docstring). Named ``f1``, or ``f1@<threshold>`` when not 0.5."""

    threshold: float = DEFAULT_F1_THRESHOLD
    name: str = field(init=False)

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ValueError(f"the f1 threshold must be in (0, 1], not {self.threshold}")
        self.name = "f1" if self.threshold == DEFAULT_F1_THRESHOLD else f"f1@{self.threshold:g}"

    def compare(self, answer: str, ground_truth: str) -> tuple[bool, str]:
        """Correct when the answer's token F1 against the ground truth reaches the threshold."""
        f1 = token_f1(answer, ground_truth)
        ok = f1 >= self.threshold
        return ok, f"token F1 {f1:.3f} {'>=' if ok else '<'} threshold {self.threshold:g}"


@dataclass
class ContainsJudge(_TextJudge):
    """Normalised containment of the ground truth in the answer (see the module docstring)."""

    name: str = "contains"

    def compare(self, answer: str, ground_truth: str) -> tuple[bool, str]:
        """Correct when the normalised answer contains the normalised ground truth."""
        ok = contains_answer(answer, ground_truth)
        return ok, f"the answer {'contains' if ok else 'does not contain'} the ground truth"


@dataclass
class OverlapJudge(_TextJudge):
    """Deliberately lenient (see the module docstring): one shared content word with the ground truth."""

    name: str = "overlap"

    def compare(self, answer: str, ground_truth: str) -> tuple[bool, str]:
        """Correct when the answer shares a content word (stop words left out) with the ground truth."""
        from bench_nb.providers.query import STOP_WORDS

        gold = set(normalize_answer(ground_truth).split()) - STOP_WORDS
        shared = sorted(gold & set(normalize_answer(answer).split()))
        return bool(shared), (
            f"shares {', '.join(shared[:3])} with the ground truth" if shared else "no content word in common"
        )
