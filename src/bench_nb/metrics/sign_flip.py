"""The cluster sign-flip (randomisation) p of the clustered signed-rank test, for few haystacks.

Under the null that two runs are exchangeable within each haystack, swapping A and B on a whole haystack
flips the sign of that haystack's score (its signed-rank score, ``metrics.signed_rank``), so every one of
the 2^K sign patterns of the K haystacks is as likely as the observed one. ``sign_flip_p`` refers Σₖ xₖ to
those 2^K patterns: exact, whatever the cluster sizes (its smallest p is 2 / 2^K), every pattern counted at
every K below ``FEW_CLUSTERS``: listed up to 14 haystacks, from 15 counted without being listed (meet in the
middle: sums of the two halves' subsets, sorted and searched). Until issue 39 the paired test of the mean
difference (``clustered_paired.paired_difference_test``) was this test below 30 haystacks; it is now the
CR2 t at every size. Definitions: docs/statistics.md ("Paired differences between runs"). numpy only.
"""

from __future__ import annotations

import functools
import math

import numpy as np

FEW_CLUSTERS = 30  # below this many haystacks the clustered signed-rank test uses sign flips; from here z
PATTERN_MATRIX_CLUSTERS = 14  # up to here every pattern is listed (2^14 = 16,384 rows), beyond counted
_TOLERANCE = 1e-10  # a partial sum within this fraction of Σ|x| of 0 counts as 0 (float rounding)


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


def sign_flip_p(values: np.ndarray) -> np.ndarray:
    """The two-sided sign-flip p of Σₖ xₖ for each row of ``values`` (shape (..., K): leading axes are data
    sets over the same K haystacks).

    p = #{patterns s : |Σₖ sₖxₖ| ≥ |Σₖ xₖ|} / 2^K over every one of the 2^K sign patterns, counted without
    listing them: the kept sums of the first half of the haystacks against the sorted kept sums of the
    other half (2 · 2^(K/2) sums and a binary search each, so 29 haystacks cost ~2^15 operations per row, not
    2^29). Writing X₊ and X₋ for the sums of the kept and the flipped haystacks, |X₊ − X₋| ≥ |X₊ + X₋|
    exactly when X₊·X₋ ≤ 0, which is what is counted (no rounding can break a tie between a pattern and its
    mirror image). ``nan`` with no haystack.
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


def smallest_p(clusters: int) -> float:
    """The smallest p the exact sign-flip test can give over ``clusters`` haystacks: 2 / 2^K (the observed
    pattern and its mirror image are always at least as extreme); 1 with one haystack; never 0 (beyond
    1,075 haystacks, where 2 / 2^K underflows, the smallest positive float)."""
    return max(math.ldexp(1.0, 1 - max(clusters, 1)), math.ulp(0.0))
