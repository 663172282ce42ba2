"""Accuracy under a budget: LAFS (LongMemEval-V2's leaderboard metric) and where full context catches up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from bench_nb.metrics import as_questions
from bench_nb.metrics.budget import T_MAX, T_MIN, budget_curve_frame, lafs_frame, other_benchmarks, run_points
from bench_nb.tables.html import Cell, Table, labels_of, missing, pct, render, run_cell
from bench_nb.text import labelled_warnings

if TYPE_CHECKING:
    from bench_nb.metrics.uncertainty import ClusterBootstrap


def _break_even(q: pl.DataFrame, by: str, boot: ClusterBootstrap | None) -> dict[str, float | None]:
    column = {"latency_ms": "search_ms", "context_tokens": "context_tokens"}[by]
    if column not in q.columns or q[column].drop_nulls().is_empty():
        return {}
    curve = budget_curve_frame(q, by) if boot is None else boot.budget_curve(by)
    return dict(curve.group_by("run_id").agg(pl.col("break_even").first()).iter_rows())


BASELINES = ("full-context", "no-memory")


def _budget(x: float | None, provider: str | None) -> str:
    """A break-even budget to three significant digits; ``—`` for none, and for the baselines themselves."""
    if x is None or missing(x) or provider in BASELINES:
        return "—"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def table_budget(data: Any) -> Table:
    """Per run: accuracy, mean search latency, LAFS over LongMemEval-V2's 1-200 s budgets (headed "LAFS formula †"
    with a note saying it is no leaderboard score when the runs are on another benchmark), and the search
    latency and context-token budgets at which the full-context baseline catches up with it (``—``: never on
    the runs' own range, or no full-context run). ``data``: run sources, a questions frame, or a
    ``ClusterBootstrap`` (its budget curves shared with ``chart_budget_curve``)."""
    from bench_nb.metrics.uncertainty import ClusterBootstrap  # numpy: imported when the table is built

    boot = data if isinstance(data, ClusterBootstrap) else None
    q = as_questions(data if boot is None else boot.questions)
    labels = labels_of(q)
    with labelled_warnings(labels):  # "left out [...]": runs by their labels, as in the table
        points = run_points(q)
        scores = dict(lafs_frame(q).select("system", "lafs").iter_rows())
        even_ms, even_tok = _break_even(q, "latency_ms", boot), _break_even(q, "context_tokens", boot)
    frame = points.with_columns(
        lafs=pl.col("run_id").replace_strict(scores, default=None, return_dtype=pl.Float64),
        break_even_ms=pl.col("run_id").replace_strict(even_ms, default=None, return_dtype=pl.Float64),
        break_even_tokens=pl.col("run_id").replace_strict(even_tok, default=None, return_dtype=pl.Float64),
    )
    others = other_benchmarks(q)
    rows = [
        [
            run_cell(r["run_id"], labels),
            Cell(pct(r["accuracy_pct"] / 100), "num"),
            Cell("n/a" if missing(r["latency_s"]) else f"{r['latency_s'] * 1000:,.0f}", "num"),
            Cell("n/a" if missing(r["lafs"]) else f"{r['lafs']:.1f}", "num"),
            Cell(_budget(r["break_even_ms"], r["provider"]), "num"),
            Cell(_budget(r["break_even_tokens"], r["provider"]), "num"),
        ]
        for r in frame.iter_rows(named=True)
    ]
    html = render(
        [
            "run",
            "accuracy",
            "mean search ms",
            "LAFS formula †" if others else "LAFS",
            "full context catches up at (ms)",
            "… (context tokens)",
        ],
        rows,
        caption="Accuracy under a budget",
        notes=[
            f"LAFS: LongMemEval-V2's leaderboard score, the best accuracy within a latency budget averaged over "
            f"budgets from {T_MIN:g} to {T_MAX:g} s on a log scale; a run faster than {T_MIN:g} s scores its "
            "accuracy. Latency here is the plain mean search time (MemScore's latency drops zero durations).",
            "Catches up: the budget from which on the full-context baseline, with over-budget questions counted "
            "as not answered, is at least as accurate as the run under the same budget (— : still behind at the "
            "largest budget the runs reach).",
            *(
                [
                    f"† Not a leaderboard score: these runs are on {', '.join(others)}, not LongMemEval-V2; the "
                    "column applies LAFS's formula to their own accuracy and latency, to compare them with each "
                    "other only (LongMemEval-V2's leaderboard and reference frontiers score its own questions)."
                ]
                if others
                else []
            ),
        ],
    )
    return Table(frame, html)
