"""How far the seeded bootstraps' intervals move with the seed: BEAM's chat bootstrap (until session 9
``beam_scores``' interval, reproduced here; now Student's t over the chats) and the rank intervals
(``rank_intervals``), at the default resamples and more, with each one's time.

    .venv/bin/python bench/seed_stability.py BEAM_RUN_DIR ... [--demo 'data/demo/runs/*']

For each resamples setting, 20 seeds: for the BEAM bootstrap (every run, ability and overall, 0.5 as 0.5)
the largest range of an interval end across the seeds and the largest standard deviation (the Monte Carlo
error of an end), against the 0.001 the table shows (0.1 points), and its time against ``beam_scores``' (the
t interval, measured in the same run); for ``rank_intervals`` (overall and by type) the share of rows whose
``rank_low``/``rank_high`` differ between seeds, and its time against the default (2,000). Results:
BENCHMARKS.md ("Seed stability of the bootstraps").
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
import polars as pl

import bench_nb
from bench_nb.metrics.beam import BEAM_ABILITIES, _ability_means, _overall, beam_scores_frame
from bench_nb.metrics.clustered import expanded_alpha, resampled_sums
from bench_nb.metrics.ranks import rank_intervals_frame

SEEDS = range(20)


def timed(fn) -> float:
    times = []
    for _ in range(3):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def chat_matrices(q: pl.DataFrame) -> list[np.ndarray]:
    """Per run, chats x abilities: each chat's mean score of each ability (NaN where it has none)."""
    out = []
    for _, run in q.partition_by(["run_id"], as_dict=True, maintain_order=True).items():
        per = run.group_by("haystack_id", "question_type").agg(pl.col("score").mean())
        chats = sorted(per["haystack_id"].unique().to_list())
        m = np.full((len(chats), len(BEAM_ABILITIES)), np.nan)
        for hid, ability, v in per.iter_rows():
            if ability in BEAM_ABILITIES:
                m[chats.index(hid), BEAM_ABILITIES.index(ability)] = v
        out.append(m)
    return out


def percentile_interval(draws: np.ndarray, clusters: int, confidence: float = 0.95) -> tuple[float, float]:
    """The expanded percentile interval of bootstrap ``draws`` (NaN draws, resamples with no question,
    are left out)."""
    draws = draws[~np.isnan(draws)]
    alpha = expanded_alpha(clusters, confidence)
    if math.isnan(alpha) or not len(draws):
        return (math.nan, math.nan)
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return (float(low), float(high))


def old_beam_intervals(matrices: list[np.ndarray], resamples: int, seed: int) -> np.ndarray:
    """The interval ends of the chat bootstrap beam_scores used until session 9 (expanded percentile)."""
    ends = []
    for m in matrices:
        draws = _ability_means(resampled_sums(np.eye(len(m)), seed, resamples), m)
        for j in range(m.shape[1]):
            ends.append(percentile_interval(draws[:, j], int((~np.isnan(m[:, j])).sum())))
        ends.append(percentile_interval(_overall(draws), len(m)))
    return np.array(ends)


def beam_spread(matrices: list[np.ndarray], resamples: int) -> tuple[float, float]:
    """(largest range, largest standard deviation) of an interval end over the seeds."""
    stack = np.stack([old_beam_intervals(matrices, resamples, seed) for seed in SEEDS])
    return float(np.nanmax(np.ptp(stack, axis=0))), float(np.nanmax(np.nanstd(stack, axis=0, ddof=1)))


def rank_spread(q: pl.DataFrame, resamples: int) -> tuple[float, int]:
    """(share of rows whose rank interval differs across seeds, rows)."""
    tables = [
        pl.concat(
            [
                rank_intervals_frame(q, seed, resamples=resamples).with_columns(question_type=pl.lit("all")),
                rank_intervals_frame(q, seed, by="question_type", resamples=resamples),
            ],
            how="diagonal",
        )
        .sort("question_type", "run_id")
        .select("rank_low", "rank_high")
        .to_numpy()
        for seed in SEEDS
    ]
    stack = np.stack(tables)
    moved = (np.ptp(stack, axis=0) > 0).any(axis=1)
    return float(moved.mean()), len(moved)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("beam", nargs="+")
    parser.add_argument("--demo", default="data/demo/runs/*")
    parser.add_argument("--resamples", default="2000,10000,20000")
    args = parser.parse_args()
    beam = bench_nb.questions_df(bench_nb.load_runs(args.beam), backend="polars")
    demo = bench_nb.questions_df(bench_nb.load_runs(args.demo), backend="polars")
    settings = [int(r) for r in args.resamples.split(",")]
    print(
        f"BEAM: {beam['run_id'].n_unique()} runs, {beam['haystack_id'].n_unique()} chats; demo: "
        f"{demo['run_id'].n_unique()} runs, {demo['haystack_id'].n_unique()} haystacks"
    )
    matrices = chat_matrices(beam)
    t_t = timed(lambda: beam_scores_frame(beam))
    print(f"beam_scores (Student's t, deterministic): {t_t * 1e3:.1f} ms")
    t_rank0 = None
    for r in settings:
        t_boot = timed(lambda r=r: old_beam_intervals(matrices, r, 0))
        t_rank = timed(lambda r=r: rank_intervals_frame(beam, resamples=r))
        t_rank0 = t_rank0 or t_rank
        rng, sd = beam_spread(matrices, r)
        moved_beam, rows_beam = rank_spread(beam, r)
        moved_demo, rows_demo = rank_spread(demo, r)
        print(
            f"resamples {r:6d}: BEAM bootstrap end range {rng:.4f}, SD {sd:.4f}, {t_boot * 1e3:.1f} ms "
            f"({t_boot / t_t:.1f}x the t interval) | rank_intervals rows moved: BEAM {moved_beam:.0%} of "
            f"{rows_beam}, demo {moved_demo:.0%} of {rows_demo}; {t_rank * 1e3:.0f} ms ({t_rank / t_rank0:.1f}x)"
        )


if __name__ == "__main__":
    main()
