"""The clustered paired test's cost at any number of haystacks (issue 39, item 7): ``tell_apart`` with question
types on 10 runs x 2,000 questions (45 pairs x (all + 5 types) = 270 comparisons) at 4 to 100 haystacks,
against the same frame's ``accuracy_intervals`` by type (60 CR2 intervals: one pass over the same rows)
measured in the same process.

    .venv/bin/python bench/paired_cost.py
    .venv/bin/python bench/paired_cost.py --repeats 5

Prints the median CPU seconds (``time.process_time``) of each, their ratio, and whether ``tell_apart`` stays
within the issue's 5 s of CPU. Until issue 39 the sign-flip test made the cost grow as 2^(K/2): 0.8 s at 10
haystacks, 2.5-3.1 s at 20 and 43-50 s at 29 on the audit's machine; the CR2 t is a few sums a comparison.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np
import polars as pl

from bench_nb.metrics.clustered import accuracy_intervals_frame
from bench_nb.metrics.clustered_paired import tell_apart_frame

HAYSTACKS = (4, 10, 20, 29, 30, 60, 100)
TYPES = np.array(["single-hop", "multi-hop", "temporal", "open-domain", "adversarial"])
TARGET_S = 5.0


def frame(haystacks: int, runs: int = 10, questions: int = 2000) -> pl.DataFrame:
    """``runs`` runs on ``questions`` questions spread over ``haystacks`` haystacks of random sizes, five
    question types, accuracies 0.55-0.8 with a haystack effect (seeded)."""
    rng = np.random.default_rng(haystacks)
    hay = np.sort(rng.integers(0, haystacks, questions))
    hay[:haystacks] = np.arange(haystacks)  # every haystack holds a question
    types = TYPES[rng.integers(0, len(TYPES), questions)]
    level = rng.normal(0, 0.5, haystacks)[hay]
    qids = [f"q{i}" for i in range(questions)]
    parts = []
    for r in range(runs):
        p = 1 / (1 + np.exp(-(0.2 + 0.1 * r + level)))
        parts.append(
            pl.DataFrame(
                {
                    "run_id": f"run-{r}",
                    "question_id": qids,
                    "haystack_id": hay.astype(str),
                    "question_type": types,
                    "correct": rng.random(questions) < p,
                }
            )
        )
    return pl.concat(parts)


def cpu(fn: object, repeats: int) -> float:
    """The median CPU seconds of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()  # type: ignore[operator]
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    print(f"load average {os.getloadavg()[0]:.1f}; median of {args.repeats}; CPU seconds")
    print("| haystacks | comparisons | tell_apart s | accuracy_intervals s | ratio | within 5 s |")
    print("|---|---|---|---|---|---|")
    for k in HAYSTACKS:
        q = frame(k)
        table = tell_apart_frame(q)
        t_apart = cpu(lambda q=q: tell_apart_frame(q), args.repeats)
        t_base = cpu(lambda q=q: accuracy_intervals_frame(q, by="question_type"), args.repeats)
        ok = "yes" if t_apart <= TARGET_S else "NO"
        print(f"| {k} | {len(table)} | {t_apart:.2f} | {t_base:.3f} | {t_apart / t_base:.1f} | {ok} |")


if __name__ == "__main__":
    main()
