"""The cluster sign-flip (randomisation) test, for paired comparisons over few haystacks.

Under the null that two runs are exchangeable within each haystack, swapping A and B on a whole haystack
flips the sign of that haystack's paired differences, so every one of the 2^K sign patterns of the K
haystacks is as likely as the observed one. The test refers Σₖ xₖ (a haystack's summed differences, or its
signed-rank score) to those 2^K patterns: exact, whatever the cluster sizes, and it never claims more than
the design allows (its smallest p is 2 / 2^K). Inverting it gives an interval of the mean difference that
excludes δ exactly when the test of "mean difference = δ" rejects. Every pattern counts at every K below
``FEW_CLUSTERS``: listed up to 14 haystacks, from 15 counted without being listed (meet in the middle:
sums of the two halves' subsets, sorted and searched), so no result depends on a seed. Definitions:
docs/statistics.md ("Paired differences between runs"). numpy only.
"""

from __future__ import annotations

import functools
import math

import numpy as np

FEW_CLUSTERS = 30  # below this many haystacks the paired tests use sign flips; from here Student's t
EXACT_CLUSTERS = FEW_CLUSTERS - 1  # every sign-flip test is exact: all 2^K patterns are counted, K ≤ 29
PATTERN_MATRIX_CLUSTERS = 14  # up to here every pattern is listed (2^14 = 16,384 rows), beyond counted
_TOLERANCE = 1e-10  # a partial sum within this fraction of Σ|x| of 0 counts as 0 (float rounding)
_ROUNDING = 1e-13  # the tolerance while searching for an interval's end: only the sums' own rounding
_CANDIDATES = 2**20  # most sub-means read near an end (beyond, the window holds ties of one value)


def sign_patterns(clusters: int, seed: int = 0, draws: int = 2000) -> np.ndarray:
    """Which haystacks keep their sign (1) and which are flipped (0): an (m × clusters) matrix of floats,
    for statistics that need the patterns themselves (``power.sign_flip_lower_ends``; the tests count
    without listing them).

    Every one of the 2^K patterns (m = 2^K) up to ``PATTERN_MATRIX_CLUSTERS`` haystacks; beyond, the
    observed pattern (all ones) and ``draws`` patterns drawn uniformly (``numpy.random.default_rng(seed)``;
    m = draws + 1). Remembered (read-only)."""
    return _patterns(clusters, seed, draws)


@functools.lru_cache(maxsize=16)
def _patterns(clusters: int, seed: int, draws: int) -> np.ndarray:
    if clusters <= PATTERN_MATRIX_CLUSTERS:
        out = _bits(clusters)
    else:
        rng = np.random.default_rng(seed)
        keep = np.vstack([np.ones((1, clusters), dtype=np.int64), rng.integers(0, 2, (draws, clusters))])
        out = keep.astype(np.float64)
        out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=32)
def _bits(clusters: int) -> np.ndarray:
    """Every subset of ``clusters`` haystacks as a row of 0/1 floats (row i keeps haystack j when bit j of i
    is set): (2^clusters × clusters), read-only."""
    out = ((np.arange(2**clusters)[:, None] >> np.arange(clusters)) & 1).astype(np.float64)
    out.flags.writeable = False
    return out


def _halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sums of every subset of the first ⌊K/2⌋ haystacks and of the rest (along the last axis): a
    pattern's kept sum is one of each, so the 2^K sums are every a + b, never listed (meet in the middle)."""
    h = x.shape[-1] // 2
    return x[..., :h] @ _bits(h).T, x[..., h:] @ _bits(x.shape[-1] - h).T


def _not_extreme(a: np.ndarray, b_sorted: np.ndarray, low: float, high: float) -> int:
    """#{(i, j) : low < aᵢ + bⱼ < high}, ``b_sorted`` ascending."""
    if not low < high:
        return 0
    a = np.sort(a)  # sorted queries: the binary searches walk b_sorted in order (several times faster)
    inside = np.searchsorted(b_sorted, high - a, "left") - np.searchsorted(b_sorted, low - a, "right")
    return int(np.maximum(inside, 0).sum())


def _counted(
    total: float, scale: float, a: np.ndarray, b_sorted: np.ndarray, tolerance: float = _TOLERANCE
) -> int:
    """How many of the len(a)·len(b) patterns are at least as extreme as the observed one: X₊·X₋ ≤ 0 with
    X₊ = aᵢ + bⱼ (the kept haystacks' sum), X₋ = ``total`` − X₊, either within ``_TOLERANCE``·``scale`` of 0
    counting as 0. The others are those with X₊ strictly between 0 and ``total`` (beyond the tolerance)."""
    tol = tolerance * scale
    low, high = (tol, total - tol) if total > 0 else (total + tol, -tol)
    return len(a) * len(b_sorted) - _not_extreme(a, b_sorted, low, high)


def sign_flip_p(values: np.ndarray, seed: int = 0, draws: int = 2000) -> np.ndarray:
    """The two-sided sign-flip p of Σₖ xₖ for each row of ``values`` (shape (..., K): leading axes are data
    sets over the same K haystacks).

    p = #{patterns s : |Σₖ sₖxₖ| ≥ |Σₖ xₖ|} / 2^K over every one of the 2^K sign patterns, counted without
    listing them: the kept sums of the first half of the haystacks against the sorted kept sums of the
    other half (2 · 2^(K/2) sums and a binary search each, so 29 haystacks cost ~2^15 operations per row, not
    2^29). Writing X₊ and X₋ for the sums of the kept and the flipped haystacks, |X₊ − X₋| ≥ |X₊ + X₋|
    exactly when X₊·X₋ ≤ 0, which is what is counted (no rounding can break a tie between a pattern and its
    mirror image). Deterministic: ``seed`` and ``draws`` are accepted and unused (until session 9 the
    patterns were drawn from 15 haystacks). ``nan`` with no haystack.
    """
    x = np.asarray(values, dtype=float)
    lead, k = x.shape[:-1], x.shape[-1]
    if k == 0:
        return np.full(lead, math.nan)
    flat = x.reshape(-1, k)
    if k <= PATTERN_MATRIX_CLUSTERS:
        return _listed_p(flat).reshape(lead)
    a, b = _halves(flat)
    b = np.sort(b, axis=1)
    totals, scales = flat.sum(axis=1), np.abs(flat).sum(axis=1)
    m = float(2**k)
    out = np.array([_counted(totals[i], scales[i], a[i], b[i]) / m for i in range(len(flat))])
    return out.reshape(lead)


def _snap(x: np.ndarray, scale: np.ndarray | float) -> np.ndarray:
    return np.where(np.abs(x) <= _TOLERANCE * scale, 0.0, x)


def _listed_p(flat: np.ndarray) -> np.ndarray:
    """``sign_flip_p`` of each row with every pattern listed (≤ ``PATTERN_MATRIX_CLUSTERS`` haystacks: a
    matrix product over many rows at once is faster there than counting row by row)."""
    keep = _bits(flat.shape[1])
    scale = np.abs(flat).sum(axis=1)
    out = np.empty(len(flat))
    step = max(1, 2**22 // len(keep))  # rows at a time: at most ~4M pattern sums in memory
    for start in range(0, len(flat), step):
        rows = flat[start : start + step].T
        kept = keep @ rows
        plus = _snap(kept, scale[start : start + step])
        minus = _snap(rows.sum(axis=0) - kept, scale[start : start + step])
        out[start : start + step] = (plus * minus <= 0).mean(axis=0)
    return out


def _listed_test(d: np.ndarray, n: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """``sign_flip_mean_test`` with every pattern listed (≤ ``PATTERN_MATRIX_CLUSTERS`` haystacks)."""
    keep = _bits(len(d))
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


class _Shifted:
    """The haystacks' eₖ(δ) = Dₖ − δ·nₖ for any δ, by halves: the sign-flip test of "mean = δ" on them."""

    def __init__(self, d: np.ndarray, n: np.ndarray) -> None:
        self.d, self.n = d, n
        (self.ad, self.bd), (self.an, self.bn) = _halves(d), _halves(n)
        self.m = 2 ** len(d)

    def counted(self, delta: float, tolerance: float = _TOLERANCE) -> int:
        """The patterns whose own interval holds ``delta`` (p(δ) · 2^K)."""
        e = self.d - delta * self.n
        b = np.sort(self.bd - delta * self.bn)
        return _counted(float(e.sum()), float(np.abs(e).sum()), self.ad - delta * self.an, b, tolerance)

    def sub_means_between(self, low: float, high: float) -> np.ndarray:
        """The distinct sub-means D₊/n₊ in [``low``, ``high``] of the patterns that are neither empty nor full,
        sorted (read from at most ``_CANDIDATES`` patterns: a window that narrow holding more is one value's
        ties, as when every haystack has the same mean difference). Such a pattern has |E₊(δ)| = n₊·|D₊/n₊ − δ| ≤ n·(high − low) at the
        window's middle δ, so it is found by a range search of the sorted kept sums, never listing the rest."""
        mid = (low + high) / 2
        reach = float(self.n.sum()) * (high - low) + 4 * _ROUNDING * float(
            np.abs(self.d - mid * self.n).sum()
        )
        a, b = self.ad - mid * self.an, self.bd - mid * self.bn
        order = np.argsort(b)
        b_sorted = b[order]
        first = np.searchsorted(b_sorted, -reach - a, "left")
        width = np.maximum(np.searchsorted(b_sorted, reach - a, "right") - first, 0)
        if width.sum() > _CANDIDATES:
            width = np.minimum(width, max(1, _CANDIDATES // len(a)))
        i = np.repeat(np.arange(len(a)), width)
        j = order[
            np.repeat(first, width) + np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width, width)
        ]
        n_plus = self.an[i] + self.bn[j]
        ok = (n_plus > 0) & (n_plus < self.n.sum())
        means = (self.ad[i] + self.bd[j])[ok] / n_plus[ok]
        return np.unique(means[(means >= low) & (means <= high)])

    def end(self, inside: float, outside: float, c: int) -> float:
        """The end of {δ : p(δ) ≥ c/2^K} between ``inside`` (accepted) and ``outside`` (rejected). The set is
        an interval (every pattern's own interval holds D̄): bisection closes in on the end, 0 decided first
        so that the end is on the side of 0 the test's p says; the end itself is then the sub-mean of a
        pattern in the last bracket, the one where p(δ) reaches c/2^K (counted as p is)."""
        zero_ok = None
        if min(inside, outside) < 0 < max(inside, outside):
            zero_ok = self.counted(0.0) >= c
            inside, outside = (0.0, outside) if zero_ok else (inside, 0.0)
        goal = 1e-10 * max(abs(outside - inside), 1e-300)
        while abs(outside - inside) > goal:
            mid = (inside + outside) / 2
            if mid in (inside, outside):
                break
            if self.counted(mid, _ROUNDING) >= c:
                inside = mid
            else:
                outside = mid
        # rounding may accept a δ up to _ROUNDING·Σ|eₖ(δ)| / n₊ past the exact end (n₊ ≥ 1)
        pad = abs(outside - inside) + 4 * _ROUNDING * float(np.abs(self.d).sum() + abs(inside) * self.n.sum())
        candidates = self.sub_means_between(min(inside, outside) - pad, max(inside, outside) + pad)
        if inside > outside:  # a lower end: the smallest accepted candidate
            candidates = candidates[::-1]
        found = inside
        lo, hi = 0, len(candidates)  # candidates[:lo] accepted (bisection over them, nearest inside first)
        while lo < hi:
            mid_i = (lo + hi) // 2
            if self.counted(float(candidates[mid_i])) >= c:
                found, lo = float(candidates[mid_i]), mid_i + 1
            else:
                hi = mid_i
        return found


def sign_flip_mean_test(
    sums: np.ndarray, counts: np.ndarray, alpha: float = 0.05, seed: int = 0, draws: int = 2000
) -> tuple[float, float, float]:
    """``(p, low, high)``: the sign-flip test of H0: mean difference = 0 and its inverted 1 − ``alpha``
    interval, from the haystacks' summed differences ``sums`` over ``counts`` questions; exact, over all 2^K
    sign patterns (``seed`` and ``draws`` are accepted and unused).

    The test of H0: mean = δ flips the signs of eₖ(δ) = Dₖ − δ·nₖ. For a pattern with kept haystacks (D₊, n₊)
    and flipped ones (D₋, n₋), E₊(δ)·E₋(δ) ≤ 0 exactly when δ lies between D₊/n₊ and D₋/n₋ (the pattern's
    own interval, which holds the overall mean D̄, their weighted average); the observed pattern and its
    mirror image count at every δ. So p(δ) = #{patterns whose interval holds δ} / 2^K, p = p(0), and
    {δ : p(δ) ≥ alpha} is the interval [c-th smallest lower end, c-th largest upper end], c = ⌈alpha·2^K⌉:
    it excludes 0 exactly when p < alpha. Each end is found by bisection on p(δ) (counted as in
    ``sign_flip_p``, never listing the patterns), then read off the pattern whose sub-mean it is. ``(p, nan,
    nan)`` when even the widest interval is unbounded (c ≤ 2, the patterns that count everywhere: with 5
    haystacks or fewer at alpha = 0.05, where no test can reject); ``(nan, nan, nan)`` with no haystack.
    Haystacks with no question are left out.
    """
    present = np.asarray(counts) > 0
    d, n = np.asarray(sums, dtype=float)[present], np.asarray(counts, dtype=float)[present]
    k = len(d)
    if k == 0:
        return (math.nan, math.nan, math.nan)
    if k <= PATTERN_MATRIX_CLUSTERS:
        return _listed_test(d, n, alpha)
    shifted = _Shifted(d, n)
    p = shifted.counted(0.0) / shifted.m
    c = max(1, math.ceil(alpha * shifted.m - 1e-9))
    if c <= 2:
        return (p, math.nan, math.nan)
    mean = float(d.sum() / n.sum())
    means = d / n  # every sub-mean lies between the smallest and the largest haystack mean
    margin = 1e-6 * (float(means.max() - means.min()) + abs(mean) + 1e-12)
    lower = shifted.end(mean, float(means.min()) - margin, c)
    upper = shifted.end(mean, float(means.max()) + margin, c)
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
