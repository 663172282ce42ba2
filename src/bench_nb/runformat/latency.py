"""MemoryBench's latency statistics, as its report.json shows them (docs/memorybench-format.md).

The rule: index ``floor(q*n)`` into the ascending list, upper median, JavaScript rounding of mean and
population standard deviation, zero or missing durations skipped. ``metrics.latency`` builds its frame on it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from operator import mul

from bench_nb.runformat.rounding import js_round, js_sum

STAT_KEYS = ("min", "max", "mean", "median", "p95", "p99", "stdDev", "count")


def _index(sorted_values: Sequence[float], q: float) -> float:
    i = math.floor(q * len(sorted_values))
    return sorted_values[i] if i < len(sorted_values) else sorted_values[-1]


def memorybench_stats(values: Iterable[float | None]) -> dict[str, int | float]:
    """MemoryBench's ``{min, max, mean, median, p95, p99, stdDev, count}`` for one list of durations.

    Values that are None or 0 are skipped, as MemoryBench does; all zeros when nothing is left.
    """
    xs = sorted(map(float, filter(None, values)))
    n = len(xs)
    if n == 0:
        return dict.fromkeys(STAT_KEYS, 0)
    mean = js_sum(xs) / n
    deviations = [x - mean for x in xs]
    variance = js_sum(map(mul, deviations, deviations)) / n  # (x - mean) ** 2 is exactly this product
    out: dict[str, int | float] = {
        "min": xs[0],
        "max": xs[-1],
        "mean": js_round(mean),
        "median": xs[n // 2],
        "p95": _index(xs, 0.95),
        "p99": _index(xs, 0.99),
        "stdDev": js_round(math.sqrt(variance)),
        "count": n,
    }
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in out.items()}
