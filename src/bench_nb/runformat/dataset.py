"""Reading a benchmark file the way MemoryBench does, for its report and for its labels.

MemoryBench ids LoCoMo questions ``<sample_id>-q<index>`` and labels them with its own (wrong) category
names; ground truth is JavaScript's ``String(answer)``, so an adversarial item with no answer becomes the
string ``"undefined"``. bench_nb's own readers (``bench_nb.benchmarks``) use the true categories.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_nb.errors import DatasetError
from bench_nb.runformat.jsjson import js_number
from bench_nb.taxonomy import (
    LOCOMO_CATEGORIES,
    LONGMEMEVAL_TYPE_REGISTRY,
    MEMORYBENCH_LOCOMO_LABELS,
    NormType,
    locomo_norm_type,
    normalize_question_type,
)

_MISSING = object()

# questionTypeRegistry as MemoryBench's LoCoMo benchmark declares it, under its own (wrong) labels
# (``MEMORYBENCH_LOCOMO_LABELS``; key order matters): what its report.json carries. The true categories'
# registry is ``bench_nb.benchmarks.locomo.LOCOMO_TYPE_REGISTRY``.
MEMORYBENCH_LOCOMO_TYPE_REGISTRY: dict[str, dict[str, str]] = {
    "single-hop": {"id": "single-hop", "alias": "single", "description": "Single-hop fact recall"},
    "multi-hop": {"id": "multi-hop", "alias": "multi", "description": "Multi-hop reasoning across sessions"},
    "temporal": {"id": "temporal", "alias": "temporal", "description": "Temporal reasoning"},
    "world-knowledge": {
        "id": "world-knowledge",
        "alias": "world",
        "description": "Commonsense/world knowledge",
    },
    "adversarial": {"id": "adversarial", "alias": "adversarial", "description": "Adversarial (unanswerable)"},
}


def js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` for JSON values (``_MISSING`` stands for ``undefined``)."""
    if value is _MISSING:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


class DatasetQuestion(msgspec.Struct, frozen=True):
    """One question as MemoryBench sees it, plus its true category (a frozen msgspec Struct: built 100,000
    times for a large dataset, several times faster than a frozen dataclass)."""

    question_id: str
    question_type: str  # MemoryBench's label
    question: str
    ground_truth: str
    norm_type: NormType
    category: int | None = None


@dataclass(frozen=True)
class MemoryBenchDataset:
    """A MemoryBench dataset file read with MemoryBench's ids and labels: its questions and type registry."""

    benchmark: str
    questions: list[DatasetQuestion]
    type_registry: dict[str, dict[str, str]]

    def by_id(self) -> dict[str, DatasetQuestion]:
        """The questions by question id."""
        return {q.question_id: q for q in self.questions}


def read_memorybench_dataset(path: str | Path) -> MemoryBenchDataset:
    """Read a LoCoMo or LongMemEval file with MemoryBench's ids and labels."""
    p = Path(path)
    try:
        data = msgspec.json.decode(p.read_bytes())  # a third of json.loads' time on a 100,000-question file
    except (OSError, ValueError) as err:  # msgspec.DecodeError is a ValueError
        raise DatasetError(f"{p}: cannot read the dataset: {err}") from None
    if not isinstance(data, list) or not data:
        raise DatasetError(
            f"{p}: not a LoCoMo or LongMemEval file (a non-empty JSON list of samples or questions), the "
            "benchmarks MemoryBench runs"
        )
    first = data[0]
    if isinstance(first, dict) and "qa" in first:
        return MemoryBenchDataset("locomo", list(_locomo(p, data)), MEMORYBENCH_LOCOMO_TYPE_REGISTRY)
    if isinstance(first, dict) and "question_id" in first:
        return MemoryBenchDataset("longmemeval", list(_longmemeval(data)), LONGMEMEVAL_TYPE_REGISTRY)
    raise DatasetError(f"{p}: neither LoCoMo (samples with 'qa') nor LongMemEval (items with 'question_id')")


def _locomo(path: Path, data: list[Any]) -> Any:
    # each category's labels, looked up once
    labels = {c: (MEMORYBENCH_LOCOMO_LABELS[c], locomo_norm_type(c)) for c in LOCOMO_CATEGORIES}
    for s_index, sample in enumerate(data):
        sample_id = sample.get("sample_id")
        if sample_id is None:
            raise DatasetError(f"{path}: sample {s_index} has no sample_id")
        for i, qa in enumerate(sample.get("qa", [])):
            category = qa.get("category")
            if category not in labels:
                raise DatasetError(f"{path}: {sample_id}-q{i}: unknown category {category!r}")
            label, norm_type = labels[category]
            answer = qa.get("answer", _MISSING)
            yield DatasetQuestion(
                f"{sample_id}-q{i}",
                label,
                str(qa.get("question", "")),
                answer if type(answer) is str else js_string(answer),
                norm_type,
                category,
            )


def _longmemeval(data: list[Any]) -> Any:
    for item in data:
        qid = str(item["question_id"])
        qtype = str(item.get("question_type", ""))
        yield DatasetQuestion(
            question_id=qid,
            question_type=qtype,
            question=str(item.get("question", "")),
            ground_truth=js_string(item.get("answer", _MISSING)),
            norm_type=normalize_question_type(qtype, question_id=qid),
        )
