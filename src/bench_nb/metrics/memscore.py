"""MemScore: ``accuracy% / search latency ms / context tokens``, computed exactly as MemoryBench does.

- quality = ``Math.round(correct / evaluated * 100)``
- latency_ms (MemoryBench's latencyMs) = MemoryBench's mean search duration (``round(sum / n)`` over non-zero durations)
- context_tokens (MemoryBench's contextTokens) = ``round(sum(contextTokens) / number of questions that have it)``, shown only when every
  evaluated question has ``promptTokens`` (otherwise ``None`` and ``n/a`` in the display string). A run that
  has only report.json has no per-question tokens: its context_tokens is the report's own
  (``memscoreComponents.contextTokens``, which MemoryBench wrote under the same rule), or ``None``.

For a graded run (BEAM: fractional scores from a rubric judge) the quality is the mean score instead,
``Math.round(mean score * 100)``, with a normal-approximation interval (``mean_interval``), and
``quality_measure`` says "mean score" (else "accuracy"); ``correct`` still counts the questions scored 1.

The three numbers are never collapsed into one. The one deliberate difference from MemoryBench: answers
whose judge reply could not be parsed (``unscored``) are left out instead of counted as incorrect;
MemoryBench's own runs never have any, so their MemScore is identical.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

import polars as pl

from bench_nb.frames.backend import Backend, to_backend
from bench_nb.frames.questions import as_questions
from bench_nb.metrics.intervals import mean_interval, wilson_interval
from bench_nb.runformat.latency import memorybench_stats
from bench_nb.runformat.report import format_memscore
from bench_nb.runformat.rounding import js_round

if TYPE_CHECKING:
    import pandas as pd


def memscore_components(group: pl.DataFrame) -> dict[str, Any]:
    """MemScore of the questions of one run (a questions frame filtered to one run)."""
    ev = group.filter((pl.col("status") == "evaluated") & ~pl.col("unscored"))
    n = len(ev)
    correct = int(ev["correct"].fill_null(False).sum()) if n else 0
    graded = bool(n) and "graded" in ev.columns and bool(ev["graded"].fill_null(False).any())
    scores = [float(x) for x in ev["score"].to_list() if x is not None] if graded else []
    accuracy = (sum(scores) / len(scores) if scores else None) if graded else (correct / n if n else None)
    quality = js_round(accuracy * 100) if accuracy is not None else None
    search = memorybench_stats(ev["search_ms"].to_list())
    latency = int(search["mean"]) if search["count"] else None
    ctx = [v for v in ev["context_tokens"].to_list() if v is not None]
    all_have_prompt = n > 0 and ev["prompt_tokens"].null_count() == 0
    context_tokens = js_round(sum(ctx) / len(ctx)) if ctx and all_have_prompt else None
    if context_tokens is None and n and (ev["source"] == "report").all():
        from_report = ev["report_context_tokens"].unique()
        if len(from_report) == 1 and from_report[0] is not None:
            context_tokens = int(from_report[0])
    lo, hi = mean_interval(scores) if graded else wilson_interval(correct, n)
    return {
        "quality": quality,
        "latency_ms": latency,
        "context_tokens": context_tokens,
        "memscore": format_memscore(quality, latency, context_tokens),
        "accuracy": accuracy,
        "accuracy_ci_low": lo,
        "accuracy_ci_high": hi,
        "evaluated": n,
        "correct": correct,
        "quality_measure": "mean score" if graded else "accuracy",
    }


# The questions frame's columns memscore reads (memscore_components and the per-run counts).
_USED = frozenset(
    {
        "run_id",
        "provider",
        "benchmark",
        "status",
        "unscored",
        "correct",
        "graded",
        "score",
        "search_ms",
        "context_tokens",
        "prompt_tokens",
        "source",
        "report_context_tokens",
        "custom_prompt",
    }
)


def memscore_frame(data: Any) -> pl.DataFrame:
    """``memscore`` in polars: one row per run, ``run_id, provider, benchmark, quality, latency_ms,
    context_tokens, memscore, ...``."""
    questions = as_questions(data)
    questions = questions.select([c for c in questions.columns if c in _USED])  # partitions copy what is left
    rows = []
    for (run_id,), group in questions.partition_by(["run_id"], as_dict=True, maintain_order=True).items():
        row: dict[str, Any] = {
            "run_id": run_id,
            "provider": group["provider"][0],
            "benchmark": group["benchmark"][0],
        }
        row.update(memscore_components(group))
        row["target"] = len(group)
        row["unscored"] = int(group["unscored"].sum())
        row["failed"] = int((group["status"] == "failed").sum())
        row["custom_prompt"] = bool(group["custom_prompt"].any())
        rows.append(row)
    schema: dict[str, Any] = {
        "run_id": pl.Utf8,
        "provider": pl.Utf8,
        "benchmark": pl.Utf8,
        "quality": pl.Int64,
        "latency_ms": pl.Int64,
        "context_tokens": pl.Int64,
        "memscore": pl.Utf8,
        "accuracy": pl.Float64,
        "accuracy_ci_low": pl.Float64,
        "accuracy_ci_high": pl.Float64,
        "evaluated": pl.Int64,
        "correct": pl.Int64,
        "target": pl.Int64,
        "unscored": pl.Int64,
        "failed": pl.Int64,
        "custom_prompt": pl.Boolean,
        "quality_measure": pl.Utf8,
    }
    return pl.DataFrame(rows, schema=schema)


@overload
def memscore(data: Any, *, backend: Literal["pandas"] = ...) -> pd.DataFrame: ...
@overload
def memscore(data: Any, *, backend: Literal["polars"]) -> pl.DataFrame: ...
def memscore(data: Any, *, backend: Backend = "pandas") -> pd.DataFrame | pl.DataFrame:
    """MemScore per run (``quality``, ``latency_ms``, ``context_tokens``, ``memscore``) with the accuracy's
    Wilson 95% interval and the counts behind it."""
    return to_backend(memscore_frame(data), backend)
