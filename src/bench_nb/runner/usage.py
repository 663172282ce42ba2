"""Tokens and cost of the model calls a run made: per question, and summed per run.

Question-level ``benchNb.usage`` (one entry per component that called a model)::

    {"answer": {"model": "gpt-4o-mini", "calls": 1, "inputTokens": 812, "outputTokens": 9,
                "costUsd": 0.0001272, "cached": false},
     "judges": {"gpt-4o": {"model": "gpt-4o", "calls": 1, "inputTokens": 301, "outputTokens": 24,
                           "costUsd": 0.0009925, "cached": false}}}

Run-level ``benchNb.usage`` sums them: ``answer``, ``judges.<name>`` and ``total``, each
``{calls, cachedCalls, inputTokens, outputTokens, costUsd, unpricedCalls}``.

Memory-side usage (the provider's own model calls, ``providers.usage``) sits beside them, only for a
provider that reports it (``reports_usage``)::

    question: "memory": {"ingest": {<entry>, "sharedBy": 3},   # the haystack's whole ingest, unsplit
                         "search": {<entry>}}                   # this question's search
    run:      "memory": {"ingest": {sums}, "search": {sums}, "total": {sums}}

An ingest serves every question of its container: each of them carries the container's whole entry with
``sharedBy`` (how many of the run's questions share it), so a question's share is the entry divided by
``sharedBy`` (the frames' ``memory_*`` columns) and the run counts each container's ingest once. The run's
``total`` stays answer and judges; ``memory.total`` is the memory side.

Conventions: ``costUsd`` is the list price of the tokens (``bench_nb.models.prices``), also for a reply
replayed from the response cache (``cached: true``: nothing was spent now; it is what the call costs to
make). A price the table does not know is ``costUsd: null`` for the question and is counted in the run's
``unpricedCalls`` (its cost is left out of the sum, never counted as 0). A component that calls no model
(the extractive answerer, the ``f1`` and ``contains`` judges) records nothing: no entry, rather than zeros,
so "no model" and "free" stay distinguishable. Only calls whose results the run kept are counted (a judge
call of an evaluation that failed and was redone is not).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bench_nb.judges.base import Judge, is_replicable
from bench_nb.records import Answer, Question, Verdict

_SUMMED = ("calls", "cachedCalls", "inputTokens", "outputTokens", "costUsd", "unpricedCalls")


def answer_usage(answer: Answer) -> dict[str, Any] | None:
    """The answer call's usage entry, or None when the answerer called no model."""
    if answer.input_tokens is None and answer.output_tokens is None and answer.cost_usd is None:
        return None
    return {
        "model": answer.model,
        "calls": 1,
        "inputTokens": answer.input_tokens,
        "outputTokens": answer.output_tokens,
        "costUsd": answer.cost_usd,
        "cached": bool(answer.cached),
    }


def calls_usage(completions: Sequence[Any]) -> dict[str, Any] | None:
    """One judge's usage entry from the model calls of one grading (``Graded.completions``), or None.

    ``cached`` is true when every call came from the cache; ``costUsd`` is None when any call's price is
    unknown.
    """
    if not completions:
        return None
    costs = [c.cost_usd for c in completions]
    return {
        "model": completions[0].model,
        "calls": len(completions),
        "inputTokens": sum(c.input_tokens or 0 for c in completions),
        "outputTokens": sum(c.output_tokens or 0 for c in completions),
        "costUsd": None if any(c is None for c in costs) else sum(costs),
        "cached": all(c.cached for c in completions),
    }


def _add(total: dict[str, Any], entry: Mapping[str, Any]) -> None:
    calls = int(entry.get("calls") or 0)
    total["calls"] += calls
    total["cachedCalls"] += calls if entry.get("cached") else 0
    total["inputTokens"] += int(entry.get("inputTokens") or 0)
    total["outputTokens"] += int(entry.get("outputTokens") or 0)
    cost = entry.get("costUsd")
    if cost is None:
        total["unpricedCalls"] += calls
    else:
        total["costUsd"] += float(cost)


def _zero() -> dict[str, Any]:
    return dict.fromkeys(_SUMMED, 0) | {"costUsd": 0.0}


def memory_usage(phase: str, entry: Mapping[str, Any] | None, shared_by: int = 1) -> dict[str, Any] | None:
    """A question's ``usage`` update for a provider's ingest or search entry (None: nothing reported)."""
    if entry is None:
        return None
    return {"memory": {phase: dict(entry) | ({"sharedBy": shared_by} if phase == "ingest" else {})}}


def run_usage(
    question_extras: Iterable[Mapping[str, Any] | None], containers: Iterable[str | None] = ()
) -> dict[str, Any] | None:
    """The run-level sums of the questions' ``benchNb.usage`` (None when no question used a model).

    ``containers``: each question's container tag, in the same order, so a container's ingest is counted
    once (without them, each ingest entry counts once per question that carries it).
    """
    answer: dict[str, Any] | None = None
    judges: dict[str, dict[str, Any]] = {}
    memory: dict[str, dict[str, Any]] = {}
    ingested: set[str] = set()
    total = _zero()
    tags = iter(containers)
    for extra in question_extras:
        tag = next(tags, None)
        usage = (extra or {}).get("usage")
        if not isinstance(usage, Mapping):
            continue
        mem = usage.get("memory")
        if isinstance(mem, Mapping):
            for phase in ("ingest", "search"):
                entry = mem.get(phase)
                if not isinstance(entry, Mapping) or (
                    phase == "ingest" and tag is not None and tag in ingested
                ):
                    continue
                if phase == "ingest" and tag is not None:
                    ingested.add(tag)
                _add(memory.setdefault(phase, _zero()), entry)
                _add(memory.setdefault("total", _zero()), entry)
        a = usage.get("answer")
        if isinstance(a, Mapping):
            answer = answer or _zero()
            _add(answer, a)
            _add(total, a)
        for name, entry in (usage.get("judges") or {}).items():
            if isinstance(entry, Mapping):
                _add(judges.setdefault(name, _zero()), entry)
                _add(total, entry)
    if answer is None and not judges and not memory:
        return None
    out: dict[str, Any] = {}
    if answer is not None:
        out["answer"] = _rounded(answer)
    if judges:
        out["judges"] = {name: _rounded(v) for name, v in judges.items()}
    if answer is not None or judges:
        out["total"] = _rounded(total)
    if memory:
        out["memory"] = {p: _rounded(memory[p]) for p in ("ingest", "search", "total") if p in memory}
    return out


def _rounded(sums: dict[str, Any]) -> dict[str, Any]:
    return {**sums, "costUsd": round(sums["costUsd"], 9)}


def judge_replicates_with_usage(
    judge: Judge, question: Question, hypothesis: str, replicates: int
) -> tuple[list[Verdict], dict[str, Any] | None]:
    """The judge's verdicts on replicates 1..n (a replicable judge: ``judges.base.is_replicable``; any other
    is graded once) and the usage of all their model calls.

    A judge that calls a model offers ``grade(question, hypothesis)`` returning an object with ``verdict``
    and ``completions`` (``bench_nb.judges.llm.Graded``); any other judge is asked ``judge(...)`` and
    records no usage.
    """
    grade = getattr(judge, "grade", None)
    if not callable(grade):
        return [judge.judge(question, hypothesis)], None
    if replicates <= 1 or not is_replicable(judge):
        graded = [grade(question, hypothesis)]
    else:
        graded = [grade(question, hypothesis, replicate=n) for n in range(1, replicates + 1)]
    return [g.verdict for g in graded], calls_usage([c for g in graded for c in g.completions])
