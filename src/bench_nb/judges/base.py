"""The Judge protocol: grades one answer to one question; judge replicates (the same judge grading one answer
several times: ``--judge-replicates N``)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Protocol, TypeVar, runtime_checkable

from bench_nb.errors import JudgeError, ModelError
from bench_nb.records import Question, Verdict

J = TypeVar("J")


@runtime_checkable
class Judge(Protocol):
    """Returns ``Verdict(score, label, explanation)``; a reply it cannot parse is ``unscored``, never incorrect."""

    name: str

    def judge(self, question: Question, hypothesis: str) -> Verdict:
        """Grade ``hypothesis`` as an answer to ``question``."""
        ...


def is_replicable(judge: object) -> bool:
    """Whether grading again can give another verdict: a model judge (``replicable = True``, whose
    ``grade(question, hypothesis, replicate=n)`` caches each replicate's reply on its own). A deterministic
    judge gives the same verdict every time: it is graded once, whatever the number of replicates."""
    return getattr(judge, "replicable", False) is True


def majority_verdict(replicates: list[Verdict]) -> Verdict:
    """A judge's verdict over its replicates: the one most scored replicates gave (its first such
    replicate's explanation, with the count); unscored on a tie or when none was scored."""
    if len(replicates) == 1:
        return replicates[0]
    yes = [v for v in replicates if v.score == 1]
    no = [v for v in replicates if v.score == 0]
    judge = replicates[0].judge
    count = f"{len(yes)} correct, {len(no)} incorrect of {len(replicates)} replicates"
    if len(yes) == len(no):
        return Verdict(None, "unscored", f"replicates split evenly ({count})", judge=judge)
    first = (yes if len(yes) > len(no) else no)[0]
    return Verdict(first.score, first.label, f"majority: {count}; {first.explanation}", judge=judge)


def build_judge(
    label: str, make: Callable[..., J], alias: str | None, opts: dict[str, Any], known: Collection[str]
) -> J:
    """``make(alias, **opts)`` for the judge named ``label``; an unknown option, an unknown model alias or a
    bad option value is a ``JudgeError``."""
    unknown = sorted(set(opts) - set(known))
    if unknown:
        raise JudgeError(
            f"judge {label}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    try:
        return make(alias, **opts)
    except (ModelError, ValueError) as err:
        raise JudgeError(f"judge {label}: {err}") from err
