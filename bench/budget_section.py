"""The compare report's budget section (issue 41) against the computation it replaced, in one process.

Baseline: the four curves the report used to compute (the table's break-even by search latency and by context
tokens, then each chart's curve again), each the definition: ``accuracy_intervals_frame`` of the capped
questions at every budget of the default grid (24 levels). Measured: the section as the notebook runs it now,
``table_budget`` and both ``chart_budget_curve`` charts from one ``ClusterBootstrap`` (each curve computed
once, every budget in one pass), and its two curves alone. Alternately, median of ``--repeat``; 3 synthetic runs x 2,000 questions.

    .venv/bin/python bench/budget_section.py [--repeat 7] [--questions 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import polars as pl

from bench_nb import charts, tables
from bench_nb.metrics import as_questions
from bench_nb.metrics.budget import default_budgets
from bench_nb.metrics.clustered import accuracy_intervals_frame
from bench_nb.metrics.uncertainty import ClusterBootstrap

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from synthetic_runs import write_synthetic_runs

KINDS = {"latency_ms": "search_ms", "context_tokens": "context_tokens"}


def per_level(q: pl.DataFrame, column: str) -> pl.DataFrame:
    value = pl.col(column).cast(pl.Float64)
    frames = []
    for b in default_budgets(q[column].cast(pl.Float64)):
        within = (value <= b).fill_null(False)
        capped = q.with_columns(
            correct=pl.col("correct") & within, score=pl.when(within).then(pl.col("score")).otherwise(0.0)
        )
        frames.append(accuracy_intervals_frame(capped).with_columns(budget=pl.lit(b)))
    return pl.concat(frames)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--questions", type=int, default=2000)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        q = as_questions(write_synthetic_runs(Path(tmp) / "runs", n_questions=args.questions))
        before, after, curves = [], [], []
        for _ in range(args.repeat + 1):  # the first pair warms up
            t = time.perf_counter()
            for _ in range(2):  # the table's curves, then the charts'
                for column in KINDS.values():
                    per_level(q, column)
            before.append(time.perf_counter() - t)
            t = time.perf_counter()
            boot = ClusterBootstrap(q)
            tables.table_budget(boot)
            for by in KINDS:
                charts.chart_budget_curve(boot, by=by)
            after.append(time.perf_counter() - t)
            t = time.perf_counter()
            for by in KINDS:
                ClusterBootstrap(q).budget_curve(by)
            curves.append(time.perf_counter() - t)
    b, a, c = (statistics.median(x[1:]) for x in (before, after, curves))
    print(
        f"runs: 3 x {args.questions} questions; median of {args.repeat}; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"four curves, per budget level (before): {b:.3f} s")
    print(f"budget section, shared curves (now):    {a:.3f} s  (table and both charts)")
    print(f"the two curves alone (now):             {c:.3f} s")
    print(f"ratio: section {a / b:.2f}x, curves {c / b:.2f}x")


if __name__ == "__main__":
    main()
