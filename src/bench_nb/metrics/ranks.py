"""Rank intervals: where each run could rank if the benchmark's haystacks had been drawn again.

The haystacks (clusters) are resampled with replacement, the same draw for every run, so runs stay paired;
each resample ranks the runs by accuracy (1 = best; ties share the better rank). A run's rank interval is
the expanded percentile interval of its ranks. Runs that cannot be told apart share a ``group``: sorted by
accuracy, a new group starts at the first run the clustered paired test distinguishes from the current
group's leader at ``alpha``. Definitions: docs/statistics.md ("Rank intervals").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
import polars as pl

from bench_nb.frames.backend import Backend, to_backend
from bench_nb.metrics.clustered import RESAMPLES, bootstrap_weights, cluster_sums, expanded_alpha, outcomes
from bench_nb.metrics.clustered_paired import clustered_paired_test

if TYPE_CHECKING:
    import pandas as pd


def _ranks(means: np.ndarray) -> np.ndarray:
    """1 + the number of runs with a strictly higher mean, along the last axis (NaN counts as worst)."""
    filled = np.where(np.isnan(means), -np.inf, means)
    return 1 + (filled[..., None, :] > filled[..., :, None]).sum(axis=-1)


def _groups(data: pl.DataFrame, order: list[str], alpha: float) -> dict[str, int]:
    groups: dict[str, int] = {}
    group, leader = 0, None
    for run in order:
        if leader is None or _distinguishable(data, leader, run, alpha):
            group, leader = group + 1, run
        groups[run] = group
    return groups


def _distinguishable(data: pl.DataFrame, leader: str, run: str, alpha: float) -> bool:
    a = data.filter(pl.col("run_id") == leader).select("question_id", "haystack_id", a="value")
    b = data.filter(pl.col("run_id") == run).select("question_id", b="value")
    pairs = (
        a.join(b, on="question_id")
        .group_by("haystack_id")
        .agg(d=(pl.col("a") - pl.col("b")).sum(), c=pl.len())
    )
    if pairs.is_empty():
        return False
    _, _, p = clustered_paired_test(pairs["d"].to_numpy().astype(float), pairs["c"].to_numpy().astype(float))
    return not math.isnan(p) and p < alpha


@overload
def rank_intervals(
    questions: Any,
    seed: int = ...,
    *,
    by: str | None = ...,
    alpha: float = ...,
    resamples: int = ...,
    backend: Literal["pandas"] = ...,
) -> pd.DataFrame: ...
@overload
def rank_intervals(
    questions: Any,
    seed: int = ...,
    *,
    by: str | None = ...,
    alpha: float = ...,
    resamples: int = ...,
    backend: Literal["polars"],
) -> pl.DataFrame: ...
def rank_intervals(
    questions: Any,
    seed: int = 0,
    *,
    by: str | None = None,
    alpha: float = 0.05,
    resamples: int = RESAMPLES,
    backend: Backend = "pandas",
) -> pd.DataFrame | pl.DataFrame:
    """Each run's rank with its 1 − ``alpha`` interval from a cluster bootstrap, and its group of runs that
    cannot be told apart.

    Columns: ``run_id``, ``question_type`` (with ``by="question_type"``), ``accuracy``, ``rank`` (1 = best,
    ties share the better rank), ``rank_low``, ``rank_high`` and ``group`` (1 = the best group); rows in rank
    order. Takes what ``accuracy_intervals`` takes (fractional scores too).
    """
    return to_backend(rank_intervals_frame(questions, seed, by=by, alpha=alpha, resamples=resamples), backend)


def rank_intervals_frame(
    questions: Any, seed: int = 0, *, by: str | None = None, alpha: float = 0.05, resamples: int = RESAMPLES
) -> pl.DataFrame:
    """``rank_intervals`` in polars."""
    data = outcomes(questions, by)
    keys = [] if by is None else ["question_type"]
    parts = [((), data)] if by is None else list(data.group_by(keys, maintain_order=True))
    rows: list[dict[str, Any]] = []
    for key, part in parts:
        clusters = part["haystack_id"].unique().sort().to_list()
        runs = part["run_id"].unique(maintain_order=True).to_list()
        sums = [cluster_sums(part.filter(pl.col("run_id") == r), clusters) for r in runs]
        s = np.stack([c.sums for c in sums], axis=1)  # clusters × runs
        n = np.stack([c.counts for c in sums], axis=1)
        weights = bootstrap_weights(len(clusters), seed, resamples)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = (weights @ s) / (weights @ n)
        observed = np.array([c.mean for c in sums])
        rank = _ranks(observed)
        boot = _ranks(draws)
        a = expanded_alpha(len(clusters), 1 - alpha)
        order = [runs[i] for i in np.argsort(-np.where(np.isnan(observed), -np.inf, observed), kind="stable")]
        groups = _groups(part, order, alpha)
        for i, run in enumerate(runs):
            if math.isnan(a):
                low = high = int(rank[i])
            else:
                low = int(np.quantile(boot[:, i], a / 2, method="inverted_cdf"))
                high = int(np.quantile(boot[:, i], 1 - a / 2, method="inverted_cdf"))
            rows.append(
                dict(zip(keys, key, strict=True))
                | {
                    "run_id": run,
                    "accuracy": float(observed[i]),
                    "rank": int(rank[i]),
                    "rank_low": min(low, int(rank[i])),
                    "rank_high": max(high, int(rank[i])),
                    "group": groups[run],
                }
            )
    schema: dict[str, Any] = (
        {"run_id": pl.Utf8}
        | dict.fromkeys(keys, pl.Utf8)
        | {
            "accuracy": pl.Float64,
            "rank": pl.Int64,
            "rank_low": pl.Int64,
            "rank_high": pl.Int64,
            "group": pl.Int64,
        }
    )
    frame = pl.DataFrame(rows, schema=schema).sort([*keys, "rank"], maintain_order=True)
    return frame
