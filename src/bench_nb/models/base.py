"""The Answerer protocol: answers a question from retrieved context."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from bench_nb.records import Answer, Question, SearchHit


@runtime_checkable
class Answerer(Protocol):
    """Turns (question, retrieved hits) into an ``Answer`` with MemoryBench's token fields."""

    name: str

    def answer(self, question: Question, hits: Sequence[SearchHit]) -> Answer: ...
