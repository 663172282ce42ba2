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
from bench_nb.runformat.harnesses.common import (
    ImportInfo,
    Row,
    build_checkpoint,
    category_field,
    keyed_entry_lists,
    position_entries,
    positional_file,
    run_name,
    text_field,
)
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
    data = positional_file(path, index, data, what="Zep's grades")
    info = ImportInfo(harness=HARNESS, judge="unknown")
    rows: list[Row] = []
    numbered = position_entries(
        path,
        data,
        list(data),
        lambda k: int(m.group(1)) if (m := _KEY.match(k)) else None,
        problems,
        name="grade",
        key_form="locomo_experiment_user_<n>",
    )
    for conversation, pos, where, item in numbered:
        grade = item.get("grade")
        if not isinstance(grade, bool):
            problems.append(
                Problem(str(path), f"grade {grade!r} is not true/false: unscored", field=f"{where}.grade")
            )
        at: dict[str, Any] = {"path": path, "problems": problems}
        rows.append(
            Row(
                where=where,
                conversation=conversation,
                position=pos,
                question=item["question"],
                gold=text_field(
                    item.get("golden_answer"), field=f"{where}.golden_answer", numbers=True, **at
                ),
                answer=text_field(item["answer"], field=f"{where}.answer", **at)
                if "answer" in item
                else None,
                category=category_field(item.get("category"), field=f"{where}.category", **at),
                verdicts=[grade if isinstance(grade, bool) else None],
                raw_id=f"zep:{conversation}:{pos}",
            )
        )
    checkpoint = build_checkpoint(
        path,
        rows,
        run_id=run_name(path, ("grades", "results")),
        provider="zep",
        answering_model="",
        info=info,
        index=index,
        problems=problems,
        every_scored=True,
    )
    return checkpoint, info
