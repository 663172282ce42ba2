"""The cluster sign-flip (randomisation) test, for paired comparisons over few haystacks.

Under the null that two runs are exchangeable within each haystack, swapping A and B on a whole haystack
flips the sign of that haystack's paired differences, so every one of the 2^K sign patterns of the K
haystacks is as likely as the observed one. The test refers Σₖ xₖ (a haystack's summed differences, or its
signed-rank score) to those 2^K patterns: exact, whatever the cluster sizes, and it never claims more than
the design allows (its smallest p is 2 / 2^K). Inverting it gives an interval of the mean difference that
excludes δ exactly when the test of "mean difference = δ" rejects. Definitions and the thresholds:
docs/statistics.md ("Few haystacks: the sign-flip test"). numpy only.
"""

from __future__ import annotations

import functools
import math

import numpy as np

EXACT_CLUSTERS = 14  # up to this many haystacks every sign pattern is enumerated (2^14 = 16,384)
FEW_CLUSTERS = 30  # below this many haystacks the paired tests use sign flips; from here Student's t
_TOLERANCE = 1e-10  # a partial sum within this fraction of Σ|x| of 0 counts as 0 (float rounding)


def sign_patterns(clusters: int, seed: int = 0, draws: int = 2000) -> np.ndarray:
    """Which haystacks keep their sign (1) and which are flipped (0): an (m × clusters) matrix of floats.

    Every one of the 2^K patterns (m = 2^K) up to ``EXACT_CLUSTERS`` haystacks; beyond, the observed
    pattern (all ones) and ``draws`` patterns drawn uniformly (``numpy.random.default_rng(seed)``;
    m = draws + 1). Remembered (read-only): a report asks for the same ones for every pair."""
    return _patterns(clusters, seed, draws)


@functools.lru_cache(maxsize=16)
def _patterns(clusters: int, seed: int, draws: int) -> np.ndarray:
    if clusters <= EXACT_CLUSTERS:
        keep = (np.arange(2**clusters)[:, None] >> np.arange(clusters)) & 1
    else:
        rng = np.random.default_rng(seed)
        keep = np.vstack([np.ones((1, clusters), dtype=np.int64), rng.integers(0, 2, (draws, clusters))])
    out = keep.astype(np.float64)
    out.flags.writeable = False
    return out


def _snap(x: np.ndarray, scale: np.ndarray | float) -> np.ndarray:
    return np.where(np.abs(x) <= _TOLERANCE * scale, 0.0, x)


def sign_flip_p(values: np.ndarray, seed: int = 0, draws: int = 2000) -> np.ndarray:
    """The two-sided sign-flip p of Σₖ xₖ for each row of ``values`` (shape (..., K): leading axes are data
    sets over the same K haystacks).

    p = #{patterns s : |Σₖ sₖxₖ| ≥ |Σₖ xₖ|} / m over ``sign_patterns`` (exact up to ``EXACT_CLUSTERS``
    haystacks, else Monte Carlo with the observed pattern counted, p ≥ 1/m). Writing X₊ and X₋ for the sums
    of the kept and the flipped haystacks, |X₊ − X₋| ≥ |X₊ + X₋| exactly when X₊·X₋ ≤ 0, which is what is
    counted (no rounding can break a tie between a pattern and its mirror image). ``nan`` with no haystack.
    """
    x = np.asarray(values, dtype=float)
    lead, k = x.shape[:-1], x.shape[-1]
    if k == 0:
        return np.full(lead, math.nan)
    flat = x.reshape(-1, k)
    keep = sign_patterns(k, seed, draws)
    scale = np.abs(flat).sum(axis=1)
    out = np.empty(len(flat))
    step = max(1, 2**22 // len(keep))  # rows at a time: at most ~4M pattern sums in memory
    for start in range(0, len(flat), step):
        rows = flat[start : start + step].T
        kept = keep @ rows
        plus = _snap(kept, scale[start : start + step])
        minus = _snap(rows.sum(axis=0) - kept, scale[start : start + step])
        out[start : start + step] = (plus * minus <= 0).mean(axis=0)
    return out.reshape(lead)


def sign_flip_mean_test(
    sums: np.ndarray, counts: np.ndarray, alpha: float = 0.05, seed: int = 0, draws: int = 2000
) -> tuple[float, float, float]:
    """``(p, low, high)``: the sign-flip test of H0: mean difference = 0 and its inverted 1 − ``alpha``
    interval, from the haystacks' summed differences ``sums`` over ``counts`` questions.

    The test of H0: mean = δ flips the signs of eₖ(δ) = Dₖ − δ·nₖ. For a pattern with kept haystacks (D₊, n₊)
    and flipped ones (D₋, n₋), E₊(δ)·E₋(δ) ≤ 0 exactly when δ lies between D₊/n₊ and D₋/n₋ (the pattern's
    own interval, which holds the overall mean D̄, their weighted average); the observed pattern and its
    mirror image count at every δ. So p(δ) = #{patterns whose interval holds δ} / m, p = p(0), and
    {δ : p(δ) ≥ alpha} is the interval [c-th smallest lower end, c-th largest upper end], c = ⌈alpha·m⌉:
    it excludes 0 exactly when p < alpha. ``(p, nan, nan)`` when even the widest interval is unbounded
    (c ≤ the patterns that count everywhere: with 5 haystacks or fewer at alpha = 0.05, where no test can
    reject); ``(nan, nan, nan)`` with no haystack. Haystacks with no question are left out.
    """
    present = np.asarray(counts) > 0
    d, n = np.asarray(sums, dtype=float)[present], np.asarray(counts, dtype=float)[present]
    k = len(d)
    if k == 0:
        return (math.nan, math.nan, math.nan)
    keep = sign_patterns(k, seed, draws)
    scale = float(np.abs(d).sum())
    kept = keep @ d
    d_plus, d_minus = _snap(kept, scale), _snap(d.sum() - kept, scale)
    n_plus = keep @ n
    n_minus = n.sum() - n_plus
    everywhere = (n_plus == 0) | (n_minus == 0)  # the observed pattern and its mirror image
    with np.errstate(invalid="ignore", divide="ignore"):
        m_plus = np.where(everywhere, 0.0, d_plus / np.where(n_plus > 0, n_plus, 1.0))
        m_minus = np.where(everywhere, 0.0, d_minus / np.where(n_minus > 0, n_minus, 1.0))
    low = np.where(everywhere, -np.inf, np.minimum(m_plus, m_minus))
    high = np.where(everywhere, np.inf, np.maximum(m_plus, m_minus))
    m = len(keep)
    p = float(((low <= 0) & (high >= 0)).sum() / m)
    c = max(1, math.ceil(alpha * m - 1e-9))
    lower = float(np.partition(low, c - 1)[c - 1])
    upper = float(-np.partition(-high, c - 1)[c - 1])
    if math.isinf(lower) or math.isinf(upper):
        return (p, math.nan, math.nan)
    return (p, lower, upper)


def smallest_p(clusters: int) -> float:
    """The smallest p the exact sign-flip test can give over ``clusters`` haystacks: 2 / 2^K (the observed
    pattern and its mirror image are always at least as extreme); 1 with one haystack; never 0 (beyond
    1,075 haystacks, where 2 / 2^K underflows, the smallest positive float)."""
    return max(math.ldexp(1.0, 1 - max(clusters, 1)), math.ulp(0.0))


def fewest_clusters(alpha: float = 0.05) -> int:
    """The fewest haystacks with which the sign-flip test can reject at ``alpha``: the smallest K with
    2 / 2^K < alpha (6 at 0.05, 8 at 0.01)."""
    k = 1
    while smallest_p(k) >= alpha:
        k += 1
    return k
