"""Latency statistics per phase.

Two definitions, named apart so nobody mixes them:

- ``memorybench_stats``: MemoryBench's exact rule (index ``floor(q*n)`` into the ascending list, upper
  median, JavaScript rounding of mean and population standard deviation, zero or missing durations
  skipped). Its ``median``/``p95``/``p99`` are what MemoryBench's report.json shows.
- ``p50_linear`` / ``p95_linear`` in ``latency_df``: the usual linearly interpolated percentiles
  (numpy's and polars' ``linear`` method), better behaved on small samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike, as_columns, as_questions
from bench_nb.runformat.format import PHASES
from bench_nb.runformat.latency import memorybench_stats

LATENCY_PHASES = (*PHASES, "total")


def latency_stats_frame(data: QuestionsLike, *, by: str | Sequence[str] = ("run_id",)) -> pl.DataFrame:
    """Latency per phase: MemoryBench's statistics and interpolated p50/p95, each clearly named; over evaluated
    questions, one row per (group, phase).

    Columns: ``phase, count, min, max, mean (JS-rounded, as MemoryBench reports it), median_memorybench,
    p95_memorybench, p99_memorybench, std_dev, p50_linear, p95_linear, mean_exact`` (the mean unrounded:
    beside min and max of a fast phase, 0.039 and 0.170, the rounded mean reads 0) plus the ``by`` columns.

    ``by``: the columns the rows are per (one name or several; default ``run_id``), e.g. ``by="provider"``;
    a name the questions frame lacks raises ``ValueError`` naming its columns.
    """
    questions = as_questions(data)
    evaluated = questions.filter(pl.col("status") == "evaluated")
    rows: list[dict[str, Any]] = []
    keys = as_columns(by, questions)
    groups = evaluated.partition_by(keys, as_dict=True, maintain_order=True) if len(evaluated) else {}
    for key, group in groups.items():
        for phase in LATENCY_PHASES:
            col = f"{phase}_ms"
            values = [v for v in group[col].to_list() if v]
            stats = memorybench_stats(values)
            series = pl.Series(values, dtype=pl.Float64)
            row: dict[str, Any] = dict(zip(keys, key, strict=True))
            row.update(
                phase=phase,
                count=stats["count"],
                min=float(stats["min"]),
                max=float(stats["max"]),
                mean=float(stats["mean"]),
                median_memorybench=float(stats["median"]),
                p95_memorybench=float(stats["p95"]),
                p99_memorybench=float(stats["p99"]),
                std_dev=float(stats["stdDev"]),
                p50_linear=series.quantile(0.5, "linear") if values else None,
                p95_linear=series.quantile(0.95, "linear") if values else None,
                mean_exact=float(series.mean()) if values else 0.0,  # type: ignore[arg-type]
            )
            rows.append(row)
    schema: dict[str, Any] = {c: questions.schema[c] for c in keys}
    schema.update(
        phase=pl.Utf8,
        count=pl.Int64,
        **{
            c: pl.Float64
            for c in (
                "min",
                "max",
                "mean",
                "median_memorybench",
                "p95_memorybench",
                "p99_memorybench",
                "std_dev",
                "p50_linear",
                "p95_linear",
                "mean_exact",
            )
        },
    )
    return pl.DataFrame(rows, schema=schema)


latency_stats = with_backend(latency_stats_frame, "latency_stats")
