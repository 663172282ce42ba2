"""Zep's LoCoMo grades (getzep/zep-papers, ``locomo_eval/data/zep_locomo_grades.json``).

``{"locomo_experiment_user_<conv 0-9>": [{question, answer (Zep's answer), golden_answer (string or number),
grade (bool: Zep's LLM judge), category (int, LoCoMo's numbering)}]}``. No question ids: the n-th entry of a
conversation is its n-th category 1-4 question in locomo10.json (the dataset file is needed), the text the
check. The judge's model is not in the file: ``unknown``.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from bench_nb.runformat.harnesses.common import keyed_entry_lists, positional_checkpoint

HARNESS = "zep"
_KEY = re.compile(r"^locomo_experiment_user_(\d+)$")


def looks_like(data: Any) -> bool:
    """Whether ``data`` is Zep's grades: ``locomo_experiment_user_<n>`` lists of entries with a ``grade``."""
    return keyed_entry_lists(data, _KEY.match, "grade")


read = partial(
    positional_checkpoint,
    harness=HARNESS,
    what="Zep's grades",
    conversation_of=lambda k: int(m.group(1)) if (m := _KEY.match(k)) else None,
    name="grade",
    key_form="locomo_experiment_user_<n>",
    fields=("grade", "golden_answer", "answer"),
    generic=("grades", "results"),
)
"""Read Zep's grades as a checkpoint (``read(path, index, problems, data)``), each entry matched to its LoCoMo
question by position and text; without LoCoMo's dataset (``index``) a ``RunFormatError``."""
