"""Run labels and the leaderboard's order, asked for once per table and chart of a report (issue 37): the cost
of the 40 calls a compare report makes on one questions frame, worked out once per frame against worked out
every time.

    .venv/bin/python bench/run_labels.py                       # 10 runs x 20,000 questions
    .venv/bin/python bench/run_labels.py --runs 3 --questions 2000

Builds a questions-like frame (run_id, provider, status, correct, unscored, score) with a seeded generator,
then times ``charts.labels.run_labels`` 40 times on that one frame (cached after the first, as in a report
kernel: ``BENCH_NB_REPORT=1``) against the same 40 calls of the uncached functions, in this one process, and
prints both and their ratio.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import polars as pl

from bench_nb.charts import labels

os.environ["BENCH_NB_REPORT"] = "1"  # labels are remembered per frame in a report kernel only


def frame(runs: int, questions: int, seed: int = 0) -> pl.DataFrame:
    rng = random.Random(seed)
    rows = runs * questions
    return pl.DataFrame(
        {
            "run_id": [f"provider-{i % 3}-run-{i}" for i in range(runs) for _ in range(questions)],
            "provider": [f"provider-{i % 3}" for i in range(runs) for _ in range(questions)],
            "status": ["evaluated"] * rows,
            "correct": [rng.random() < 0.7 for _ in range(rows)],
            "unscored": [False] * rows,
            "score": [1.0] * rows,
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--questions", type=int, default=20_000)
    ap.add_argument("--calls", type=int, default=40)
    args = ap.parse_args()
    q = frame(args.runs, args.questions)
    start = time.perf_counter()
    for _ in range(args.calls):
        labels._leaderboard_order(q)  # every call works out the order and the labels
        labels._run_labels(q)
    every = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(args.calls):
        labels.run_labels(q)
    once = time.perf_counter() - start
    print(f"{args.runs} runs x {args.questions:,} questions, {args.calls} calls")
    print(f"worked out every call: {every:.3f} s; once per frame: {once:.3f} s; ratio {once / every:.3f}x")


if __name__ == "__main__":
    main()
