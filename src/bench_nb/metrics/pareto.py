"""The Pareto frontier of runs: accuracy (higher is better) against search latency, context tokens and cost
(lower is better).

Every run is compared on one common set of objectives: accuracy, and each cost that at least one run has a
number for. A run without a number for one of them (a run with no scored answer has no accuracy) is **not
comparable**: ``on_frontier`` is null and ``missing`` names what it lacks; it neither dominates nor is
dominated. Among the comparable runs, run B dominates run A when B is at least as good on every objective and
strictly better on one: a strict partial order on one set of objectives, so dominance never cycles and some
comparable run is always on the frontier. (Comparing each pair only on the objectives both have could
cycle and leave the frontier empty.) Dominance is decided on point estimates; the accuracy interval
(``accuracy_intervals``, clustered) is reported beside it so a reader sees when "dominated" rests on
a difference the benchmark cannot resolve. Search latency and context tokens are MemScore's (MemoryBench's
mean search duration, mean context tokens); cost is the mean recorded cost per scored question in USD (null
when no question of the run has one): ``total_cost_usd`` (answer, judges and the memory system's own model
calls) when every run with a cost reports its memory side, else ``cost_usd`` (answer and judges) for all, as
``budget_curve(by="cost")`` chooses (``metrics.budget.compared_cost``); the frame has both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike, as_questions
from bench_nb.metrics.budget import compared_cost
from bench_nb.metrics.clustered import accuracy_intervals_frame
from bench_nb.metrics.memscore import memscore_frame
from bench_nb.metrics.ordered import means_by

# objective -> +1 when higher is better, -1 when lower is better
OBJECTIVES: dict[str, int] = {
    "accuracy": 1,
    "search_ms": -1,
    "context_tokens": -1,
    "cost_usd": -1,
    "total_cost_usd": -1,
}
_COSTS = ("cost_usd", "total_cost_usd")  # one of them is compared: the total when every run has it


def _known(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def dominates(
    b: dict[str, Any], a: dict[str, Any], objectives: Sequence[str] = tuple(OBJECTIVES)[:4]
) -> bool:
    """Whether run ``b`` dominates run ``a`` on ``objectives`` (default: accuracy, search latency, context
    tokens and answer-and-judge cost): at least as good on every one and strictly better on one. False when
    either run lacks a number for one of them (not comparable)."""
    if not all(_known(a.get(k)) and _known(b.get(k)) for k in objectives):
        return False
    better = [OBJECTIVES[k] * (b[k] - a[k]) for k in objectives]
    return all(x >= 0 for x in better) and any(x > 0 for x in better)


def compared_cost_of(rows: Sequence[dict[str, Any]]) -> str:
    """The one cost column runs (rows of ``pareto_frontier``) are compared on: ``total_cost_usd`` when every
    run with a cost has it (memory side included), else ``cost_usd`` (``metrics.budget.compared_cost``)."""
    flags = {str(i): (_known(r.get("cost_usd")), _known(r.get("total_cost_usd"))) for i, r in enumerate(rows)}
    return compared_cost(flags)[0]


def compared_objectives(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The objectives every run is compared on: accuracy, and each cost that at least one run has; of the two
    costs, the one ``compared_cost_of`` picks."""
    costs = [k for k in OBJECTIVES if k != "accuracy" and any(_known(r.get(k)) for r in rows)]
    drop = "cost_usd" if compared_cost_of(rows) == "total_cost_usd" else "total_cost_usd"
    return ["accuracy"] + [k for k in costs if k != drop]


def pareto_frontier_frame(questions: QuestionsLike) -> pl.DataFrame:
    """One row per run: ``run_id, provider, accuracy, ci_low, ci_high`` (cluster bootstrap),
    ``search_ms, context_tokens, cost_usd, total_cost_usd``, ``on_frontier`` (null for a run that is not comparable),
    ``dominated_by`` (the runs that dominate it, comma-separated) and ``missing`` (the objectives a run that
    is not comparable lacks, comma-separated; null for the others); frontier runs first, then by accuracy.
    The objectives: accuracy, and each cost at least one run has (module docstring)."""
    frame = as_questions(questions)
    intervals = accuracy_intervals_frame(frame)
    return frontier_of(frame, intervals)


pareto_frontier = with_backend(pareto_frontier_frame, "pareto_frontier")


def frontier_of(frame: pl.DataFrame, intervals: pl.DataFrame) -> pl.DataFrame:
    """``pareto_frontier_frame`` from a polars questions frame and its ``accuracy_intervals_frame``."""
    ms = memscore_frame(frame).select(
        "run_id", "provider", search_ms="latency_ms", context_tokens="context_tokens"
    )
    scored = frame.filter(pl.col("status") == "evaluated") if "status" in frame.columns else frame
    cost = means_by(  # added in one fixed order (metrics.ordered): the same bits on every call
        scored.with_columns(pl.lit(None, pl.Float64).alias(c) for c in _COSTS if c not in frame.columns),
        ["run_id"],
        _COSTS,
    )
    table = (
        ms.join(
            intervals.select("run_id", "accuracy", "ci_low", "ci_high"),
            on="run_id",
            how="left",
            maintain_order="left",
        )
        .join(cost, on="run_id", how="left", maintain_order="left")
        .with_columns(pl.col("search_ms").cast(pl.Float64), pl.col("context_tokens").cast(pl.Float64))
    )
    rows = table.to_dicts()
    objectives = compared_objectives(rows)
    missing = [[k for k in objectives if not _known(r.get(k))] for r in rows]
    comparable = [r for r, m in zip(rows, missing, strict=True) if not m]
    dominated_by = [
        ", ".join(b["run_id"] for b in comparable if b is not a and dominates(b, a, objectives)) for a in rows
    ]
    table = table.with_columns(
        on_frontier=pl.Series(
            [None if m else not d for d, m in zip(dominated_by, missing, strict=True)], dtype=pl.Boolean
        ),
        dominated_by=pl.Series(dominated_by, dtype=pl.Utf8),
        missing=pl.Series([", ".join(m) or None for m in missing], dtype=pl.Utf8),
    ).sort(["on_frontier", "accuracy"], descending=True, nulls_last=True, maintain_order=True)
    cols = ["run_id", "provider", "accuracy", "ci_low", "ci_high", "search_ms", "context_tokens", *_COSTS]
    return table.select(*cols, "on_frontier", "dominated_by", "missing")
