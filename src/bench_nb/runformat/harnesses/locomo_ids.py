"""LoCoMo's canonical question id, so that runs of different harnesses pair up question by question.

A LoCoMo question is ``<sample_id>-q<i>``: the conversation's ``sample_id`` in locomo10.json (``conv-26``) and
the index into that conversation's full ``qa`` list (adversarial items included). bench_nb's own LoCoMo runs
use the same ids (``benchmarks.locomo``). Harnesses name questions otherwise:

- EverMemOS's pipeline (and the public LoCoMo audit): ``locomo_<conversation 0-9>_qa<i>``, the same index;
- Zep's grades and Mem0's results: no id; a question is its conversation and its position among that
  conversation's category 1-4 questions, which the dataset file turns into the full-list index.

The question text is the check: a question whose text differs from the dataset's at its position is looked
up by text within its conversation, and reported when that fails too.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from bench_nb.benchmarks import load_benchmark
from bench_nb.benchmarks.locomo import LOCOMO_SAMPLE_IDS
from bench_nb.errors import DatasetError
from bench_nb.records import Benchmark

SCORED_CATEGORIES = (1, 2, 3, 4)
_ID = re.compile(r"^(?P<sample>.+)-q(?P<index>\d+)$")


def canonical_id(conversation: int, index: int) -> str:
    """``conv-26-q0`` from conversation number 0 and full-list index 0."""
    return f"{LOCOMO_SAMPLE_IDS[conversation]}-q{index}"


def normalise_text(text: object) -> str:
    """A question's text for comparison: whitespace collapsed, case folded."""
    return " ".join(str(text).split()).casefold()


@dataclass(frozen=True)
class LocomoQuestion:
    """One LoCoMo question: its canonical id, conversation number, full-list index, text and category."""

    question_id: str
    conversation: int
    index: int
    question: str
    category: int


@dataclass
class LocomoIndex:
    """LoCoMo's questions by (conversation number, full-list index) and each conversation's scored list."""

    source: str
    by_position: dict[tuple[int, int], LocomoQuestion] = field(default_factory=dict)
    scored: dict[int, list[LocomoQuestion]] = field(default_factory=dict)

    @classmethod
    def from_benchmark(cls, bench: Benchmark, source: str) -> LocomoIndex:
        """The index of a loaded LoCoMo benchmark; ``source`` names where it came from."""
        samples: list[str] = []
        index = cls(source)
        for q in bench.questions:
            if q.haystack_id not in samples:
                samples.append(q.haystack_id)
            m = _ID.match(q.question_id)
            if m is None or q.category is None:
                continue
            item = LocomoQuestion(
                q.question_id, samples.index(q.haystack_id), int(m["index"]), q.question, q.category
            )
            index.by_position[(item.conversation, item.index)] = item
            if item.category in SCORED_CATEGORIES:
                index.scored.setdefault(item.conversation, []).append(item)
        return index

    def find_by_text(self, conversation: int, text: str) -> LocomoQuestion | None:
        """The one scored question of ``conversation`` with this text (None if none or several)."""
        wanted = normalise_text(text)
        found = [q for q in self.scored.get(conversation, []) if normalise_text(q.question) == wanted]
        return found[0] if len(found) == 1 else None


def load_locomo_index(dataset: str | os.PathLike[str] | None) -> LocomoIndex | None:
    """The LoCoMo index from ``dataset`` (a locomo10.json), else from the download cache; None when neither.

    Raises:
        DatasetError: ``dataset`` was given and cannot be read as LoCoMo.
    """
    if dataset is not None:
        bench = load_benchmark("locomo", path=Path(dataset), progress=False)
        return LocomoIndex.from_benchmark(bench, str(dataset))
    try:
        bench = load_benchmark("locomo", download=False, progress=False)
    except DatasetError:
        return None
    return LocomoIndex.from_benchmark(bench, "the cached LoCoMo dataset")
