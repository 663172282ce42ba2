"""The questions frame's usage columns, from each question's ``benchNb.usage`` (``runner.usage``).

One rule for every cost column: **a part that makes no model call costs 0 (known); null only means
unknown**: a call with no price, or a component or provider that does not say what it called.

- ``answer_*``, ``judge_cost_usd``, ``cost_usd``: the answerer's and the judges' calls. A component that
  calls a model records an entry per question; one that calls none (the extractive answerer, the ``f1``,
  ``contains``, ``overlap``, ``rubric`` and ``lme-v2`` judges without a model) records nothing, and the run's
  ``benchNb.answerer`` / ``benchNb.judges`` name it, so its cost is 0 (``answer_cost_usd`` 0.0; the tokens
  stay null: there was no call to count). An entry-less part of a component not known to be model-free
  (an LLM component whose call failed, a plug-in, a run that does not name its components, an imported
  run) is unknown; a sum is null as soon as one part is unknown.
- ``memory_*``: the provider's own model calls (``usage.memory``): this question's search, plus its share of
  its container's ingest (the ingest entry divided by ``sharedBy``, the questions that share it), so the
  column summed over a run is the run's memory-side total. Null when the provider does not report its calls
  ("not reported", never 0); a provider that reports calling no model has 0.
- ``total_cost_usd``: answer, judges and memory together; null as soon as one part is unknown (memory not
  reported included).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from bench_nb.frames.columns import QUESTIONS

# the questions frame's usage group, in its order (frames.columns)
USAGE_COLUMNS = next(tuple(c.name for c in g.columns) for g in QUESTIONS.groups if g.name.startswith("usage"))


def usage_columns(
    extras: Sequence[dict[str, Any]] | None, n: int, run_extra: dict[str, Any] | None = None
) -> dict[str, list[Any]]:
    """The usage columns of ``n`` questions from their ``benchNb`` dicts (None: no ``benchNb`` at all) and
    the run's own ``benchNb`` (``run_extra``: which answerer and judges it used)."""
    components = _Components.of(run_extra or {})
    unrecorded = _row(None, components)  # the row of each question that records no usage
    rows = (
        [_row(u, components) if isinstance(u := e.get("usage"), dict) else unrecorded for e in extras]
        if extras is not None
        else [unrecorded] * n
    )
    return {c: [r.get(c) for r in rows] for c in USAGE_COLUMNS}


class _Components(NamedTuple):
    """What a run says it graded with: whether its answerer calls no model, and its judges' names, each
    with whether it calls no model (``judges.registry.calls_no_model``)."""

    answerer_free: bool
    judges: dict[str, bool]

    @classmethod
    def of(cls, run_extra: dict[str, Any]) -> _Components:
        from bench_nb.judges.registry import calls_no_model
        from bench_nb.models.answerers import calls_no_model as answerer_calls_no_model

        names = run_extra.get("judges")
        judges = [j for j in names if isinstance(j, str)] if isinstance(names, list) else []
        return cls(answerer_calls_no_model(run_extra.get("answerer")), {j: calls_no_model(j) for j in judges})


def _row(usage: Any, components: _Components) -> dict[str, Any]:
    usage = usage if isinstance(usage, dict) else {}
    raw_answer = usage.get("answer")
    answer: dict[str, Any] = raw_answer if isinstance(raw_answer, dict) else {}
    answer_cost = answer.get("costUsd") if answer else (0.0 if components.answerer_free else None)
    entries = {k: j for k, j in (usage.get("judges") or {}).items() if isinstance(j, dict)}
    judge_costs: list[float | None] = [j.get("costUsd") for j in entries.values()]
    # a judge the run names that left no entry: 0 when it calls no model, else unknown
    judge_costs += [0.0 if free else None for name, free in components.judges.items() if name not in entries]
    judge_cost = _sum_known(judge_costs) if judge_costs else None
    cost = None if answer_cost is None or judge_cost is None else answer_cost + judge_cost
    row = {
        "answer_input_tokens": answer.get("inputTokens"),
        "answer_output_tokens": answer.get("outputTokens"),
        "answer_cost_usd": answer_cost,
        "judge_cost_usd": judge_cost,
        "cost_usd": cost,
    }
    memory = _memory(usage.get("memory"))
    if memory:
        row.update(memory)
        row["total_cost_usd"] = _sum_known([cost, memory["memory_cost_usd"]])
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
        return _sum_known([None if (v := entry.get(key)) is None else float(v) * w for entry, w in shares])

    return {
        "memory_calls": total("calls"),
        "memory_input_tokens": total("inputTokens"),
        "memory_output_tokens": total("outputTokens"),
        "memory_cost_usd": total("costUsd"),
    }


def _sum_known(values: list[float | None]) -> float | None:
    """The sum, or None as soon as one value is unknown."""
    known = [v for v in values if v is not None]
    return sum(known, 0.0) if len(known) == len(values) else None
