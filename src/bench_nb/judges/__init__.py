"""Judges: grade an answer against the gold answer (``Judge``: ``judge(question, hypothesis) -> Verdict``).

``get_judge("f1")``, ``get_judge("contains")``, ``get_judge("gpt-4o")`` (a model alias: an LLM judge with
the lenient, standard or strict prompt). The deterministic judges work offline. The modules (``llm``,
``prompts``, ``audit``, ``labels``, ``beam``, ...) are internal; docs/statistics.md describes them.
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.judges.base import Judge
    from bench_nb.judges.registry import get_judge

__getattr__, __dir__, __all__ = attach(
    __name__, {"bench_nb.judges.base": ["Judge"], "bench_nb.judges.registry": ["get_judge"]}
)
