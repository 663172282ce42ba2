"""Confidence intervals for proportions, and McNemar's test of two paired proportions."""

from __future__ import annotations

import functools
import math
from statistics import NormalDist
from typing import Literal

McNemarMethod = Literal["exact", "chi2-cc", "none"]
EXACT_BELOW = 25  # discordant pairs under which McNemar's test is exact

# The standard library's inverse normal CDF (Wichura's AS241, ~1e-16): importing scipy.stats costs a second.
Z95 = NormalDist().inv_cdf(0.975)


def check_level(name: str, value: float, example: str) -> None:
    """A ``confidence`` or ``alpha`` argument must be a fraction in (0, 1): else ``ValueError`` naming the
    argument (``confidence=95`` for 0.95 is the usual slip; it failed as a quantile's own "p"/"q")."""
    if not 0 < value < 1:
        raise ValueError(f"{name} must be a fraction in (0, 1), such as {example}, not {value!r}")


def normal_z(confidence: float) -> float:
    """z_{1−α/2}: the standard normal quantile of a two-sided interval at ``confidence``."""
    if confidence == 0.95:
        return Z95
    check_level("confidence", confidence, "0.95")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes / n``; ``(nan, nan)`` when ``n == 0``. ``successes`` may be a
    sum of fractional scores (a mean score read as a proportion)."""
    if n <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    return wilson_proportion_interval(successes / n, n, normal_z(confidence))


def wilson_proportion_interval(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` observed on ``n`` items; ``n`` may be fractional (an
    effective sample size: a design-effect-adjusted count, or a judge-quality estimate's). ``(nan, nan)``
    when ``n`` is not positive or ``p`` is nan.

    low, high = (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    """
    if not n > 0 or math.isnan(p):
        return (math.nan, math.nan)
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n)))
    # At p = 0 or 1 the bound is exactly 0 or 1; the float formula leaves ~1e-17 that would put the
    # interval beside its own point estimate.
    low = 0.0 if p <= 0 else max(0.0, (centre - half) / denom)
    high = 1.0 if p >= 1 else min(1.0, (centre + half) / denom)
    return (low, high)


def student_t_two_sided_p(t: float, df: float) -> float:
    """The two-sided p-value 2·P(T > |t|) of Student's t on ``df`` degrees of freedom.

    ``df`` > 0, not necessarily an integer (a Satterthwaite-type df such as Bell-McCaffrey's is not).
    ``scipy.special.stdtr``, imported on first use: ``import bench_nb`` and the statistics that need no t
    distribution never load scipy.
    """
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    from scipy.special import stdtr

    return min(1.0, 2 * float(stdtr(df, -abs(t))))


@functools.lru_cache(maxsize=256)
def student_t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t on ``df`` (> 0, not necessarily integer) degrees of freedom.

    ``scipy.special.stdtrit`` (imported on first use), remembered: a report asks for the same few (q, df)
    many times.
    """
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q}")
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def mean_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """The normal-approximation interval of a mean score: ``mean ± z · s / sqrt(n)`` (s the sample standard
    deviation), clipped to [0, 1]; ``(nan, nan)`` for fewer than two values. Used for graded scores (BEAM),
    where Wilson's interval for a proportion does not apply."""
    n = len(values)
    if n < 2:
        return (math.nan, math.nan)
    z = normal_z(confidence)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = z * sd / math.sqrt(n)
    return (max(0.0, mean - half), min(1.0, mean + half))


def mcnemar_test(a_only: int, b_only: int, exact: bool | None = None) -> tuple[float, float, McNemarMethod]:
    """McNemar's test: ``(statistic, p_value, method)``; exact when ``a_only + b_only < 25`` by default."""
    m = a_only + b_only
    if exact is None:
        exact = m < EXACT_BELOW
    if exact:
        k = min(a_only, b_only)
        # Two-sided exact binomial: 2·P[X ≤ k], X ~ Binomial(m, 1/2), summed in integers (no scipy import).
        tail = sum(math.comb(m, i) for i in range(k + 1)) / 2**m
        return float(k), min(1.0, 2 * tail), "exact"
    if m == 0:
        return math.nan, math.nan, "none"
    stat = (abs(a_only - b_only) - 1) ** 2 / m
    # The chi-square survival function with one degree of freedom: P[χ²₁ > x] = erfc(sqrt(x / 2)).
    return float(stat), math.erfc(math.sqrt(stat / 2)), "chi2-cc"
