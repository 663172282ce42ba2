"""The one rule for null, NaN and unscored verdicts, which every metric applies first (``with_verdicts``).

A row (a question of a run, or a judge's verdict) has a **verdict** when it is evaluated (``status ==
"evaluated"``, when the frame has a ``status``), it is not marked ``unscored``, and it has a value: its
``score`` when that is a number (not null, not NaN), else its ``correct`` as 0/1 (not null). An evaluated row
without a verdict is **unscored**: it is left out of every accuracy, mean score, interval, test and agreement
statistic (never counted as wrong) and counted in ``unscored``. A value outside [0, 1] (or infinite) is bad
input and raises, naming the run and the question. docs/statistics.md ("Null, NaN and unscored verdicts").

It sits in the frames layer, below the metrics, so that the frames' own reading of verdicts
(``frames.judgments.split_verdicts``, behind ``disputed_questions``) is this function too; the metrics
import it from here.
"""

from __future__ import annotations

import polars as pl

from bench_nb.frames.backend import once_per_frame


def with_verdicts(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the rule applied: ``score`` (Float64) is the verdict, null without one; ``correct``
    (Boolean) is ``score == 1``, null without a verdict; ``unscored`` (Boolean) is true for an evaluated row
    without a verdict. Other columns are kept as they are.

    Raises:
        ValueError: a score (or a ``correct`` read as 0/1) outside [0, 1], naming the run and question.
    """
    return once_per_frame("verdicts", frame, _apply)  # a report's questions frame: 20-odd times


def _apply(frame: pl.DataFrame) -> pl.DataFrame:
    cols = frame.columns
    evaluated = (pl.col("status") == "evaluated").fill_null(False) if "status" in cols else pl.lit(True)
    flagged = pl.col("unscored").cast(pl.Boolean).fill_null(False) if "unscored" in cols else pl.lit(False)
    candidates = [pl.col(c).cast(pl.Float64).fill_nan(None) for c in ("score", "correct") if c in cols]
    value = pl.coalesce(candidates) if candidates else pl.lit(None, pl.Float64)
    counts = evaluated & ~flagged & value.is_not_null()
    out = frame.with_columns(
        score=pl.when(counts).then(value).otherwise(None),
        correct=pl.when(counts).then(value == 1).otherwise(None),
        unscored=evaluated & ~counts,
    )
    bad = out.filter(pl.col("score").is_infinite() | (pl.col("score") < 0) | (pl.col("score") > 1))
    if len(bad):
        r = bad.row(0, named=True)
        judge = f", judge {r['judge']!r}" if r.get("judge") is not None else ""  # a judgments frame's row
        raise ValueError(
            f"run {r.get('run_id', r.get('run'))!r}, question {r.get('question_id')!r}{judge}: score "
            f"{r['score']} is not in [0, 1]: a score must be in [0, 1] (0 or 1, or a graded score) or null (null and NaN are no "
            "verdict)"
        )
    return out
