"""Accuracy (overall and per question type) with Wilson 95% intervals, and success rate.

Accuracy counts evaluated questions that a judge scored: ``correct / scored``. Unscored answers (a judge
reply that could not be parsed) are excluded and counted in ``unscored``; MemoryBench has no such state.
For graded questions (BEAM: a fractional score from a rubric judge) ``accuracy`` is the group's mean score,
with a normal-approximation interval (``mean_interval``), and ``measure`` says "mean score" (else
"accuracy"); ``correct`` still counts questions scored 1. Success rate is ``evaluated / target``, with failed and pending questions counted: MemoryBench drops them
silently from every number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import polars as pl

from bench_nb.frames.backend import once_per_frame, with_backend
from bench_nb.frames.questions import QuestionsLike, as_columns, as_questions
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.metrics.intervals import mean_interval, normal_z, wilson_interval


def _with_ci(df: pl.DataFrame, cis: list[tuple[float, float]]) -> pl.DataFrame:
    """``df`` with the intervals ``cis`` (one per row) as ``ci_low`` and ``ci_high``."""
    return df.with_columns(
        pl.Series("ci_low", [lo for lo, _ in cis], dtype=pl.Float64),
        pl.Series("ci_high", [hi for _, hi in cis], dtype=pl.Float64),
    )


def accuracy_frame(data: QuestionsLike, *, by: str | Sequence[str] = ("run_id",)) -> pl.DataFrame:
    """Accuracy per group with Wilson 95% intervals (unscored answers excluded and counted)."""
    questions = as_questions(data)
    keys = as_columns(by, questions)
    # once per frame: a report's tables and charts ask for the same accuracy per run and per type
    return once_per_frame(f"accuracy by {keys}", questions, lambda frame: _accuracy(frame, keys))


def _accuracy(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    questions = with_verdicts(frame)
    graded = pl.col("graded").fill_null(False) if "graded" in questions.columns else pl.lit(False)
    out = (
        questions.lazy()  # lazy: only the columns used are copied by the filter (a frame has ~60)
        .filter(pl.col("status") == "evaluated")
        .with_columns(graded_=graded)
        .group_by(keys, maintain_order=True)
        .agg(
            scored=(~pl.col("unscored")).sum().cast(pl.Int64),
            correct=(pl.col("correct").fill_null(False) & ~pl.col("unscored")).sum().cast(pl.Int64),
            unscored=pl.col("unscored").sum().cast(pl.Int64),
            graded=pl.col("graded_").any(),
            scores=pl.col("score").filter(~pl.col("unscored") & pl.col("score").is_not_null()),
        )
        .with_columns(
            accuracy=pl.when(pl.col("graded"))
            .then(pl.col("scores").list.mean())
            .when(pl.col("scored") > 0)
            .then(pl.col("correct") / pl.col("scored"))
            .otherwise(None),
            measure=pl.when(pl.col("graded")).then(pl.lit("mean score")).otherwise(pl.lit("accuracy")),
        )
        .collect()
    )
    cis = [
        mean_interval([float(x) for x in scores]) if graded else wilson_interval(int(c), int(n))
        for c, n, graded, scores in out.select("correct", "scored", "graded", "scores").iter_rows()
    ]
    return _with_ci(out, cis).select(
        [*keys, "scored", "correct", "accuracy", "ci_low", "ci_high", "unscored", "measure"]
    )


accuracy = with_backend(accuracy_frame, "accuracy")


def accuracy_by_type_frame(
    data: QuestionsLike, *, raw: bool = False, by: str | Sequence[str] = ("run_id",)
) -> pl.DataFrame:
    """Accuracy per run and question type (normalised, or the run's raw labels with ``raw=True``).

    Args:
        data: runs (anything ``questions_df`` takes) or a questions frame.
        raw: group by the run's own ``question_type`` labels instead of ``question_type_norm``.
        by: the columns the rows are per before the type (one name or several; default ``run_id``), e.g.
            ``by="provider"``; a name the questions frame lacks raises ``ValueError`` naming its columns.

    Columns: the ``by`` columns, ``question_type_norm`` (``question_type`` with ``raw=True``), ``scored``
    (evaluated questions with a verdict), ``correct`` (those scored 1), ``accuracy`` (correct / scored, a
    fraction; a graded run's mean score), ``ci_low``, ``ci_high`` (Wilson 95%; a graded run's normal
    interval of the mean), ``unscored`` (evaluated, no verdict: left out of ``accuracy``) and ``measure``
    (``"accuracy"`` or ``"mean score"``).
    """
    questions = as_questions(data)
    keys = as_columns(by, questions)
    return accuracy_frame(questions, by=[*keys, "question_type" if raw else "question_type_norm"])


accuracy_by_type = with_backend(accuracy_by_type_frame, "accuracy_by_type")


def success_rate_frame(data: QuestionsLike, *, by: str | Sequence[str] = ("run_id",)) -> pl.DataFrame:
    """Evaluated / target per run, with failed, in-progress, pending and unscored counts.

    ``by``: the columns the rows are per (one name or several; default ``run_id``), e.g. ``by="provider"``;
    a name the questions frame lacks raises ``ValueError`` naming its columns.

    Columns: the ``by`` columns, ``target`` (the questions), ``evaluated``, ``failed``, ``in_progress``,
    ``pending`` (questions by ``status``), ``unscored`` (evaluated, no verdict), ``success_rate``
    (evaluated / target) and its Wilson 95% interval ``ci_low``, ``ci_high``."""
    questions = with_verdicts(as_questions(data))
    keys = as_columns(by, questions)
    out = questions.group_by(keys, maintain_order=True).agg(
        target=pl.len().cast(pl.Int64),
        evaluated=(pl.col("status") == "evaluated").sum().cast(pl.Int64),
        failed=(pl.col("status") == "failed").sum().cast(pl.Int64),
        in_progress=(pl.col("status") == "in_progress").sum().cast(pl.Int64),
        pending=(pl.col("status") == "pending").sum().cast(pl.Int64),
        unscored=pl.col("unscored").sum().cast(pl.Int64),
    )
    out = out.with_columns(success_rate=pl.col("evaluated") / pl.col("target"))
    return _with_ci(out, [wilson_interval(e, t) for e, t in out.select("evaluated", "target").iter_rows()])


success_rate = with_backend(success_rate_frame, "success_rate")


UNSCORED_SHARE = 0.05  # above this share of questions without a verdict a run's accuracy is shown with bounds


def unscored_bounds(data: Any, by: Literal["question_type"] | None = None) -> pl.DataFrame:
    """Per run (and ``question_type`` with ``by="question_type"``, the normalised type when the frame has it):
    the complete-case accuracy beside its bounds over the questions without a verdict.

    Columns: ``run_id``, [``question_type``], ``accuracy`` (the mean score of the questions with a verdict,
    the figure every table shows), ``scored``, ``unscored`` (questions of the run without a verdict, by the one
    rule of ``frames.verdicts``: evaluated and unscored, failed, pending), ``unscored_share`` (of all its
    questions), ``all_wrong`` (the accuracy were every one of them wrong: Σ scores / all) and ``all_right``
    (were every one right: (Σ scores + unscored) / all), and ``show_bounds``: true for every row when some run
    has more than ``UNSCORED_SHARE`` of its questions without a verdict, or the runs' shares differ; then a
    complete-case comparison may rest on which answers went unscored (a judge that fails on long wrong answers,
    a provider that times out on hard questions), and the bounds say how far. docs/statistics.md ("Unscored
    answers: bounds")."""
    q = with_verdicts(as_questions(data))
    keys = ["run_id"]
    if by is not None:
        if by != "question_type":
            raise ValueError(f"by must be None or 'question_type', not {by!r}")
        column = "question_type_norm" if "question_type_norm" in q.columns else "question_type"
        q = q.with_columns(pl.col(column).cast(pl.Utf8).fill_null("other").alias("question_type"))
        keys.append("question_type")
    from bench_nb.metrics.ordered import sums_by  # numpy: the float sums in one fixed order

    sums = sums_by(q.with_columns(_value=pl.col("score").fill_null(0.0)), keys, ["_value"]).drop("c")
    counts = q.group_by(keys, maintain_order=True).agg(
        all=pl.len(), scored=pl.col("score").is_not_null().sum().cast(pl.Int64)
    )
    out = (
        counts.join(sums, on=keys, how="left", maintain_order="left")
        .with_columns(unscored=pl.col("all") - pl.col("scored"), total=pl.col("_value"))
        .select(
            *keys,
            accuracy=pl.when(pl.col("scored") > 0).then(pl.col("total") / pl.col("scored")),
            scored="scored",
            unscored="unscored",
            unscored_share=pl.col("unscored") / pl.col("all"),
            all_wrong=pl.col("total") / pl.col("all"),
            all_right=(pl.col("total") + pl.col("unscored")) / pl.col("all"),
        )
    )
    shares = q.group_by("run_id").agg(share=pl.col("score").is_null().mean())["share"].to_list()
    show = bool(shares) and (max(shares) > UNSCORED_SHARE or max(shares) != min(shares))
    return out.with_columns(show_bounds=pl.lit(show))


def accuracy_across_benchmarks(
    data: Any, *, by: str | Sequence[str] = ("provider",), confidence: float = 0.95
) -> pl.DataFrame:
    """Accuracy over several benchmarks, two ways, per ``by`` group (docs/statistics.md, "Across benchmarks").

    - ``task_averaged``: the mean of the benchmarks' accuracies (each benchmark counts once);
    - ``question_averaged``: the mean over all their scored questions (a large benchmark counts more).

    Each with a normal interval from the benchmarks' own variances (CR2, clustered by haystack; binomial s²/n
    when a benchmark has one haystack), the benchmarks independent: Var(task) = Σ V_t / T², Var(question) =
    Σ n_t² V_t / N². Columns: ``by``, ``benchmarks``, ``questions``, the two estimates and their ``*_ci_low``
    and ``*_ci_high``.
    """
    import numpy as np

    from bench_nb.metrics.clustered import cr2_variance

    q = with_verdicts(as_questions(data)).filter(pl.col("score").is_not_null())
    keys = as_columns(by, q)
    z = normal_z(confidence)
    rows = []
    for group, frame in q.group_by(keys, maintain_order=True):
        means, variances, sizes = [], [], []
        for _, bench in frame.group_by("benchmark", maintain_order=True):
            per_hay = bench.group_by("haystack_id").agg(s=pl.col("score").sum(), n=pl.len())
            sums, counts = per_hay["s"].to_numpy().astype(float), per_hay["n"].to_numpy().astype(float)
            scores = bench["score"].to_numpy().astype(float)
            n = len(scores)
            var = (
                cr2_variance(sums, counts)
                if len(counts) >= 2
                else (scores.var(ddof=1) / n if n > 1 else np.nan)
            )
            means.append(scores.mean())
            variances.append(var)
            sizes.append(n)
        m, v, n_t = np.array(means), np.array(variances), np.array(sizes, dtype=float)
        t, total = len(m), n_t.sum()
        task, task_se = m.mean(), np.sqrt(v.sum()) / t
        pooled, pooled_se = (n_t * m).sum() / total, np.sqrt((n_t**2 * v).sum()) / total
        rows.append(
            {
                **dict(zip(keys, group, strict=True)),
                "benchmarks": t,
                "questions": int(total),
                "task_averaged": float(task),
                "task_ci_low": float(max(0.0, task - z * task_se)),
                "task_ci_high": float(min(1.0, task + z * task_se)),
                "question_averaged": float(pooled),
                "question_ci_low": float(max(0.0, pooled - z * pooled_se)),
                "question_ci_high": float(min(1.0, pooled + z * pooled_se)),
            }
        )
    return pl.DataFrame(rows)
