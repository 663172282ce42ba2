"""The clustered signed-rank test of paired differences (Datta & Satten 2008), for graded paired comparisons.

Questions of one haystack are correlated, so the ordinary Wilcoxon signed-rank test, which treats them as
independent, rejects a true null too often. Datta & Satten's statistic weights each cluster equally (its
expectation over within-cluster resampling: one question drawn from each cluster, then Wilcoxon's signed
rank), and its variance comes from the clusters. Definition: docs/statistics.md ("Comparing two runs on
the same questions"). numpy only; vectorised over leading axes (replicates of one clustering).
"""

from __future__ import annotations

import math

import numpy as np

from bench_nb.metrics.sign_flip import FEW_CLUSTERS, sign_flip_p


def clustered_signed_rank(diff: np.ndarray, cluster: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(z, p)`` of the clustered signed-rank test of H0: the differences are symmetric about 0.

    ``diff`` has shape (..., n): paired differences (leading axes are independent data sets sharing one
    clustering); ``cluster`` has shape (n,): integer cluster codes 0..K−1. For question j of cluster i
    (nᵢ questions, aᵢⱼ = |dᵢⱼ|), with Fₖ(x) = Σₗ [I(aₖₗ < x) + I(aₖₗ ≤ x)] / (2nₖ):
    R̃ᵢⱼ = 1 + Σ_{k≠i} Fₖ(aᵢⱼ), Tᵢ = (1/nᵢ) Σⱼ sign(dᵢⱼ)·R̃ᵢⱼ, T = Σᵢ Tᵢ, V = Σᵢ Tᵢ²,
    z = T / √V. Swapping A and B on a haystack flips the sign of its Tᵢ, so V is T's variance over those
    sign flips: from ``FEW_CLUSTERS`` (30) haystacks p = 2·Φ(−|z|) (two-sided), below it p is the sign-flip
    p of T itself (``sign_flip_p`` over the Tᵢ: exact, every 2^K pattern counted), which the normal approximation overstates with few haystacks (4 haystacks that all agree
    give z = 2, p = 0.046, where the 16 sign patterns allow no p below 0.125). p = 1 (z = nan) when every
    difference is 0; both are nan with fewer than 2 clusters. With one question per cluster T is
    Wilcoxon's signed-rank sum with Pratt's treatment of zeros and V its tie-corrected variance.
    """
    d = np.asarray(diff, dtype=float)
    codes = np.asarray(cluster, dtype=np.int64)
    k = int(codes.max()) + 1 if codes.size else 0
    lead = d.shape[:-1]
    if k < 2:
        return np.full(lead, math.nan), np.full(lead, math.nan)
    flat = d.reshape(-1, d.shape[-1])
    b, n = flat.shape
    sizes = np.bincount(codes, minlength=k).astype(float)
    weight = 1.0 / sizes[codes]  # 1/nᵢ of each question's cluster
    a = np.abs(flat)
    levels, level = np.unique(a, return_inverse=True)  # the distinct |d| of every data set
    level = level.reshape(b, n)
    m = len(levels)
    # Weighted counts per (data set, cluster, level), then "strictly below" and "at" for each question.
    cell = (np.arange(b)[:, None] * k + codes[None, :]) * m + level
    counts = np.bincount(cell.ravel(), weights=np.broadcast_to(weight, (b, n)).ravel(), minlength=b * k * m)
    counts = counts.reshape(b, k, m)
    below = np.cumsum(counts, axis=2) - counts  # Σ over levels strictly below
    own_mid = below + counts / 2  # Fᵢ at each level: below + half of the ties
    all_mid = own_mid.sum(axis=1)  # Σₖ Fₖ at each level
    rows = np.arange(b)[:, None]
    rank = 1 + all_mid[rows, level] - own_mid[rows, codes[None, :], level]
    contribution = np.sign(flat) * rank * weight
    slot = (rows * k + codes[None, :]).ravel()
    per_cluster = np.bincount(slot, weights=contribution.ravel(), minlength=b * k).reshape(b, k)
    t = per_cluster.sum(axis=1)
    v = (per_cluster**2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(v > 0, t / np.sqrt(np.where(v > 0, v, 1.0)), math.nan)
    if k < FEW_CLUSTERS:
        p = np.where(v > 0, sign_flip_p(per_cluster), 1.0)
    else:
        erfc = np.vectorize(math.erfc, otypes=[float])  # 2·Φ(−|z|) = erfc(|z|/√2), elementwise
        p = np.where(v > 0, erfc(np.abs(np.nan_to_num(z)) / math.sqrt(2)), 1.0)
    return z.reshape(lead), p.reshape(lead)
