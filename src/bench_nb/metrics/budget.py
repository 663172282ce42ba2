"""Accuracy under a budget: LongMemEval-V2's LAFS, and budget curves for any benchmark.

Definitions (docs/statistics.md, "Accuracy under a budget"):

- **LAFS** (latency-aware frontier score, LongMemEval-V2's leaderboard metric, ``leaderboard/compute_lafs.py``):
  each run is an operating point (accuracy in percentage points, mean memory query latency in seconds); the
  best accuracy among the points whose latency is within a budget ``T`` is a step function of ``T`` (``floor``
  where no point is within it), and LAFS is its average over ``T`` uniform in log latency between ``t_min`` and
  ``t_max`` (1 and 200 seconds on the leaderboard). Several runs of one system (``by=``) are its operating
  points; against a reference frontier, the gain is ``LAFS(reference ∪ system) - LAFS(reference)``.
- **Budget curve**: a run's accuracy when every question whose search latency (context tokens, cost) exceeds
  the budget counts as not answered, at each budget, with the clustered interval of ``accuracy_intervals``;
  the break-even budget is the one from which on the full-context baseline (under the same budget) is at
  least as accurate as the run.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from bench_nb.benchmarks.registry import benchmark_traits
from bench_nb.frames.backend import once_per_frame, with_backend
from bench_nb.frames.questions import QuestionsLike, as_columns, as_questions
from bench_nb.frames.verdicts import with_verdicts

T_MIN = 1.0  # seconds: LongMemEval-V2's leaderboard budgets, compute_lafs.py's T_MIN and T_MAX
T_MAX = 200.0

# LongMemEval-V2's released reference frontier per tier (accuracy in points, latency in seconds), from its
# paper's main results table as compute_lafs.py hard-codes it.
REFERENCE_FRONTIERS: dict[str, tuple[tuple[str, float, float], ...]] = {
    "small": (
        ("RAG: query -> slice + notes", 51.0, 0.2),
        ("Codex", 69.9, 177.2),
        ("AgentRunbook-R", 58.6, 26.9),
        ("AgentRunbook-C", 74.9, 108.3),
    ),
    "medium": (
        ("RAG: query -> slice + notes", 45.9, 0.3),
        ("Codex", 68.7, 185.8),
        ("AgentRunbook-R", 57.0, 25.8),
        ("AgentRunbook-C", 70.1, 139.9),
    ),
}

# budget_curve's ``by`` -> the questions frame's column
BUDGET_COLUMNS = {"latency_ms": "search_ms", "context_tokens": "context_tokens", "cost": "cost_usd"}
DEFAULT_GRID = 24  # budgets on the default grid
_CURVE_SCHEMA = {
    "run_id": pl.Utf8,
    "accuracy": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "n": pl.Int64,
    "clusters": pl.Int64,
    "interval": pl.Utf8,
    "budget": pl.Float64,
    "full_context_accuracy": pl.Float64,
    "break_even": pl.Float64,
}


@dataclass(frozen=True)
class OperatingPoint:
    """One operating point: ``accuracy`` in percentage points, ``latency`` in seconds."""

    name: str
    accuracy: float
    latency: float


def frontier(points: Iterable[OperatingPoint]) -> list[OperatingPoint]:
    """The points no faster (or equally fast) point matches in accuracy, by latency."""
    best = -math.inf
    kept = []
    for p in sorted(points, key=lambda p: (p.latency, -p.accuracy)):
        if p.accuracy > best:
            kept.append(p)
            best = p.accuracy
    return kept


def best_under(points: Sequence[OperatingPoint], budget: float, floor: float = 0.0) -> float:
    """The best accuracy among ``points`` with latency at most ``budget``; ``floor`` when none is."""
    return max((p.accuracy for p in points if p.latency <= budget), default=floor)


def lafs_of(
    points: Iterable[OperatingPoint], budgets: Sequence[float] = (T_MIN, T_MAX), floor: float = 0.0
) -> float:
    """LAFS of a set of operating points.

    With two budgets ``(t_min, t_max)``: the exact average of the best-accuracy step function over log
    latency between them (compute_lafs.py's ``lafs``). With more: the plain average of the step function at
    each budget given.

    Raises:
        ValueError: a latency is not positive, or the budgets are not positive and increasing.
    """
    pts = list(points)
    for p in pts:
        if not p.latency > 0:
            raise ValueError(f"latency must be positive, got {p.latency} for {p.name!r}")
    if len(budgets) < 2 or any(not b > 0 for b in budgets) or list(budgets) != sorted(set(budgets)):
        raise ValueError(f"budgets must be two or more positive, increasing seconds, not {list(budgets)}")
    front = frontier(pts)
    if len(budgets) > 2:
        return sum(best_under(front, b, floor) for b in budgets) / len(budgets)
    t_min, t_max = budgets
    edges = sorted({t_min, t_max, *(p.latency for p in front if t_min < p.latency < t_max)})
    area = sum(best_under(front, lo, floor) * math.log(hi / lo) for lo, hi in itertools.pairwise(edges))
    return area / math.log(t_max / t_min)


def other_benchmarks(q: pl.DataFrame) -> list[str]:
    """The benchmarks of the frame's runs that are not LongMemEval-V2 (sorted; empty when the frame names none):
    LAFS is LongMemEval-V2's leaderboard metric, and its reference frontiers are scores on its questions."""
    if "benchmark" not in q.columns:
        return []
    names = q["benchmark"].drop_nulls().cast(pl.Utf8).unique().to_list()
    return sorted(b for b in names if not benchmark_traits(b).lafs_reference)


def _check_reference(reference: Any, q: pl.DataFrame) -> None:
    """Refuse a named reference frontier (LongMemEval-V2's) for runs of another benchmark: its gain would
    compare their accuracy with accuracy on other questions."""
    others = other_benchmarks(q) if isinstance(reference, str) else []
    if others:
        runs = q.filter(pl.col("benchmark").is_in(others))["run_id"].unique(maintain_order=True).to_list()
        raise ValueError(
            f"reference={reference!r} is LongMemEval-V2's reference frontier (its {reference} tier's scores on "
            f"its own questions), and run{'s' if len(runs) != 1 else ''} {', '.join(map(repr, runs[:3]))} "
            f"{'are' if len(runs) != 1 else 'is'} on {', '.join(map(repr, others))}: a gain against it would "
            "compare accuracy on different questions. Leave reference out (LAFS of the runs among themselves) "
            "or give your own (accuracy_pct, latency_s) points measured on the same benchmark"
        )


def _reference_points(reference: str | Sequence[tuple[float, float]] | None) -> list[OperatingPoint] | None:
    if reference is None:
        return None
    if isinstance(reference, str):
        if reference not in REFERENCE_FRONTIERS:
            raise ValueError(
                f"reference must be one of {sorted(REFERENCE_FRONTIERS)} or points, not {reference!r}"
            )
        return [OperatingPoint(*p) for p in REFERENCE_FRONTIERS[reference]]
    return [OperatingPoint(f"reference {i + 1}", float(a), float(t)) for i, (a, t) in enumerate(reference)]


def run_points(data: Any, full_set: bool = False) -> pl.DataFrame:
    """Each run's operating point: ``run_id, provider, accuracy_pct, latency_s, n``.

    By default over its questions with a verdict (``frames.verdicts``: evaluated, scored; accuracy is the
    mean score, failed and unscored questions left out). With ``full_set``, over every record of the run
    (LongMemEval-V2's ``overall_full_set``): a failed, pending or unscored question counts as 0, so
    ``n`` is every question. Latency: the mean search duration of the counted questions that have one, in
    seconds."""
    # once per frame in a report: the budget table asks for the points, and LAFS for them again
    return once_per_frame(
        f"run points, full set {full_set}", as_questions(data), lambda q: _points(q, full_set)
    )


def _points(questions: pl.DataFrame, full_set: bool) -> pl.DataFrame:
    q = with_verdicts(questions)
    provider = pl.col("provider").first() if "provider" in q.columns else pl.lit(None, pl.Utf8)
    kept = (q if full_set else q.filter(pl.col("score").is_not_null())).with_columns(
        _value=pl.col("score").fill_null(0.0) if full_set else pl.col("score"),
        _ms=pl.col("search_ms").cast(pl.Float64) if "search_ms" in q.columns else pl.lit(None, pl.Float64),
    )
    from bench_nb.metrics.ordered import means_by  # numpy: imported when the points are computed

    # the means added in one fixed order (metrics.ordered): the same bits on every call
    means = means_by(kept, ["run_id"], ["_value", "_ms"])
    return (
        kept.group_by("run_id", maintain_order=True)
        .agg(provider=provider, n=pl.len())
        .join(means, on="run_id", how="left", maintain_order="left")
        .select(
            "run_id", "provider", accuracy_pct=pl.col("_value") * 100, latency_s=pl.col("_ms") / 1000, n="n"
        )
    )


def lafs_frame(
    questions: QuestionsLike,
    budgets: Sequence[float] = (T_MIN, T_MAX),
    *,
    by: str | None = None,
    reference: str | Sequence[tuple[float, float]] | None = None,
    floor: float = 0.0,
    full_set: bool = False,
) -> pl.DataFrame:
    """LAFS per run (or per system of several runs), as LongMemEval-V2's leaderboard computes it.

    Columns: ``system`` (the run id, or the ``by`` value), ``runs`` (its operating points), ``points``
    (``"74.9% @ 108.3s, ..."``), ``lafs`` (percentage points), and with ``reference``: ``reference_lafs``,
    ``lafs_gain`` (LAFS of the reference and the system's points together, less the reference's); ``note``
    says why a run was left out (no search latency, or a latency of 0). A system with no placeable run has a
    null LAFS.

    Args:
        questions: a questions frame or run sources.
        budgets: ``(t_min, t_max)`` in seconds, integrated over log latency (the leaderboard's 1 to 200 s),
            or three or more budgets, averaged as given.
        by: a column grouping runs into one system with several operating points (e.g. ``"provider"``).
        reference: ``"small"`` or ``"medium"`` (LongMemEval-V2's released reference frontier: refused, with a
            ``ValueError`` naming them, for runs whose ``benchmark`` is not LongMemEval-V2) or a list of
            ``(accuracy_pct, latency_s)`` points.
        floor: the accuracy under a budget no point is within.
        full_set: count every record of a run, a failed or unscored question as wrong (LongMemEval-V2's
            ``overall_full_set``: 60 right, 30 wrong and 10 failed give 60.0%). The default counts the
            questions with a verdict (66.7% there), as every other accuracy in bench_nb does.
    """
    ref = _reference_points(reference)
    q = as_questions(questions)
    _check_reference(reference, q)
    pts = run_points(q, full_set)
    if by is not None:
        as_columns(by, q)  # a column of the frame, or ValueError naming it and the columns
        keys = q.group_by("run_id", maintain_order=True).agg(pl.col(by).first().cast(pl.Utf8).alias("system"))
        pts = pts.join(keys, on="run_id", how="left")
    else:
        pts = pts.with_columns(system=pl.col("run_id"))
    rows = []
    for (system,), group in pts.group_by("system", maintain_order=True):
        placed, notes = [], []
        for r in group.iter_rows(named=True):
            lat = r["latency_s"]
            if lat is None or (isinstance(lat, float) and math.isnan(lat)):
                notes.append(f"{r['run_id']}: no search latency")
            elif lat <= 0:
                notes.append(f"{r['run_id']}: search latency 0")
            else:
                placed.append(OperatingPoint(r["run_id"], r["accuracy_pct"], lat))
        row: dict[str, Any] = {
            "system": system,
            "runs": group.height,
            "points": ", ".join(f"{p.accuracy:.1f}% @ {p.latency:.3g}s" for p in placed),
            "lafs": lafs_of(placed, budgets, floor) if placed else None,
        }
        if ref is not None:
            row["reference_lafs"] = lafs_of(ref, budgets, floor)
            row["lafs_gain"] = (
                lafs_of(ref + placed, budgets, floor) - row["reference_lafs"] if placed else None
            )
        row["note"] = "; ".join(notes)
        rows.append(row)
    schema: dict[str, Any] = {"system": pl.Utf8, "runs": pl.Int64, "points": pl.Utf8, "lafs": pl.Float64}
    if ref is not None:
        schema |= {"reference_lafs": pl.Float64, "lafs_gain": pl.Float64}
    schema["note"] = pl.Utf8
    return pl.DataFrame(rows, schema=schema, orient="row")


lafs = with_backend(lafs_frame, "lafs")


def default_budgets(values: pl.Series, points: int = DEFAULT_GRID) -> list[float]:
    """Budgets spaced evenly in log scale from the smallest positive value to the largest (evenly when
    nothing is positive), ending exactly at the largest."""
    known = values.drop_nulls().drop_nans() if values.dtype.is_float() else values.drop_nulls()
    if known.is_empty():
        return []
    hi = float(known.max())  # type: ignore[arg-type]
    positive = known.filter(known > 0)
    if positive.is_empty() or hi <= 0:
        return [hi]
    lo = float(positive.min())  # type: ignore[arg-type]
    if lo == hi:
        return [hi]
    step = (math.log(hi) - math.log(lo)) / (points - 1)
    grid = [math.exp(math.log(lo) + i * step) for i in range(points - 1)] + [hi]
    return sorted(set(grid))


def compared_cost(runs: dict[str, tuple[bool, bool]]) -> tuple[str, list[str]]:
    """The cost column runs are compared on, and the runs that make it ``cost_usd`` (the costed runs whose
    memory side is not known). ``runs``: run id -> (has a ``cost_usd``, has a ``total_cost_usd``).

    ``total_cost_usd`` (answer, judges and the provider's own calls) when every run that has a cost has it,
    else ``cost_usd`` (answer and judges) for all, so that no run is charged for its memory side while
    another is not. A run with no cost at all (an imported run that records none) does not decide: it is
    left out of a budget curve and not comparable on the frontier either way."""
    costed = {r: total for r, (cost, total) in runs.items() if cost or total}
    if costed and all(costed.values()):
        return "total_cost_usd", []
    return "cost_usd", [r for r, total in costed.items() if not total]


def cost_column(q: pl.DataFrame) -> str:
    """The column ``by="cost"`` reads (``compared_cost``); a warning names the costed runs whose memory side
    is not known when another run's is."""
    if "total_cost_usd" not in q.columns or q.is_empty():
        return "cost_usd"
    known = _known_costs(q)
    column, silent = compared_cost(known)
    if silent and any(total for _, total in known.values()):
        warnings.warn(
            f"budget_curve by cost: answer and judge cost only (cost_usd), since {silent} do not report their "
            "memory-side cost (total_cost_usd is null for them)",
            stacklevel=4,
        )
    return column


def _known_costs(q: pl.DataFrame) -> dict[str, tuple[bool, bool]]:
    """Run id -> (has a ``cost_usd``, has a ``total_cost_usd``): what ``compared_cost`` decides on."""
    known = q.group_by("run_id", maintain_order=True).agg(
        pl.col("cost_usd").is_not_null().any().alias("cost"),
        pl.col("total_cost_usd").is_not_null().any().alias("total"),
    )
    return {r["run_id"]: (r["cost"], r["total"]) for r in known.iter_rows(named=True)}


def why_no_cost_curve(questions: Any) -> str | None:
    """None when a budget curve by cost says something: at least two runs have a known cost in the compared
    cost column (``compared_cost``) and some run's cost is above $0; else one line saying why it is not drawn
    (no run records a cost, only one does, or every known cost is $0, as offline runs are)."""
    q = as_questions(questions)
    if "cost_usd" not in q.columns or "total_cost_usd" not in q.columns or q.is_empty():
        return "Cost: no curve: no run records a cost."
    column, _ = compared_cost(_known_costs(q))
    costs = q.group_by("run_id", maintain_order=True).agg(pl.col(column).max()).drop_nulls(column)
    if costs.height == 0:
        return "Cost: no curve: no run records a cost (imported runs and unpriced model calls record none)."
    if costs.height == 1:
        return f"Cost: no curve: only {costs['run_id'][0]} records a cost, and a curve compares two or more runs."
    if float(costs[column].max()) <= 0:  # type: ignore[arg-type]
        return (
            "Cost: no curve: every run with a known cost costs $0 (no model calls: offline answerer and judges), "
            "so a cost budget changes nothing."
        )
    return None


def budget_curve_frame(
    questions: QuestionsLike,
    by: str = "latency_ms",
    budgets: Sequence[float] | None = None,
    *,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Accuracy at each budget, per run, with clustered intervals, and the break-even against full context.

    Under a budget ``b`` a question counts as answered correctly only when it was and its ``by`` value is at
    most ``b`` (a question with no value counts as over budget); the question set is unchanged, so the last
    budget of the default grid (the largest value) gives each run's ordinary accuracy. Columns: ``run_id,
    budget, accuracy, ci_low, ci_high, n, clusters, interval`` (as ``accuracy_intervals``),
    ``full_context_accuracy`` (the first ``full-context`` run's accuracy under the same budget) and
    ``break_even`` (the budget from which on, to the end of the grid, full context is at least as accurate
    as the run under the same budget; null when it is behind at the last budget, or there is no full-context
    run).

    Args:
        questions: a questions frame or run sources.
        by: ``"latency_ms"`` (search latency), ``"context_tokens"``, ``"cost"`` (USD: ``total_cost_usd``,
            answer, judges and the provider's own model calls, when every run reports it; else ``cost_usd``,
            answer and judges, with a warning: ``cost_column``), or any numeric column of the frame.
        budgets: the budgets, in ``by``'s unit; default: 24 steps even in log scale up to the largest value.
        confidence: the intervals' coverage.
    """
    # numpy: imported when a curve is drawn
    import numpy as np

    from bench_nb.metrics.clustered import ClusterSums, intervals_of, outcomes, per_cluster
    from bench_nb.metrics.ordered import segment_spread, segment_sums

    q = as_questions(questions)
    column = cost_column(q) if by == "cost" else BUDGET_COLUMNS.get(by, by)
    if column not in q.columns:
        raise ValueError(f"by={by!r}: the frame has no {column!r} column (one of {sorted(BUDGET_COLUMNS)})")
    value = pl.col(column).cast(pl.Float64)
    has_value = q.group_by("run_id", maintain_order=True).agg(value.is_not_null().any().alias("known"))
    blind = has_value.filter(~pl.col("known"))["run_id"].to_list()
    if blind:
        warnings.warn(f"budget_curve by {by}: left out {blind}, which record no {column}", stacklevel=3)
        q = q.filter(~pl.col("run_id").is_in(blind))
    grid = sorted(set(budgets)) if budgets is not None else default_budgets(q[column].cast(pl.Float64))
    if not grid:
        return pl.DataFrame(schema=_CURVE_SCHEMA)
    # every budget at once: the questions that count checked and sorted per run and haystack once, then each
    # budget's per-haystack sums taken from that order (a question over the budget counts 0); a run with the
    # same questions within two budgets has the same sums there, and its interval is computed once
    ids = [pl.col("run_id").cast(pl.Utf8), pl.col("question_id").cast(pl.Utf8)]
    data = outcomes(q).join(q.select(*ids, _spent=value), on=["run_id", "question_id"], how="left")
    per = per_cluster(data, ["run_id"])
    spent, scored = per.rows["_spent"].to_numpy(), per.rows["value"].to_numpy()
    groups, rows = [], []
    seen: dict[tuple[Any, ...], str] = {}  # (run, its questions within a budget) -> their sums' key
    for b in grid:
        within = spent <= b  # no value (NaN): over every budget
        capped = np.where(within, scored, 0.0)
        sums, spread = segment_sums(capped, per.cluster_rows), segment_spread(capped, per.group_rows)
        for g, (name, r, n) in enumerate(
            zip(per.names, per.groups, per.per_group(within.astype(int)), strict=True)
        ):
            if (*name, n) not in seen:
                seen[(*name, n)] = key = str(len(seen))
                groups.append(
                    ((key, *name), ClusterSums(per.ids[r], sums[r], per.counts[r], float(spread[g])))
                )
            rows.append((float(b), seen[(*name, n)], *name))
    ci = intervals_of(data, ["_sums", "run_id"], "clustered", confidence, groups)
    at = pl.DataFrame(rows, schema={"budget": pl.Float64, "_sums": pl.Utf8, "run_id": pl.Utf8}, orient="row")
    curve = _with_break_even(q, at.join(ci, on=["_sums", "run_id"], how="left", maintain_order="left"))
    return curve.select(list(_CURVE_SCHEMA)).cast(_CURVE_SCHEMA)  # type: ignore[arg-type]


budget_curve = with_backend(budget_curve_frame, "budget_curve")


def _with_break_even(q: pl.DataFrame, curve: pl.DataFrame) -> pl.DataFrame:
    """Add ``full_context_accuracy`` (the first full-context run's accuracy under the same budget) and each
    run's ``break_even`` budget."""
    fc_runs = (
        q.filter(pl.col("provider") == "full-context")["run_id"].unique(maintain_order=True).to_list()
        if "provider" in q.columns
        else []
    )
    if not fc_runs:
        return curve.with_columns(
            full_context_accuracy=pl.lit(None, pl.Float64), break_even=pl.lit(None, pl.Float64)
        )
    fc = curve.filter(pl.col("run_id") == fc_runs[0]).select("budget", full_context_accuracy="accuracy")
    curve = curve.join(fc, on="budget", how="left")
    behind = (pl.col("full_context_accuracy") < pl.col("accuracy")).fill_null(True)
    # from which budget on full context stays at least as accurate: the budget after the last one it is behind
    even = (
        curve.filter(pl.col("run_id") != fc_runs[0])
        .sort("budget")
        .group_by("run_id")
        .agg(
            break_even=pl.col("budget")
            .filter(~behind & (pl.col("budget") > pl.col("budget").filter(behind).max()).fill_null(True))
            .min()
        )
    )
    return curve.join(even, on="run_id", how="left")
