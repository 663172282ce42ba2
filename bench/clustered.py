"""The clustered statistics' cost: ``accuracy_intervals`` (the CR2 interval over 10 haystacks x 1,540 questions
per run), ``tell_apart`` and ``rank_intervals`` (2,000 resamples), against the same frame's Wilson intervals
measured in the same process.

    .venv/bin/python bench/clustered.py            # 2 runs of LoCoMo's shape
    .venv/bin/python bench/clustered.py --runs 6

Prints the median of 7 timings of each and its ratio to the Wilson baseline. Target: the statistics of one
benchmark "well under a second" (absolute), and a small multiple of the baseline.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import polars as pl

import bench_nb

SIZES = np.array([152, 81, 152, 199, 178, 123, 150, 191, 156, 158])  # LoCoMo's 10 conversations


def frame(runs: int) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    hay = np.repeat(np.arange(10), SIZES).astype(str)
    n = len(hay)
    types = np.array(["single-hop", "multi-hop", "temporal", "open-domain"])[rng.integers(0, 4, n)]
    parts = [
        pl.DataFrame(
            {
                "run_id": f"run-{r}",
                "question_id": [f"q{i}" for i in range(n)],
                "haystack_id": hay,
                "question_type": types,
                "correct": rng.random(n) < 0.6 + 0.05 * r,
            }
        )
        for r in range(runs)
    ]
    return pl.concat(parts)


def timed(fn, repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    q = frame(args.runs)
    bench_nb.accuracy_intervals(q)  # imports and warm-up
    base = timed(lambda: bench_nb.accuracy_intervals(q, method="wilson", backend="polars"))
    rows = [
        ("accuracy_intervals, wilson (baseline)", base),
        (
            "accuracy_intervals, clustered",
            timed(lambda: bench_nb.accuracy_intervals(q, backend="polars")),
        ),
        (
            "accuracy_intervals, clustered, by type",
            timed(lambda: bench_nb.accuracy_intervals(q, by="question_type", backend="polars")),
        ),
        ("rank_intervals", timed(lambda: bench_nb.rank_intervals(q, backend="polars"))),
        (
            "tell_apart (overall and per type)",
            timed(lambda: bench_nb.metrics.clustered_paired.tell_apart(q, backend="polars")),
        ),
    ]
    print(f"{args.runs} runs x 1,540 questions in 10 haystacks; load average {os.getloadavg()[0]:.1f}")
    print(f"{'what':<50}{'median ms':>10}{'x baseline':>12}")
    for name, t in rows:
        print(f"{name:<50}{t * 1000:>10.1f}{t / base:>12.1f}")


if __name__ == "__main__":
    main()
