"""The Judge protocol: grades one answer to one question."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bench_nb.records import Question, Verdict


@runtime_checkable
class Judge(Protocol):
    """Returns ``Verdict(score, label, explanation)``; a reply it cannot parse is ``unscored``, never incorrect."""

    name: str

    def judge(self, question: Question, hypothesis: str) -> Verdict: ...
