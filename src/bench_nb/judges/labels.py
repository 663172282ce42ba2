"""Human labels of a run's answers, kept beside the run in ``labels.jsonl`` (append-only, resumable; beside a
run that is one file, in ``<file>.labels.jsonl``).

One JSON object a line: ``{"questionId", "label", "labeller", "weight", "stratum", "at"}``, ``label`` one of
``correct``, ``incorrect`` or ``unsure``. A later line for the same (question, labeller) replaces an earlier
one when read, so relabelling appends and never rewrites; a torn last line is skipped and reported.

``weight`` is the sampling weight of the labelled answer (its stratum's answers per labelled answer, written
by the labelling widget's stratified sample; 1 when labelled outside a sample), so that error rates estimated
from a sample that over-represents some strata can be re-weighted (docs/statistics.md).

The labels load as the judge ``human`` (``human:<labeller>`` for a named labeller) in ``judgments_df``, for a
run directory and for an imported result file alike (the file's ``run.path`` is what both write and read):
``correct`` is score 1, ``incorrect`` score 0, ``unsure`` unscored.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bench_nb.errors import Problem
from bench_nb.runformat.format import now_iso
from bench_nb.runformat.jsonl import append_lines, read_json_lines

FILENAME = "labels.jsonl"
HUMAN = "human"
LABELS: tuple[str, ...] = ("correct", "incorrect", "unsure")
HumanLabel = Literal["correct", "incorrect", "unsure"]


@dataclass(frozen=True)
class Label:
    """One human label as read back."""

    question_id: str
    label: HumanLabel
    labeller: str | None
    weight: float
    stratum: str
    at: str

    @property
    def judge(self) -> str:
        """The judge name these labels load under: ``human``, or ``human:<labeller>``."""
        return human_judge(self.labeller)

    @property
    def score(self) -> int | None:
        """The label as a score: 1 correct, 0 incorrect, None for ``unsure``."""
        return {"correct": 1, "incorrect": 0}.get(self.label)


def labels_path(run_path: str | Path) -> Path:
    """Where a run's labels live: ``<run dir>/labels.jsonl``, or ``<file>.labels.jsonl`` beside a run that
    is one file (an imported result file)."""
    path = Path(run_path)
    return path.with_name(path.name + ".labels.jsonl") if path.is_file() else path / FILENAME


def human_judge(labeller: str | None = None) -> str:
    """``human``, or ``human:<labeller>`` for a named labeller."""
    return HUMAN if not labeller else f"{HUMAN}:{labeller}"


def append_label(
    run_dir: str | Path,
    question_id: str,
    label: str,
    *,
    labeller: str | None = None,
    weight: float = 1.0,
    stratum: str = "",
) -> None:
    """Append one label (fsync'd: a label is a person's time and must not be lost).

    Raises:
        ValueError: a label other than correct / incorrect / unsure, or a weight that is not a positive finite number.
    """
    if label not in LABELS:
        raise ValueError(f"label {label!r} for question {question_id}: must be one of {', '.join(LABELS)}")
    if not (math.isfinite(weight) and weight > 0):  # inf or nan would be written and lost on reading
        raise ValueError(f"weight {weight!r} for question {question_id}: must be a positive finite number")
    record = {
        "questionId": question_id,
        "label": label,
        "labeller": labeller,
        "weight": float(weight),
        "stratum": stratum,
        "at": now_iso(),
    }
    append_lines(labels_path(run_dir), [json.dumps(record, ensure_ascii=False) + "\n"])


def read_labels(run_dir: str | Path) -> tuple[dict[tuple[str, str], Label], list[Problem]]:
    """Labels keyed by (question_id, judge name), the last line winning; bad lines become problems."""
    items, problems = read_json_lines(labels_path(run_dir), _label)
    return {(item.question_id, item.judge): item for item in items}, problems


def _label(rec: Any) -> Label:
    """One line as a Label (a label outside LABELS or a weight that is not positive is refused)."""
    label = rec["label"]
    if label not in LABELS:
        raise ValueError(f"label {label!r} is not one of {', '.join(LABELS)}")
    weight = float(rec.get("weight") or 1.0)
    if not weight > 0:
        raise ValueError(f"weight {weight!r} is not positive")
    return Label(
        question_id=str(rec["questionId"]),
        label=label,
        labeller=rec.get("labeller") or None,
        weight=weight,
        stratum=str(rec.get("stratum") or ""),
        at=str(rec.get("at") or ""),
    )
