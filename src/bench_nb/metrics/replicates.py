"""Judge replicates: the same judge grading each answer several times (EverMemOS's three runs, or bench_nb's
``--judge-replicates N``), and what its noise does to a run's accuracy.

Per run (and question type): the accuracy of each replicate (correct / scored verdicts of that replicate), their
mean and standard deviation (population, ``ddof=0``, as EverMemOS's pipeline and the LoCoMo audit publish it;
and sample, ``ddof=1``, the estimate of the judge's run-to-run spread), and the accuracy of the per-question
majority vote. Definitions in docs/statistics.md.
"""

from __future__ import annotations

import statistics
from typing import Any, Literal

import polars as pl

from bench_nb.frames.backend import as_polars, with_backend
from bench_nb.frames.judgments import collapse_replicates, judgments_frame
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.taxonomy import NORM_TYPES

COLUMNS = (
    "n",
    "replicates",
    "accuracy_mean",
    "accuracy_sd_pop",
    "accuracy_sd_sample",
    "majority_accuracy",
    "replicate_accuracies",
)


def replicate_summary_frame(runs: Any, by: Literal["question_type"] | None = None) -> pl.DataFrame:
    """Accuracy per judge replicate, their mean and standard deviations, and majority-vote accuracy.

    Args:
        runs: anything ``load_runs`` accepts, or a ``judgments_df`` frame. The primary judge's verdicts are
            read (rows with ``primary``); a frame without that column is read as it is.
        by: None (one row per run) or ``"question_type"`` (one row per run and normalised type; for LoCoMo
            multi-hop, temporal, open-domain, single-hop, adversarial → ``abstention``).

    Returns:
        Columns ``run_id``, ``question_type`` (when ``by``), ``n`` (questions with a scored verdict),
        ``replicates`` (the most replicates any of them has), ``accuracy_mean``, ``accuracy_sd_pop``,
        ``accuracy_sd_sample`` (both SDs null with one replicate), ``majority_accuracy``, ``replicate_accuracies`` (a
        list in replicate order); accuracies and standard deviations in percent (points).
    """
    if by not in (None, "question_type"):
        raise ValueError(f"by must be None or 'question_type', not {by!r}")
    frame = as_polars(runs)
    if frame is None:
        frame = judgments_frame(runs)
    missing = [c for c in ("run_id", "question_id", "score") if c not in frame.columns]
    if missing:
        raise ValueError(
            f"replicate_summary needs a judgments frame with run_id, question_id, score; missing {missing}"
        )
    if "primary" in frame.columns:
        frame = frame.filter(pl.col("primary"))
    if "replicate" not in frame.columns:
        frame = frame.with_columns(replicate=pl.lit(1, pl.Int64))
    if "judge" not in frame.columns:
        frame = frame.with_columns(judge=pl.lit("", pl.Utf8))
    frame = with_verdicts(frame.drop("status", "correct", strict=False))  # frames.verdicts' one rule
    keys = ["run_id"]
    if by is not None:
        frame = frame.with_columns(question_type=pl.col("question_type_norm").fill_null("other"))
        keys.append("question_type")
    scored = frame.filter(pl.col("score").is_not_null())
    per_rep = (
        scored.group_by([*keys, "replicate"], maintain_order=True)
        .agg(accuracy=pl.col("score").cast(pl.Float64).mean() * 100)
        .sort([*keys, "replicate"], maintain_order=True)
    )
    majority = (
        collapse_replicates(scored.select(*keys, "question_id", "judge", "replicate", "score"))
        .filter(pl.col("score").is_not_null())
        .group_by(keys, maintain_order=True)
        .agg(majority_accuracy=pl.col("score").cast(pl.Float64).mean() * 100)
    )
    counts = scored.group_by(keys, maintain_order=True).agg(
        n=pl.col("question_id").n_unique().cast(pl.Int64), replicates=pl.col("replicate").max().cast(pl.Int64)
    )
    rows: list[dict[str, Any]] = []
    accs = {tuple(k): part["accuracy"].to_list() for k, part in per_rep.group_by(keys, maintain_order=True)}
    for row in counts.iter_rows(named=True):
        values = accs.get(tuple(row[k] for k in keys), [])
        rows.append({**row, **_spread(values), "replicate_accuracies": values})
    out = pl.DataFrame(
        rows,
        schema={
            **{k: pl.Utf8 for k in keys},
            "n": pl.Int64,
            "replicates": pl.Int64,
            "accuracy_mean": pl.Float64,
            "accuracy_sd_pop": pl.Float64,
            "accuracy_sd_sample": pl.Float64,
            "replicate_accuracies": pl.List(pl.Float64),
        },
    )
    out = out.join(majority, on=keys, how="left", maintain_order="left")
    if by is not None:  # types in bench_nb's order (single-hop, multi-hop, temporal, ...), runs as given
        order = {t: i for i, t in enumerate(NORM_TYPES)}
        rank = pl.col("question_type").replace_strict(order, default=len(order), return_dtype=pl.Int64)
        runs_order = {r: i for i, r in enumerate(out["run_id"].unique(maintain_order=True))}
        run_rank = pl.col("run_id").replace_strict(runs_order, return_dtype=pl.Int64)
        out = out.sort(run_rank, rank, maintain_order=True)
    return out.select(*keys, *COLUMNS)


replicate_summary = with_backend(replicate_summary_frame, "replicate_summary")


def _spread(values: list[float]) -> dict[str, float | None]:
    """Mean, population and sample standard deviation of the replicates' accuracies."""
    if not values:
        return {"accuracy_mean": None, "accuracy_sd_pop": None, "accuracy_sd_sample": None}
    # statistics computes exactly (equal replicates give an SD of 0.0, not 1e-15)
    return {
        "accuracy_mean": statistics.fmean(values),
        # one replicate says nothing of the judge's spread: null, not 0
        "accuracy_sd_pop": statistics.pstdev(values) if len(values) > 1 else None,
        "accuracy_sd_sample": statistics.stdev(values) if len(values) > 1 else None,
    }
