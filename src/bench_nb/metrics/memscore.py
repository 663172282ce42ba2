"""MemScore: ``accuracy% / search latency ms / context tokens``, computed exactly as MemoryBench does.

- quality = ``Math.round(correct / evaluated * 100)``
- latency_ms (MemoryBench's latencyMs) = MemoryBench's mean search duration (``round(sum / n)`` over non-zero durations)
- context_tokens (MemoryBench's contextTokens) = ``round(sum(contextTokens) / number of questions that have it)``, shown only when every
  evaluated question has ``promptTokens`` (otherwise ``None`` and ``n/a`` in the display string; a run imported
  from another harness's file that records prompt tokens needs only some question to have them: its
  ``contextTokens`` are the harness's own figure, and a row whose prompt tokens could not be read is a
  problem naming it, not a reason to hide the others' tokens). A run that
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

from typing import Any

import polars as pl

from bench_nb.frames.backend import once_per_frame, with_backend
from bench_nb.frames.questions import QuestionsLike, as_questions
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.metrics.intervals import mean_interval, wilson_interval
from bench_nb.runformat.latency import memorybench_stats
from bench_nb.runformat.report import format_memscore
from bench_nb.runformat.rounding import js_round


def _per_run(questions: pl.DataFrame) -> pl.DataFrame:
    """What MemScore reads of each run, in one query: the counts, and the evaluated, scored questions'
    scores, search durations and context tokens as lists in the questions' order (MemoryBench's sums
    add them in that order)."""
    ev = (pl.col("status") == "evaluated") & ~pl.col("unscored")  # evaluated and scored

    def scored(column: str) -> pl.Expr:
        return pl.col(column).filter(ev)

    has = set(questions.columns)
    return questions.group_by("run_id", maintain_order=True).agg(
        provider=pl.col("provider").first(),
        benchmark=pl.col("benchmark").first(),
        target=pl.len(),
        unscored=pl.col("unscored").sum(),
        failed=(pl.col("status") == "failed").sum(),
        custom_prompt=pl.col("custom_prompt").any(),
        evaluated=ev.sum(),
        correct=scored("correct").fill_null(False).sum(),
        graded=scored("graded").fill_null(False).any() if "graded" in has else pl.lit(False),
        scores=scored("score") if "score" in has else pl.lit([], dtype=pl.List(pl.Float64)),
        search_ms=scored("search_ms"),
        context_tokens=scored("context_tokens"),
        prompt_tokens_missing=scored("prompt_tokens").null_count(),
        prompt_tokens_any=scored("prompt_tokens").is_not_null().any(),
        imported=~pl.col("harness").first().is_in(["bench_nb", "memorybench"])
        if "harness" in has
        else pl.lit(False),
        all_from_report=(scored("source") == "report").all() if "source" in has else pl.lit(False),
        report_context_tokens=scored("report_context_tokens").unique()
        if "report_context_tokens" in has
        else pl.lit([], dtype=pl.List(pl.Int64)),
    )


def _components(run: dict[str, Any]) -> dict[str, Any]:
    """MemScore of one run from its ``_per_run`` row."""
    n = run["evaluated"]
    correct = int(run["correct"]) if n else 0
    graded = bool(n) and bool(run["graded"])
    scores = [float(x) for x in run["scores"] if x is not None] if graded else []
    accuracy = (sum(scores) / len(scores) if scores else None) if graded else (correct / n if n else None)
    quality = js_round(accuracy * 100) if accuracy is not None else None
    search = memorybench_stats(run["search_ms"])
    latency = int(search["mean"]) if search["count"] else None
    ctx = [v for v in run["context_tokens"] if v is not None]
    # An imported run's contextTokens are its harness's own per-question figure, not a difference of prompt
    # counts: a row whose prompt tokens could not be read (a problem names it) does not hide the others'.
    all_have_prompt = n > 0 and (
        run["prompt_tokens_missing"] == 0 or bool(run["imported"] and run["prompt_tokens_any"])
    )
    context_tokens = js_round(sum(ctx) / len(ctx)) if ctx and all_have_prompt else None
    if context_tokens is None and n and run["all_from_report"]:
        from_report = run["report_context_tokens"]
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


def memscore_frame(data: QuestionsLike) -> pl.DataFrame:
    """MemScore per run (``quality``, ``latency_ms``, ``context_tokens``, ``memscore``) with the accuracy's
    interval and the counts behind it, computed as MemoryBench does (``bench_nb.metrics.memscore``).

    Columns, one row per run: ``run_id, provider, benchmark``; ``quality`` (accuracy in whole percent,
    rounded as JavaScript does; a graded run's mean score), ``latency_ms`` (the mean search duration, whole
    ms), ``context_tokens`` (mean retrieved-context tokens; null when not every question records them),
    ``memscore`` (the three as MemoryBench prints them, ``"78% / 4ms / 5217tok"``, ``n/a`` for a null);
    ``accuracy`` (the fraction behind ``quality``) with ``accuracy_ci_low``, ``accuracy_ci_high`` (Wilson
    95%; a graded run's normal interval of the mean); the counts ``evaluated`` (evaluated questions with a
    verdict), ``correct``, ``target``, ``unscored``, ``failed``; ``custom_prompt`` (a question was graded
    with a provider's own prompt: not like the others) and ``quality_measure`` (``"accuracy"`` or
    ``"mean score"``)."""
    return once_per_frame("memscore", as_questions(data), _memscore)  # a report's table, summary, chart...


def _memscore(questions: pl.DataFrame) -> pl.DataFrame:
    rows = []
    for run in _per_run(with_verdicts(questions)).iter_rows(named=True):
        row: dict[str, Any] = {
            "run_id": run["run_id"],
            "provider": run["provider"],
            "benchmark": run["benchmark"],
        }
        row.update(_components(run))
        row["target"] = run["target"]
        row["unscored"] = int(run["unscored"])
        row["failed"] = int(run["failed"])
        row["custom_prompt"] = bool(run["custom_prompt"])
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


memscore = with_backend(memscore_frame, "memscore")
