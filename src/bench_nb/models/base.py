"""The Answerer protocol: answers a question from retrieved context."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from bench_nb.records import Answer, Question, SearchHit


@runtime_checkable
class Answerer(Protocol):
    """Turns (question, retrieved hits) into an ``Answer`` with MemoryBench's token fields.

    An answerer may also define ``warm_up()``: the runner calls it once before the first question, outside
    every timed call, to load what its first answer would otherwise pay for (a tokenizer's tables), so that
    cost is not in the answer latency of the first answers in flight.
    """

    name: str

    def answer(self, question: Question, hits: Sequence[SearchHit]) -> Answer:
        """Answer ``question`` from the retrieved ``hits``, with the prompt's token counts."""
        ...
