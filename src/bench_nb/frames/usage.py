"""The questions frame's usage columns, from each question's ``benchNb.usage`` (``runner.usage``).

- ``answer_*``, ``judge_cost_usd``, ``cost_usd``: the answerer's and the judges' calls. An answerer or judge
  that calls no model records nothing, so its part is absent (not unknown); a cost is null when no part is
  present or one present part has no price.
- ``memory_*``: the provider's own model calls (``usage.memory``): this question's search, plus its share of
  its container's ingest (the ingest entry divided by ``sharedBy``, the questions that share it), so the
  column summed over a run is the run's memory-side total. Null when the provider does not report its calls
  ("not reported", never 0); tokens and cost null as soon as one part is unknown.
- ``total_cost_usd``: answer, judges and memory together. Memory not reported is an unknown part, so the
  total is null for such a provider; otherwise null as soon as one part has no price.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

USAGE_COLUMNS = (
    "answer_input_tokens",
    "answer_output_tokens",
    "answer_cost_usd",
    "judge_cost_usd",
    "cost_usd",
    "memory_calls",
    "memory_input_tokens",
    "memory_output_tokens",
    "memory_cost_usd",
    "total_cost_usd",
)


def usage_columns(extras: Sequence[dict[str, Any]] | None, n: int) -> dict[str, list[Any]]:
    """The usage columns of ``n`` questions from their ``benchNb`` dicts (None: no ``benchNb`` at all)."""
    rows = [_row(e.get("usage")) for e in extras] if extras is not None else [{}] * n
    return {c: [r.get(c) for r in rows] for c in USAGE_COLUMNS}


def _row(usage: Any) -> dict[str, Any]:
    if not isinstance(usage, dict):
        return {}
    raw_answer = usage.get("answer")
    answer: dict[str, Any] = raw_answer if isinstance(raw_answer, dict) else {}
    judges = [j for j in (usage.get("judges") or {}).values() if isinstance(j, dict)]
    judge_costs: list[float | None] = [j.get("costUsd") for j in judges]
    parts = ([answer.get("costUsd")] if answer else []) + judge_costs
    row = {
        "answer_input_tokens": answer.get("inputTokens"),
        "answer_output_tokens": answer.get("outputTokens"),
        "answer_cost_usd": answer.get("costUsd"),
        "judge_cost_usd": _sum_known(judge_costs) if judges else None,
        "cost_usd": _sum_known(parts) if parts else None,
    }
    memory = _memory(usage.get("memory"))
    if memory:
        row.update(memory)
        row["total_cost_usd"] = _sum_known([*parts, memory["memory_cost_usd"]])
    return row


def _memory(memory: Any) -> dict[str, Any] | None:
    """This question's memory-side columns: its search entry plus its share of the ingest entry."""
    if not isinstance(memory, dict):
        return None
    shares: list[tuple[dict[str, Any], float]] = []
    ingest, search = memory.get("ingest"), memory.get("search")
    if isinstance(ingest, dict):
        shared_by = ingest.get("sharedBy")
        shares.append((ingest, 1 / shared_by if isinstance(shared_by, int) and shared_by > 0 else 1.0))
    if isinstance(search, dict):
        shares.append((search, 1.0))
    if not shares:
        return None

    def total(key: str) -> float | None:
        values = [entry.get(key) for entry, _ in shares]
        known = _sum_known(
            [None if v is None else float(v) * w for v, (_, w) in zip(values, shares, strict=True)]
        )
        return known

    return {
        "memory_calls": total("calls"),
        "memory_input_tokens": total("inputTokens"),
        "memory_output_tokens": total("outputTokens"),
        "memory_cost_usd": total("costUsd"),
    }


def _sum_known(values: list[float | None]) -> float | None:
    """The sum, or None as soon as one value is unknown."""
    total = 0.0
    for v in values:
        if v is None:
            return None
        total += v
    return total
