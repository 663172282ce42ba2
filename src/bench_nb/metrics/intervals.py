"""Confidence intervals for proportions."""

from __future__ import annotations

import math
from statistics import NormalDist

# The standard library's inverse normal CDF (Wichura's AS241, ~1e-16): importing scipy.stats costs a second.
Z95 = NormalDist().inv_cdf(0.975)


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes / n``; ``(nan, nan)`` when ``n == 0``. ``successes`` may be a
    sum of fractional scores (a mean score read as a proportion).

    low, high = (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    """
    if n <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    z = Z95 if confidence == 0.95 else NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # At 0 or n successes the bound is exactly 0 or 1; the float formula leaves ~1e-17 that would put the
    # interval beside its own point estimate.
    low = 0.0 if successes == 0 else max(0.0, (centre - half) / denom)
    high = 1.0 if successes == n else min(1.0, (centre + half) / denom)
    return (low, high)
