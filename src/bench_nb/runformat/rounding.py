"""JavaScript's number rules, where MemoryBench's numbers depend on them."""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import reduce
from operator import add


def js_round(x: float) -> int:
    """``Math.round``: the nearest integer, halves toward +infinity (2.5 -> 3, -2.5 -> -2).

    Exact for every double: ``x - floor(x)`` is computed without rounding error.
    """
    floor = math.floor(x)
    return int(floor + 1) if x - floor >= 0.5 else int(floor)


def js_sum(values: Iterable[float]) -> float:
    """Left-to-right float sum, as ``Array.reduce((a, b) => a + b, 0)`` computes it.

    Python 3.12's ``sum`` compensates rounding errors; MemoryBench does not, and its means must match to the bit.
    """
    return float(reduce(add, values, 0.0))  # the same additions in the same order, looped in C
