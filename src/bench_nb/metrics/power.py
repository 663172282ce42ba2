"""Power and sample size for comparing two runs' accuracies, with clustered questions.

With Kish's design effect deff = 1 + (m − 1)·ICC for clusters of ``cluster_size`` m questions and intraclass
correlation ICC, K = ⌊n/m⌋ haystacks per run, and SE = √(variance · deff / n) the standard error of the
estimated difference (variance 2·p(1−p) for independent samples, 2·p(1−p)·(1 − ρ) for ``paired=True``,
outcomes correlated ``correlation`` ρ, ICC then that of the paired differences):

- paired: MDE = c_K · SE, with c_K = t_{K−1,1−α/2} + t_{K−1,power} the multiplier of the **clustered paired
  test** ``tell_apart`` runs (``paired_test_multiplier``: the CR2 t, whose Bell-McCaffrey degrees of freedom
  are K − 1 on K equal haystacks). ``nan`` with one haystack.
- independent samples: MDE = (t_{2K−2,1−α/2} + t_{2K−2,power}) · SE (a two-sample t on the haystacks' means;
  ``nan`` with one haystack each).

``questions_needed`` is the smallest n with MDE ≤ δ, never fewer questions than those haystacks. Proportions,
not percent. Definitions and references: docs/statistics.md ("Power and sample size").
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from itertools import combinations
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike
from bench_nb.metrics.clustered import intraclass_correlation, outcomes
from bench_nb.metrics.intervals import student_t_quantile

PAIRED_FEWEST = 2  # the fewest haystacks the clustered paired test can reject with (at any alpha)


def _check(p: float, alpha: float, power: float, cluster_size: float, icc: float, correlation: float) -> None:
    if not 0 < p < 1:
        raise ValueError(f"p (the accuracy, a proportion) must be in (0, 1), got {p}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if cluster_size < 1:
        raise ValueError(f"cluster_size (questions per haystack) must be at least 1, got {cluster_size}")
    if not 0 <= icc <= 1:
        raise ValueError(f"icc must be in [0, 1], got {icc}")
    if not -1 <= correlation <= 1:
        raise ValueError(f"correlation must be in [-1, 1], got {correlation}")


def cluster_design_effect(cluster_size: float, icc: float) -> float:
    """Kish's design effect for clusters of equal size m: 1 + (m − 1)·ICC."""
    return 1 + (cluster_size - 1) * icc


def _spread(p: float, paired: bool, correlation: float) -> float:
    """n × the variance of the estimated difference of two accuracies, before the design effect."""
    return 2 * p * (1 - p) * ((1 - correlation) if paired else 1.0)


def _haystacks(n: float, cluster_size: float) -> int:
    """K = ⌊n / m⌋ haystacks per run (at least 1)."""
    return max(1, math.floor(n / cluster_size + 1e-9))


def _t_sum(alpha: float, power: float, df: int) -> float:
    return student_t_quantile(1 - alpha / 2, df) + student_t_quantile(power, df)


@functools.lru_cache(maxsize=128)
def paired_test_multiplier(clusters: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """c_K: the clustered paired test over K equal haystacks (``clustered_paired.paired_difference_test``,
    what ``tell_apart`` runs: there the CR2 t on K − 1 Bell-McCaffrey degrees of freedom, the one-sample t of
    the haystacks' mean differences) rejects with probability ``power`` when the mean difference is
    c_K · σ/√K, σ the standard deviation of one haystack's mean difference (normal): the noncentrality at
    which P(|T′_{K−1}(c_K)| > t_{K−1,1−α/2}) = ``power`` (scipy's noncentral t; about t_{K−1,1−α/2} +
    t_{K−1,power}, which is 14% short at 2 haystacks); 0 when ``power`` ≤ ``alpha``, which no difference is
    needed for. ``inf`` with fewer than 2 haystacks."""
    if clusters < PAIRED_FEWEST:
        return math.inf
    from scipy.special import nctdtr

    df = clusters - 1
    crit = student_t_quantile(1 - alpha / 2, df)

    def short(c: float) -> float:
        far = float(nctdtr(df, c, -crit))  # the wrong tail: negligible, and nan where it underflows
        return 1 - float(nctdtr(df, c, crit)) + (far if far == far else 0.0) - power

    if short(0.0) >= 0:
        return 0.0  # the test rejects with probability alpha ≥ power with no difference at all
    high = max(1.25 * _t_sum(alpha, power, df), 1.0)  # the sum falls short by at most 14% (K = 2, 80% power)
    while short(high) < 0:
        high *= 1.25
    low = 0.0  # short(low) < 0 <= short(high), and power rises with the noncentrality: bisect
    while high - low > 1e-12 * (1 + high):
        mid = (low + high) / 2
        if short(mid) < 0:
            low = mid
        else:
            high = mid
    return high


def minimum_detectable_effect(
    n: int,
    p: float,
    alpha: float = 0.05,
    power: float = 0.8,
    cluster_size: float = 1,
    icc: float = 0.0,
    *,
    paired: bool = False,
    correlation: float = 0.0,
) -> float:
    """The smallest difference of accuracies (a proportion) two runs of ``n`` questions each detect with
    probability ``power`` in a two-sided test at ``alpha`` (paired: the clustered paired test ``tell_apart``
    runs on ⌊n / cluster_size⌋ haystacks; ``nan`` with too few haystacks for any test to reject).

    Args:
        n: questions per run.
        p: the accuracy the runs sit around (its variance p(1−p) is used for both).
        alpha: the test's level.
        power: the probability of detecting the difference.
        cluster_size: questions per haystack (LoCoMo: 154 per conversation).
        icc: the intraclass correlation of outcomes within a haystack (of paired differences with
            ``paired=True``).
        paired: both runs answer the same questions (the usual benchmark design).
        correlation: with ``paired=True``, the correlation of the two runs' outcomes on a question.
    """
    if n <= 0:
        raise ValueError(f"n (questions per run) must be positive, got {n}")
    _check(p, alpha, power, cluster_size, icc, correlation)
    deff = cluster_design_effect(cluster_size, icc)
    k = _haystacks(n, cluster_size)
    if paired:
        c = paired_test_multiplier(k, alpha, power)
    else:
        c = _t_sum(alpha, power, 2 * k - 2) if k >= 2 else math.inf
    if math.isinf(c):
        return math.nan
    return c * math.sqrt(_spread(p, paired, correlation) * deff / n)


def questions_needed(
    delta: float,
    p: float,
    alpha: float = 0.05,
    power: float = 0.8,
    cluster_size: float = 1,
    icc: float = 0.0,
    *,
    paired: bool = False,
    correlation: float = 0.0,
) -> int:
    """Questions per run needed to detect a difference ``delta`` (a proportion) with probability ``power``
    in a two-sided test at ``alpha``: the smallest n with ``minimum_detectable_effect(n) ≤ |delta|``, never
    fewer than ``PAIRED_FEWEST`` (2) haystacks (paired) or 2 (independent samples); divide by
    ``cluster_size`` for the haystacks (conversations) needed. Arguments as ``minimum_detectable_effect``."""
    if delta == 0 or not -1 < delta < 1:
        raise ValueError(f"delta (a difference of proportions) must be non-zero and in (-1, 1), got {delta}")
    _check(p, alpha, power, cluster_size, icc, correlation)

    def enough(n: int) -> bool:
        mde = minimum_detectable_effect(
            n, p, alpha, power, cluster_size, icc, paired=paired, correlation=correlation
        )
        return not math.isnan(mde) and mde <= abs(delta) * (1 + 1e-12)

    # The normal approximation's n is a lower bound (the tests' multipliers exceed z's sum), and so are the
    # fewest haystacks a test can reject with. Double up to a sufficient n, then bisect (MDE falls with n).
    z = NormalDist()
    z_sum = z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)
    deff = cluster_design_effect(cluster_size, icc)
    low = max(1, math.ceil(z_sum**2 * _spread(p, paired, correlation) * deff / delta**2 - 1e-9))
    low = max(low, math.ceil((PAIRED_FEWEST if paired else 2) * cluster_size - 1e-9))
    if enough(low):
        return low
    high = low * 2
    while not enough(high):
        low, high = high, high * 2
    while high - low > 1:  # enough(high), not enough(low)
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def detectable_differences_frame(
    questions: QuestionsLike, *, alpha: float = 0.05, power: float = 0.8
) -> pl.DataFrame:
    """The smallest difference this benchmark can detect, overall (``question_type = "all"``) and per type,
    from its own size, clusters and the runs' own intraclass correlation.

    Runs on different questions (``question_sets``: no question in common, e.g. two benchmarks) are planned
    apart, never pooled: a block of rows per question set, ``question_set`` (1, 2, ...) and ``runs`` (its run
    ids, comma-separated) first.

    Columns: ``question_set, runs, question_type, n`` (distinct questions), ``clusters``, ``cluster_size`` (n / clusters),
    ``accuracy`` (mean of the runs'), ``icc`` (mean over runs of the ANOVA estimate, floored at 0),
    ``correlation`` (mean over pairs of runs of the correlation of their scores on a question),
    ``icc_difference`` (the same ANOVA estimate for the pairs' score differences), ``mde_naive`` (independent
    questions: what an unclustered formula promises), ``mde`` (two runs on independent samples, clustered)
    and ``mde_paired`` (both runs on the same questions, clustered): proportions.
    """
    data = outcomes(questions, "question_type")
    rows = []
    for number, runs in enumerate(question_sets(data), start=1):
        coded = _Coded.of(data.filter(pl.col("run_id").is_in(runs)))
        everything = np.arange(len(coded.run))
        parts = [("all", everything)] + [(t, everything[coded.type == t]) for t in coded.types]
        for name, part in parts:
            rows.append(
                {"question_set": number, "runs": ", ".join(runs)}
                | _detectable(name, part, coded, alpha, power)
            )
    schema = (
        {"question_set": pl.Int64, "runs": pl.Utf8}
        | {"question_type": pl.Utf8, "n": pl.Int64, "clusters": pl.Int64}
        | dict.fromkeys(
            (
                "cluster_size",
                "accuracy",
                "icc",
                "correlation",
                "icc_difference",
                "mde_naive",
                "mde",
                "mde_paired",
            ),
            pl.Float64,
        )
    )
    return pl.DataFrame(rows, schema=schema)


detectable_differences = with_backend(detectable_differences_frame, "detectable_differences")


def question_sets(data: pl.DataFrame) -> list[list[str]]:
    """The runs of ``data`` (``run_id, question_id``) grouped into question sets: runs that share a question
    are in one set (a 150-question sample of LoCoMo with the full 1,540), runs on other questions (another
    benchmark's) in another. A benchmark's size, haystacks and detectable difference belong to one set: pooling
    two benchmarks' haystacks plans for a benchmark nobody runs. Sets in the order of their first run."""
    pairs = data.select("run_id", "question_id").unique(maintain_order=True)
    runs = pairs["run_id"].unique(maintain_order=True).to_list()
    parent = {r: r for r in runs}

    def root(r: str) -> str:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for group in pairs.group_by("question_id").agg(pl.col("run_id")).get_column("run_id").to_list():
        for other in group[1:]:
            parent[root(other)] = root(group[0])
    sets: dict[str, list[str]] = {}
    for r in runs:
        sets.setdefault(root(r), []).append(r)
    return list(sets.values())


@dataclass(frozen=True)
class _Coded:
    """``outcomes`` as numpy columns, read once for every question type and pair of runs: each id as an
    integer code. Codes are numbered in sorted id order, so ``np.unique`` over any subset numbers
    the haystacks as it would the ids themselves (``intraclass_correlation`` gets the same clusters)."""

    run: np.ndarray
    question: np.ndarray
    haystack: np.ndarray
    type: np.ndarray
    types: list[str]  # in order of first appearance
    value: np.ndarray
    questions: int  # distinct question ids

    @classmethod
    def of(cls, data: pl.DataFrame) -> _Coded:
        # a dense rank counts from 1 in sorted order (UTF-8 bytes sort as code points, as Python's str do)
        codes = data.select((pl.col("question_id", "haystack_id").rank("dense") - 1).cast(pl.Int64))
        return cls(
            run=data["run_id"].to_numpy(),
            question=codes["question_id"].to_numpy(),
            haystack=codes["haystack_id"].to_numpy(),
            type=data["question_type"].to_numpy(),
            types=data["question_type"].unique(maintain_order=True).to_list(),
            value=data["value"].to_numpy(),
            questions=data["question_id"].n_unique(),
        )


def _mean(values: list[float]) -> float:
    known = [v for v in values if not math.isnan(v)]
    return math.fsum(known) / len(known) if known else math.nan


def _detectable(name: str, part: np.ndarray, coded: _Coded, alpha: float, power: float) -> dict[str, Any]:
    """One row of ``detectable_differences``: ``part`` holds the positions of its outcomes in ``coded``."""
    # One order for every sum, whatever the rows' order (issue 39): the runs sorted by id, each run's rows by
    # question; means and averages over runs are math.fsum's correctly rounded sums (metrics.ordered).
    runs = sorted(set(coded.run[part].tolist()))
    by_run = {}
    for r in runs:
        rows = part[coded.run[part] == r]
        by_run[r] = rows[np.argsort(coded.question[rows], kind="stable")]
    n = len(np.unique(coded.question[part]))
    k = len(np.unique(coded.haystack[part]))
    accuracy = _mean([math.fsum(coded.value[rows]) / len(rows) for rows in by_run.values()])
    icc = _mean([intraclass_correlation(coded.value[rows], coded.haystack[rows]) for rows in by_run.values()])
    correlations, icc_diffs = [], []
    for a, b in combinations(runs, 2):
        # run a's questions that run b has too, in question order, beside b's score on each
        b_score = np.full(coded.questions, math.nan)
        b_score[coded.question[by_run[b]]] = coded.value[by_run[b]]
        b_has = np.zeros(coded.questions, dtype=bool)
        b_has[coded.question[by_run[b]]] = True
        both = by_run[a][b_has[coded.question[by_run[a]]]]
        ya, yb = coded.value[both], b_score[coded.question[both]]
        if len(both) > 2 and ya.std() > 0 and yb.std() > 0:
            correlations.append(float(np.corrcoef(ya, yb)[0, 1]))
        icc_diffs.append(intraclass_correlation(ya - yb, coded.haystack[both]))
    icc = max(0.0, icc) if not math.isnan(icc) else 0.0
    icc_d = _mean(icc_diffs)
    icc_d = max(0.0, icc_d) if not math.isnan(icc_d) else icc
    corr = _mean(correlations)
    corr = min(1.0, max(-1.0, corr)) if not math.isnan(corr) else 0.0
    m = n / k if k else 1.0
    ok = n > 0 and 0 < accuracy < 1
    nan = math.nan
    return {
        "question_type": name,
        "n": n,
        "clusters": k,
        "cluster_size": m,
        "accuracy": accuracy,
        "icc": icc,
        "correlation": corr,
        "icc_difference": icc_d,
        "mde_naive": minimum_detectable_effect(n, accuracy, alpha, power) if ok else nan,
        "mde": minimum_detectable_effect(n, accuracy, alpha, power, m, icc) if ok else nan,
        "mde_paired": minimum_detectable_effect(
            n, accuracy, alpha, power, m, icc_d, paired=True, correlation=corr
        )
        if ok and k >= PAIRED_FEWEST
        else nan,
    }
