"""Confidence intervals for proportions."""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

# The standard library's inverse normal CDF (Wichura's AS241, ~1e-16): importing scipy.stats costs a second.
Z95 = NormalDist().inv_cdf(0.975)


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes / n``; ``(nan, nan)`` when ``n == 0``. ``successes`` may be a
    sum of fractional scores (a mean score read as a proportion)."""
    if n <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    z = Z95 if confidence == 0.95 else NormalDist().inv_cdf(0.5 + confidence / 2)
    return wilson_proportion_interval(successes / n, n, z)


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


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), from its continued fraction (modified Lentz;
    Press et al., Numerical Recipes, 3rd ed., §6.4), to about 1e-14."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast below this point: use the symmetry
        return 1.0 - _incomplete_beta(b, a, 1 - x)
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return min(1.0, front * h / a)


def student_t_central(t: float, df: float) -> float:
    """P(|T| ≤ t) for Student's t on ``df`` degrees of freedom: for an integer ``df`` the exact finite
    series (Abramowitz & Stegun 26.7.3-26.7.4), else 1 − I_{df/(df+t²)}(df/2, 1/2) (A&S 26.7.1, the
    incomplete beta function; a Satterthwaite-type df such as Bell-McCaffrey's is not an integer). The
    standard library has no t distribution and scipy costs a second to import."""
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    if math.isinf(t):
        return 1.0
    t = abs(t)
    if df != int(df):
        return 1.0 - _incomplete_beta(df / 2, 0.5, df / (df + t * t))
    df = int(df)
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    theta = math.atan(t / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 1:
        total, term = 0.0, math.cos(theta)
        for k in range(1, (df - 1) // 2 + 1):  # cosθ + (2/3)cos³θ + ... up to cos^(df−2)θ
            total += term
            term *= c2 * (2 * k) / (2 * k + 1)
        return min(1.0, 2 / math.pi * (theta + s * total)) if df > 1 else 2 * theta / math.pi
    total, term = 0.0, 1.0
    for k in range(1, df // 2 + 1):  # 1 + (1/2)cos²θ + (1·3)/(2·4)cos⁴θ + ... up to cos^(df−2)θ
        total += term
        term *= c2 * (2 * k - 1) / (2 * k)
    return min(1.0, s * total)


def student_t_two_sided_p(t: float, df: float) -> float:
    """The two-sided p-value 2·P(T > |t|) on ``df`` degrees of freedom."""
    return max(0.0, 1.0 - student_t_central(t, df))


def _student_t_density(x: float, df: float) -> float:
    """Student's t density on ``df`` degrees of freedom."""
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2 * math.log1p(x * x / df))


@functools.lru_cache(maxsize=256)
def student_t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t on ``df`` (> 0, not necessarily integer) degrees of freedom, to
    about 1e-13.

    Newton's method on P(|T| ≤ x) = |2q − 1| from the normal quantile: that function is concave for x > 0
    and the normal quantile lies below t's, so each step stays below the root and closes in on it (5-8
    steps, each one ``student_t_central`` series of ``df`` terms; bisection took ~50). Bisection finishes
    what Newton does not within 50 steps (heavy tails on 1-2 degrees of freedom far out). Remembered: a
    report asks for the same few (q, df) many times."""
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q}")
    if q == 0.5:
        return 0.0
    target = abs(2 * q - 1)  # P(|T| ≤ x) = |2q − 1|
    x = NormalDist().inv_cdf(0.5 + target / 2)
    for _ in range(50):
        step = (target - student_t_central(x, df)) / (2 * _student_t_density(x, df))
        x += step
        if abs(step) <= 1e-14 * x:
            break
    else:
        low, high = x, 2 * x + 1.0
        while student_t_central(high, df) < target:
            low, high = high, high * 2
        for _ in range(200):
            mid = (low + high) / 2
            if student_t_central(mid, df) < target:
                low = mid
            else:
                high = mid
            if high - low < 1e-12 * max(1.0, high):
                break
        x = (low + high) / 2
    return x if q > 0.5 else -x


def mean_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """The normal-approximation interval of a mean score: ``mean ± z · s / sqrt(n)`` (s the sample standard
    deviation), clipped to [0, 1]; ``(nan, nan)`` for fewer than two values. Used for graded scores (BEAM),
    where Wilson's interval for a proportion does not apply."""
    n = len(values)
    if n < 2:
        return (math.nan, math.nan)
    z = Z95 if confidence == 0.95 else NormalDist().inv_cdf(0.5 + confidence / 2)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = z * sd / math.sqrt(n)
    return (max(0.0, mean - half), min(1.0, mean + half))
