"""Retrieval metrics per run: plain means over the evaluated questions that have them, and the level they
were computed at.

The means are MemoryBench's ``retrieval`` rule (a left-to-right sum divided by the number of questions with
``retrievalMetrics``), so a MemoryBench run's figures equal its report.json's. The level says what the
numbers measure (docs/runner.md, "Retrieval metrics"):

- ``message`` or ``session``: bench_nb scored the hits against the question's evidence, by message or by
  session (a session holds many messages: session-level figures are higher by construction);
- ``mixed``: some questions of the run at each level;
- ``unrecorded``: no level recorded: a run made by MemoryBench, whose recall, F1 and nDCG have no ground
  truth (they repeat hit and precision), or a run shared as report.json only;
- null: no question of the run has metrics (a provider whose hits trace to nothing, like ``no-memory``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike, as_columns, as_questions
from bench_nb.runformat.rounding import js_sum

RETRIEVAL_FIELDS = ("hit_at_k", "precision_at_k", "recall_at_k", "f1_at_k", "mrr", "ndcg")


def _level(levels: list[str | None]) -> str:
    known = {lv for lv in levels if lv is not None}
    if not known:
        return "unrecorded"
    return known.pop() if len(known) == 1 else "mixed"


def retrieval_summary_frame(data: QuestionsLike, *, by: str | Sequence[str] = ("run_id",)) -> pl.DataFrame:
    """Retrieval metrics per run (hit, precision, recall, F1 at k, MRR, nDCG): means over the evaluated
    questions that have them, with the level they were computed at (see ``bench_nb.metrics.retrieval``): one
    row per group, ``evaluated``, ``with_metrics``, ``level``, the six means (``hit_at_k``,
    ``precision_at_k``, ``recall_at_k``, ``f1_at_k``, ``mrr``, ``ndcg``), ``k_min``/``k_max``.

    ``by``: the columns the rows are per (one name or several; default ``run_id``), e.g. ``by="provider"``;
    a name the questions frame lacks raises ``ValueError`` naming its columns."""
    questions = as_questions(data)
    keys = as_columns(by, questions)
    ev = questions.filter(pl.col("status") == "evaluated")
    rows: list[dict[str, Any]] = []
    for key, group in ev.partition_by(keys, as_dict=True, maintain_order=True).items():
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        have = group.filter(pl.col("hit_at_k").is_not_null())
        n = len(have)
        row["evaluated"] = len(group)
        row["with_metrics"] = n
        row["level"] = _level(have["retrieval_level"].to_list()) if n else None
        for field in RETRIEVAL_FIELDS:
            values = [v for v in have[field].to_list() if v is not None]
            row[field] = js_sum(values) / len(values) if values else None
        ks = [k for k in have["k"].to_list() if k is not None]
        row["k_min"], row["k_max"] = (min(ks), max(ks)) if ks else (None, None)
        rows.append(row)
    schema: dict[str, Any] = {c: questions.schema[c] for c in keys}
    schema |= {"evaluated": pl.Int64, "with_metrics": pl.Int64, "level": pl.Utf8}
    schema |= dict.fromkeys(RETRIEVAL_FIELDS, pl.Float64)
    schema |= {"k_min": pl.Int64, "k_max": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


retrieval_summary = with_backend(retrieval_summary_frame, "retrieval_summary")
