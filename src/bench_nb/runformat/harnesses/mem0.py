"""Mem0's evaluation output (mem0ai/mem0, ``evaluation/evals.py``: ``results/locomo/.../results.json``).

``{"<conv 0-9>": [{question, answer (gold), response (Mem0's answer), category "1".."4", bleu_score, f1_score,
llm_score (0/1: mem0's LLM judge)}]}``; conversation keys are strings, not in numeric order. No question ids:
the n-th entry of a conversation is its n-th category 1-4 question in locomo10.json (the dataset file is
needed), the text the check. The judge's model is not in the file: ``unknown``. ``bleu_score`` and
``f1_score`` are not imported (bench_nb's ``f1`` judge recomputes token F1 from the answers).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from bench_nb.runformat.harnesses.common import keyed_entry_lists, positional_checkpoint

HARNESS = "mem0"


def looks_like(data: Any) -> bool:
    """Whether ``data`` is Mem0's results: conversations keyed by number, each a list of entries with
    ``llm_score``."""
    return keyed_entry_lists(data, str.isdigit, "llm_score")


read = partial(
    positional_checkpoint,
    harness=HARNESS,
    what="Mem0's results",
    conversation_of=lambda k: int(k) if k.isdigit() else None,
    order=lambda k: (not str(k).isdigit(), int(k) if str(k).isdigit() else 0, str(k)),
    name="result",
    key_form="a conversation number",
    fields=("llm_score", "answer", "response"),
    zero_one=True,
    generic=("results",),
)
"""Read Mem0's results as a checkpoint (``read(path, index, problems, data)``), each entry matched to its LoCoMo
question by position and text; without LoCoMo's dataset (``index``) a ``RunFormatError``."""
