"""Rank intervals: where each run could rank if the benchmark's haystacks had been drawn again.

The haystacks (clusters) are resampled with replacement, the same draw for every run, so runs stay paired;
each resample ranks the runs by accuracy (1 = best; ties share the better rank). A run's rank interval is
the expanded percentile interval of its ranks. Runs that cannot be told apart share a ``group``: sorted by
accuracy, a new group starts at the first run the clustered paired test distinguishes from the current
group's leader at ``alpha``. Below ``MIN_BOOTSTRAP_CLUSTERS`` haystacks the interval is the ranks the paired
tests leave open instead. Definitions: docs/statistics.md ("Rank intervals").
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike
from bench_nb.metrics.clustered import (
    MIN_BOOTSTRAP_CLUSTERS,
    RESAMPLES,
    ClusterSums,
    expanded_alpha,
    grouped_cluster_sums,
    outcomes,
    resampled_sums,
)
from bench_nb.metrics.clustered_paired import (
    ALL,
    PairKey,
    PairSums,
    paired_cluster_sums,
    paired_difference_test,
    same_questions,
)
from bench_nb.metrics.intervals import check_level

RANK_RESAMPLES = 20_000  # resamples of the rank bootstrap (fewer with many haystacks: ``rank_resamples``)
RANK_WEIGHTS = 4_000_000  # at most this many entries in the resampling's weights matrix (draws)


def rank_resamples(clusters: int) -> int:
    """The rank bootstrap's default resamples over ``clusters`` haystacks: ``RANK_RESAMPLES``, fewer where
    the (resamples × clusters) weights matrix would pass ``RANK_WEIGHTS`` entries, never below
    ``RESAMPLES`` (2,000). With 2,000, a rank interval of six runs a point apart moved with the seed in 2 of
    24 rows; with 20,000 none did (BENCHMARKS.md, "Seed stability of the bootstraps")."""
    return max(RESAMPLES, min(RANK_RESAMPLES, RANK_WEIGHTS // max(clusters, 1)))


def _ranks(means: np.ndarray) -> np.ndarray:
    """1 + the number of runs with a strictly higher mean, along the last axis (NaN counts as worst)."""
    filled = np.where(np.isnan(means), -np.inf, means)
    return 1 + np.asarray((filled[..., None, :] > filled[..., :, None]).sum(axis=-1))


def _distinguishable(pairs: dict[PairKey, PairSums], leader: str, run: str, qtype: str, alpha: float) -> bool:
    ps = pairs.get((leader, run, qtype)) or pairs.get((run, leader, qtype))
    if ps is None or not ps.n:
        return False
    p = paired_difference_test(ps.d, ps.counts, alpha).p  # two-sided: same either way round
    return not math.isnan(p) and p < alpha


def _tested_rank_range(
    i: int, runs: list[str], observed: np.ndarray, pairs: dict[PairKey, PairSums], qtype: str, alpha: float
) -> tuple[int, int]:
    """Below ``MIN_BOOTSTRAP_CLUSTERS`` haystacks, where a bootstrap of so few haystacks is degenerate (it
    ranks a run first in every resample that a paired test cannot tell from the second): the ranks the
    paired tests leave open, 1 + the runs shown better to n − the runs shown worse."""
    better = worse = 0
    for j, other in enumerate(runs):
        if j == i or np.isnan(observed[j]) or np.isnan(observed[i]) or observed[j] == observed[i]:
            continue
        if _distinguishable(pairs, runs[i], other, qtype, alpha):
            if observed[j] > observed[i]:
                better += 1
            else:
                worse += 1
    return 1 + better, len(runs) - worse


def rank_intervals_frame(
    questions: QuestionsLike,
    seed: int = 0,
    *,
    by: Literal["question_type"] | None = None,
    alpha: float = 0.05,
    resamples: int | None = None,
) -> pl.DataFrame:
    """Each run's rank with its 1 − ``alpha`` interval from a cluster bootstrap, and its group of runs that
    cannot be told apart.

    Columns (the contract: issue 17's ``run_id, rank, rank_low, rank_high, group`` and ``accuracy``):
    ``run_id``, ``question_type`` (with ``by="question_type"``), ``accuracy`` (the run's accuracy on its
    scored questions, the mean score for fractional scores: what the runs are ranked by, equal to
    ``accuracy_intervals``' ``accuracy``), ``rank`` (1 = best, ties share the better rank), ``rank_low``,
    ``rank_high`` and ``group`` (1 = the best group); rows in rank order. Takes what ``accuracy_intervals``
    takes (fractional scores too). Runs that hold different questions are refused (``ComparisonError``,
    naming them and counting the questions only each holds): they are not ranked on one test.
    ``resamples``: the bootstrap's (default ``rank_resamples(haystacks)``: 20,000 up to 200 haystacks);
    ``seed``: its random seed (the same seed, the same intervals).
    """
    check_level("alpha", alpha, "0.05")
    data = outcomes(same_questions(questions), by)
    return ranks_of(data, by, paired_cluster_sums(data, by), seed, alpha, resamples)


rank_intervals = with_backend(rank_intervals_frame, "rank_intervals")


def ranks_of(
    data: pl.DataFrame,
    by: str | None,
    pairs: dict[PairKey, PairSums],
    seed: int = 0,
    alpha: float = 0.05,
    resamples: int | None = None,
    cluster_sums: list[tuple[tuple[Any, ...], ClusterSums]] | None = None,
) -> pl.DataFrame:
    """``rank_intervals_frame`` from an ``outcomes`` frame and its ``paired_cluster_sums`` (the groups'
    paired tests); ``cluster_sums``: the frame's ``grouped_cluster_sums(data, ["run_id", *by])`` when the caller
    has them already (the runs within each type come in the same order either way: both follow first
    appearance in the frame)."""
    keys = [] if by is None else ["question_type"]
    if cluster_sums is None:
        cluster_sums = grouped_cluster_sums(data, ["run_id", *keys])
    per_type: dict[tuple[Any, ...], list[tuple[str, ClusterSums]]] = {}
    for key, cs in cluster_sums:
        per_type.setdefault(key[1:], []).append((key[0], cs))
    rows: list[dict[str, Any]] = []
    types = []  # per type: its key, runs, haystacks and (haystacks × 2·runs) sums then counts
    for key, run_sums in per_type.items():
        clusters = sorted(set().union(*(cs.ids.tolist() for _, cs in run_sums)))
        index = {h: i for i, h in enumerate(clusters)}
        sn = np.zeros((len(clusters), 2 * len(run_sums)))  # zero where a run has no question
        for j, (_, cs) in enumerate(run_sums):
            pos = np.array([index[h] for h in cs.ids.tolist()], dtype=np.int64)
            sn[pos, j], sn[pos, len(run_sums) + j] = cs.sums, cs.counts
        types.append((key, run_sums, clusters, sn))
    # The draw depends on the number of haystacks alone (one seed): types with as many share it, their sums
    # and counts resampled side by side in one pass.
    resampled: dict[tuple[Any, ...], np.ndarray] = {}
    for size in sorted({len(t[2]) for t in types}):
        same = [t for t in types if len(t[2]) == size]
        both = resampled_sums(
            np.hstack([t[3] for t in same]), seed, rank_resamples(size) if resamples is None else resamples
        )
        ends = np.cumsum([t[3].shape[1] for t in same])[:-1]
        resampled |= {t[0]: part for t, part in zip(same, np.split(both, ends, axis=1), strict=True)}
    for key, run_sums, clusters, _ in types:
        runs = [run for run, _ in run_sums]
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = resampled[key][:, : len(runs)] / resampled[key][:, len(runs) :]
        observed = np.array([cs.mean for _, cs in run_sums])
        rank = _ranks(observed)
        boot = _ranks(draws)
        a = expanded_alpha(len(clusters), 1 - alpha)
        qtype = str(key[0]) if key else ALL
        # by accuracy, a new group from the first run the paired test tells from the current group's leader
        groups: dict[str, int] = {}
        group, leader = 0, None
        order = [runs[i] for i in np.argsort(-np.where(np.isnan(observed), -np.inf, observed), kind="stable")]
        for run in order:
            if leader is None or _distinguishable(pairs, leader, run, qtype, alpha):
                group, leader = group + 1, run
            groups[run] = group
        for i, run in enumerate(runs):
            if len(clusters) < MIN_BOOTSTRAP_CLUSTERS:
                low, high = _tested_rank_range(i, runs, observed, pairs, qtype, alpha)
            elif math.isnan(a):
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
    return pl.DataFrame(rows, schema=schema).sort([*keys, "rank"], maintain_order=True)
