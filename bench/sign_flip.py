"""The haystack sign-flip test's cost and seed stability: the exact count of all 2^K patterns (session 9:
meet in the middle, ``bench_nb.metrics.sign_flip``) against the previous test measured in the same run
(every pattern listed up to 14 haystacks, 2,000 seeded patterns from 15 to 29), and against listing all 2^K
patterns (the direct way to make 15-29 exact).

    .venv/bin/python bench/sign_flip.py

For K = 10, 14, 15, 20, 25, 29 haystacks of LoCoMo-like sizes, prints per comparison (p and its inverted
interval, ``sign_flip_mean_test``): the median time of each, the new-to-previous ratio, the peak memory
(tracemalloc), and how far p and the interval's ends move across 20 seeds with the previous test (the new
one gives one answer for every seed). Results: BENCHMARKS.md ("Sign-flip test").
"""

from __future__ import annotations

import functools
import math
import statistics
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from bench_nb.metrics.sign_flip import sign_flip_mean_test

ALPHA = 0.05


def _ends(keep: np.ndarray, d: np.ndarray, n: np.ndarray) -> tuple[float, float, float]:
    """p and the interval over the listed patterns ``keep`` (the previous implementation's arithmetic)."""
    d_plus, n_plus = keep @ d, keep @ n
    d_minus, n_minus = d.sum() - d_plus, n.sum() - n_plus
    ends = (n_plus == 0) | (n_minus == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        m_plus, m_minus = d_plus / n_plus, d_minus / n_minus
    low = np.where(ends, -np.inf, np.fmin(m_plus, m_minus))
    high = np.where(ends, np.inf, np.fmax(m_plus, m_minus))
    c = max(1, math.ceil(ALPHA * len(keep) - 1e-9))
    p = float(((low <= 0) & (high >= 0)).mean())
    return p, float(np.partition(low, c - 1)[c - 1]), float(-np.partition(-high, c - 1)[c - 1])


def previous(d: np.ndarray, n: np.ndarray, seed: int = 0) -> tuple[float, float, float]:
    """The test until session 9: all patterns up to 14 haystacks, else the observed one and 2,000 drawn
    (its pattern matrices were remembered: so here)."""
    return _ends(_previous_patterns(len(d), seed), d, n)


@functools.lru_cache(maxsize=64)
def _previous_patterns(k: int, seed: int) -> np.ndarray:
    if k <= 14:
        return ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(float)
    rng = np.random.default_rng(seed)
    return np.vstack([np.ones((1, k)), rng.integers(0, 2, (2000, k))]).astype(float)


def listed(d: np.ndarray, n: np.ndarray) -> tuple[float, float, float]:
    """All 2^K patterns listed as a matrix (feasible to ~22 haystacks)."""
    k = len(d)
    return _ends(((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(float), d, n)


def measure(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median seconds and peak MB of ``fn``."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return statistics.median(times), peak


def main() -> None:
    rng = np.random.default_rng(0)
    sizes = np.array([152, 81, 152, 199, 178, 123, 150, 191, 156, 158]) // 4
    print(
        f"{'K':>3} {'previous ms':>12} {'exact ms':>9} {'ratio':>7} {'prev MB':>8} {'exact MB':>9} "
        f"{'listed ms':>10} {'listed MB':>10}  previous across 20 seeds: p / low / high range"
    )
    for k in (10, 14, 15, 20, 25, 29):
        n = np.resize(sizes, k).astype(float)
        d = np.round(rng.normal(0.08, 0.3, k) * n)
        repeats = 7 if k < 25 else 3
        t_old, m_old = measure(lambda d=d, n=n: previous(d, n), repeats)
        t_new, m_new = measure(lambda d=d, n=n: sign_flip_mean_test(d, n), repeats)
        exact = sign_flip_mean_test(d, n)
        if k <= 20:
            t_list, m_list = measure(lambda d=d, n=n: listed(d, n), 3)
            assert np.allclose(listed(d, n), exact, atol=1e-12)
            lst = f"{t_list * 1e3:10.1f} {m_list:10.1f}"
        else:
            lst = f"{'-':>10} {'-':>10}"
        spread = "exact (one answer)"
        if k > 14:
            runs = np.array([previous(d, n, seed) for seed in range(20)])
            spread = " / ".join(f"{x:.4f}" for x in runs.max(axis=0) - runs.min(axis=0))
        print(
            f"{k:3d} {t_old * 1e3:12.2f} {t_new * 1e3:9.2f} {t_new / t_old:7.1f} {m_old:8.2f} {m_new:9.2f} "
            f"{lst}  {spread}   exact p={exact[0]:.4f} [{exact[1]:.4f}, {exact[2]:.4f}]"
        )


if __name__ == "__main__":
    main()
