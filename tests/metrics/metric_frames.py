"""Questions frames written by hand for the metric tests: every column of ``questions_df``, a few set."""

from __future__ import annotations

from typing import Any

import polars as pl

from bench_nb.frames.questions import QUESTION_SCHEMA

DEFAULTS: dict[str, Any] = {
    "run_id": "run-a",
    "provider": "sqlite",
    "benchmark": "locomo",
    "question_type": "single-hop",
    "question_type_norm": "single-hop",
    "status": "evaluated",
    "unscored": False,
    "custom_prompt": False,
    "source": "checkpoint",
}


def row(correct: bool | None = True, **values: Any) -> dict[str, Any]:
    """One question; ``correct=None`` with ``status="failed"``/``"pending"`` for unfinished ones."""
    out = dict.fromkeys(QUESTION_SCHEMA)
    out.update(DEFAULTS)
    out["correct"] = correct
    out["score"] = None if correct is None else float(correct)
    out.update(values)
    return out


def frame(*rows: dict[str, Any]) -> pl.DataFrame:
    """A questions frame of these rows, with ``questions_df``'s schema."""
    return pl.DataFrame(list(rows), schema=QUESTION_SCHEMA)
