"""False alarms of the clustered paired test, and how often its warning fires, on issue 39's designs.

    .venv/bin/python bench/paired_calibration.py                 # 1,000 benchmarks a design (~2 CPU-minutes)
    .venv/bin/python bench/paired_calibration.py --benchmarks 400

No true difference in any design: two runs of equal accuracy on the same questions, seeded. Per design it
prints the share of benchmarks where ``paired_difference_test`` (what ``tell_apart``, ``paired_comparison``,
the ranks, the gate and the reports run: the CR2 t on Bell-McCaffrey df) rejects at 5%, the previous rule's
(the CR1 t on K − 1 df, which ran from 30 haystacks until issue 39), how often ``paired_warning`` fires, and
the share of false alarms that carry it. Designs:

- exchangeable: on the logit scale a haystack effect (sd 0.8) and a question difficulty (sd 1) both runs
  share, and a per-run effect per haystack (sd 0.5); 1,500 questions in K haystacks, equal or one holding 60%;
  0/1 scores or BEAM's 0 / 0.5 / 1; accuracy 0.75 or 0.95.
- erratic: run B as above; run A equal on average but in 10% of haystacks 50 points worse (and 5 points better
  elsewhere): the runs are not exchangeable within haystacks.
- unscored: exchangeable runs, but 25% of run A's wrong answers go unscored (a judge that fails to parse long
  wrong answers); the test then uses the questions both scored.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from bench_nb.metrics.clustered import cluster_variance
from bench_nb.metrics.clustered_paired import PairSums, paired_difference_test, paired_warning
from bench_nb.metrics.intervals import student_t_two_sided_p

QUESTIONS = 1500


def sizes_of(clusters: int, dominant: bool) -> np.ndarray:
    if not dominant:
        return np.full(clusters, QUESTIONS // clusters)
    rest = max(1, round(0.4 * QUESTIONS / (clusters - 1)))
    return np.r_[round(0.6 * QUESTIONS), np.full(clusters - 1, rest)]


def scores(
    rng: np.random.Generator, sizes: np.ndarray, benchmarks: int, accuracy: float, graded: bool, kind: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, hay): two runs' scores (benchmarks × questions; NaN = unscored) and each question's haystack."""
    k, n = len(sizes), int(sizes.sum())
    hay = np.repeat(np.arange(k), sizes)
    shared = rng.normal(0, 0.8, (benchmarks, k))[:, hay] + rng.normal(0, 1, (benchmarks, n))
    base = math.log(accuracy / (1 - accuracy))
    out = []
    for run in ("a", "b"):
        logit = base + shared + rng.normal(0, 0.5, (benchmarks, k))[:, hay]
        p = 1 / (1 + np.exp(-logit))
        if kind == "erratic" and run == "a":
            bad = rng.random((benchmarks, k)) < 0.1
            p = np.clip(p + 0.05 - 0.5 * bad[:, hay], 0.0, 1.0)
        draws = 2 if graded else 1
        y = (rng.random((draws, benchmarks, n)) < p).mean(axis=0)
        if kind == "unscored" and run == "a":
            y = np.where((y < 1) & (rng.random(y.shape) < 0.25), np.nan, y)
        out.append(y)
    return out[0], out[1], hay


def measure(
    clusters: int, dominant: bool, graded: bool, accuracy: float, kind: str, benchmarks: int, seed: int
) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    sizes = sizes_of(clusters, dominant)
    a, b, hay = scores(rng, sizes, benchmarks, accuracy, graded, kind)
    k = len(sizes)
    rejected = previous = warned = warned_rejected = 0
    for i in range(benchmarks):
        both = ~np.isnan(a[i]) & ~np.isnan(b[i])
        sa = np.bincount(hay[both], weights=a[i][both], minlength=k)
        sb = np.bincount(hay[both], weights=b[i][both], minlength=k)
        counts = np.bincount(hay[both], minlength=k).astype(float)
        test = paired_difference_test(sa - sb, counts)
        ps = PairSums(
            np.arange(k), sa - sb, sa, sb, counts, 0.0, False, 0, 0,
            int((np.isnan(a[i]) & ~np.isnan(b[i])).sum()), int((np.isnan(b[i]) & ~np.isnan(a[i])).sum()),
        )  # fmt: skip
        warning = paired_warning(ps)
        reject = test.p < 0.05
        mean = (sa - sb).sum() / counts.sum()
        var = cluster_variance(sa - sb, counts)
        cr1 = student_t_two_sided_p(mean / math.sqrt(var), k - 1) if var > 0 else 1.0
        rejected += reject
        previous += cr1 < 0.05
        warned += warning is not None
        warned_rejected += reject and warning is not None
    return {
        "nu": float(test.df),
        "cr2": rejected / benchmarks,
        "cr1": previous / benchmarks,
        "warned": warned / benchmarks,
        "rejected_warned": warned_rejected / rejected if rejected else math.nan,
    }


DESIGNS = [
    # (clusters, one holds 60%, graded, accuracy, kind)
    *[(k, True, g, acc, "exchangeable") for k in (30, 60) for g in (False, True) for acc in (0.75, 0.95)],
    *[(k, dom, g, 0.95, "exchangeable") for k in (4, 8, 12) for dom in (False, True) for g in (False, True)],
    (10, False, False, 0.75, "exchangeable"),
    (10, False, False, 0.75, "erratic"),
    (30, False, False, 0.75, "erratic"),
    (10, False, False, 0.75, "unscored"),
    (30, False, False, 0.75, "unscored"),
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmarks", type=int, default=1000)
    args = parser.parse_args()
    print(
        f"{args.benchmarks} seeded benchmarks a design, {QUESTIONS} questions, no true difference, alpha 0.05"
    )
    print(
        "| design | K | one holds 60% | scores | accuracy | ν | false alarms: CR2 t | previous (CR1 t, K − 1 df) "
        "| warned | false alarms warned |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, (k, dom, graded, acc, kind) in enumerate(DESIGNS):
        r = measure(k, dom, graded, acc, kind, args.benchmarks, seed=39_000 + i)
        print(
            f"| {kind} | {k} | {'yes' if dom else 'no'} | {'graded' if graded else '0/1'} | {acc} | {r['nu']:.1f} "
            f"| {r['cr2']:.1%} | {r['cr1']:.1%} | {r['warned']:.1%} | {r['rejected_warned']:.0%} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
