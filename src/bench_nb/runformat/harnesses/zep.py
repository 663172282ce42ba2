"""Zep's LoCoMo grades (getzep/zep-papers, ``locomo_eval/data/zep_locomo_grades.json``).

``{"locomo_experiment_user_<conv 0-9>": [{question, answer (Zep's answer), golden_answer (string or number),
grade (bool: Zep's LLM judge), category (int, LoCoMo's numbering)}]}``. No question ids: the n-th entry of a
conversation is its n-th category 1-4 question in locomo10.json (the dataset file is needed), the text the
check. The judge's model is not in the file: ``unknown``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench_nb.errors import Problem
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.harnesses.common import ImportInfo, keyed_entry_lists, positional_checkpoint
from bench_nb.runformat.harnesses.locomo_ids import LocomoIndex

HARNESS = "zep"
_KEY = re.compile(r"^locomo_experiment_user_(\d+)$")


def looks_like(data: Any) -> bool:
    """Whether ``data`` is Zep's grades: ``locomo_experiment_user_<n>`` lists of entries with a ``grade``."""
    return keyed_entry_lists(data, _KEY.match, "grade")


def read(
    path: Path, index: LocomoIndex | None, problems: list[Problem], data: Any = None
) -> tuple[Checkpoint, ImportInfo]:
    """Read Zep's grades as a checkpoint, matching each entry to its LoCoMo question by position and text.

    Raises:
        RunFormatError: without LoCoMo's dataset (``index``), or when the file is not Zep's grades.
    """
    return positional_checkpoint(
        path,
        index,
        problems,
        data,
        harness=HARNESS,
        what="Zep's grades",
        conversation_of=lambda k: int(m.group(1)) if (m := _KEY.match(k)) else None,
        order=None,
        name="grade",
        key_form="locomo_experiment_user_<n>",
        fields=("grade", "golden_answer", "answer"),
        verdict=lambda grade: grade if isinstance(grade, bool) else None,
        expected="true/false",
        generic=("grades", "results"),
    )
