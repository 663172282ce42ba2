"""JavaScript's number rules, where MemoryBench's numbers depend on them."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from functools import reduce
from operator import add


def js_round(x: float) -> int:
    """``Math.round``: the nearest integer, halves toward +infinity (2.5 -> 3, -2.5 -> -2).

    Exact for every double: ``x - floor(x)`` is computed without rounding error.
    """
    floor = math.floor(x)
    return int(floor + 1) if x - floor >= 0.5 else int(floor)


# Python 3.12's ``sum`` compensates rounding errors; before 3.12 it adds left to right, as JavaScript does.
_PLAIN_SUM = sys.version_info < (3, 12)


def js_sum(values: Iterable[float]) -> float:
    """Left-to-right float sum, as ``Array.reduce((a, b) => a + b, 0)`` computes it.

    MemoryBench does not compensate rounding errors, and its means must match to the bit: ``sum`` before
    Python 3.12 (its float loop in C, several times faster), else ``reduce`` with the same additions in order.
    """
    if _PLAIN_SUM:
        return float(sum(values, 0.0))
    return float(reduce(add, values, 0.0))
