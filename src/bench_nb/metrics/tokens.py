"""Token summaries per run: sums and means of prompt, base-prompt and context tokens."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike, as_columns, as_questions


def token_summary_frame(data: QuestionsLike, *, by: str | Sequence[str] = ("run_id",)) -> pl.DataFrame:
    """Prompt, base-prompt and context token totals and means per run (per group over evaluated questions:
    totals, means, p50/p95 of context tokens, and coverage).

    ``with_tokens`` counts the questions that carry ``prompt_tokens`` (runs made before MemoryBench recorded
    tokens carry none, nor do other harnesses' files); means are over those questions only, and a total is
    null when no question records it.
    """
    questions = as_questions(data)
    ev = questions.filter(pl.col("status") == "evaluated")

    def total(col: str) -> pl.Expr:  # null, not 0, when no question records it
        return pl.when(pl.col(col).is_not_null().any()).then(pl.col(col).sum())

    return ev.group_by(as_columns(by, questions), maintain_order=True).agg(
        evaluated=pl.len().cast(pl.Int64),
        with_tokens=pl.col("prompt_tokens").is_not_null().sum().cast(pl.Int64),
        total_prompt_tokens=total("prompt_tokens"),
        total_base_prompt_tokens=total("base_prompt_tokens"),
        total_context_tokens=total("context_tokens"),
        mean_prompt_tokens=pl.col("prompt_tokens").mean(),
        mean_context_tokens=pl.col("context_tokens").mean(),
        p50_context_tokens=pl.col("context_tokens").quantile(0.5, "linear"),
        p95_context_tokens=pl.col("context_tokens").quantile(0.95, "linear"),
        tokenizer=pl.col("tokenizer").drop_nulls().first(),
    )


token_summary = with_backend(token_summary_frame, "token_summary")
