"""Power and sample size for comparing two runs' accuracies, with clustered questions.

Closed forms (normal approximation, two-sided test at ``alpha``), with Kish's design effect
deff = 1 + (m − 1)·ICC for clusters of ``cluster_size`` m questions and intraclass correlation ICC:

- independent samples (two runs on different questions, n each):
  MDE = (z_{1−α/2} + z_{power}) · √(2·p(1−p)·deff / n)
- paired (``paired=True``: both runs on the same n questions, outcomes correlated ``correlation`` ρ):
  the variance 2·p(1−p) becomes that of a paired difference, 2·p(1−p)·(1 − ρ) (and ICC is then the
  intraclass correlation of the paired differences).

``questions_needed`` inverts the same formula: n = (z_{1−α/2} + z_{power})² · variance · deff / δ², rounded
up. Proportions, not percent. Definitions and references: docs/statistics.md ("Power and sample size").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
import polars as pl

from bench_nb.frames.backend import Backend, to_backend
from bench_nb.metrics.clustered import intraclass_correlation, outcomes
from bench_nb.metrics.sign_flip import smallest_p

if TYPE_CHECKING:
    import pandas as pd


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


def _z_sum(alpha: float, power: float) -> float:
    z = NormalDist()
    return z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)


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
    probability ``power`` in a two-sided test at ``alpha``.

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
    return _z_sum(alpha, power) * math.sqrt(_spread(p, paired, correlation) * deff / n)


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
    in a two-sided test at ``alpha``; divide by ``cluster_size`` for the haystacks (conversations) needed.
    Arguments as ``minimum_detectable_effect``."""
    if delta == 0 or not -1 < delta < 1:
        raise ValueError(f"delta (a difference of proportions) must be non-zero and in (-1, 1), got {delta}")
    _check(p, alpha, power, cluster_size, icc, correlation)
    deff = cluster_design_effect(cluster_size, icc)
    n = _z_sum(alpha, power) ** 2 * _spread(p, paired, correlation) * deff / delta**2
    return max(1, math.ceil(n - 1e-9))


@overload
def detectable_differences(
    questions: Any, *, alpha: float = ..., power: float = ..., backend: Literal["pandas"] = ...
) -> pd.DataFrame: ...
@overload
def detectable_differences(
    questions: Any, *, alpha: float = ..., power: float = ..., backend: Literal["polars"]
) -> pl.DataFrame: ...
def detectable_differences(
    questions: Any, *, alpha: float = 0.05, power: float = 0.8, backend: Backend = "pandas"
) -> pd.DataFrame | pl.DataFrame:
    """The smallest difference this benchmark can detect, overall (``question_type = "all"``) and per type,
    from its own size, clusters and the runs' own intraclass correlation.

    Columns: ``question_type, n`` (distinct questions), ``clusters``, ``cluster_size`` (n / clusters),
    ``accuracy`` (mean of the runs'), ``icc`` (mean over runs of the ANOVA estimate, floored at 0),
    ``correlation`` (mean over pairs of runs of the correlation of their scores on a question),
    ``icc_difference`` (the same ANOVA estimate for the pairs' score differences), ``mde_naive`` (independent
    questions: what an unclustered formula promises), ``mde`` (two runs on independent samples, clustered)
    and ``mde_paired`` (both runs on the same questions, clustered): proportions.
    """
    return to_backend(detectable_differences_frame(questions, alpha=alpha, power=power), backend)


def detectable_differences_frame(questions: Any, *, alpha: float = 0.05, power: float = 0.8) -> pl.DataFrame:
    """``detectable_differences`` in polars."""
    coded = _Coded.of(outcomes(questions, "question_type"))
    everything = np.arange(len(coded.run))
    parts = [("all", everything)] + [(t, everything[coded.type == t]) for t in coded.types]
    rows = [_detectable(name, part, coded, alpha, power) for name, part in parts]
    schema = {"question_type": pl.Utf8, "n": pl.Int64, "clusters": pl.Int64} | dict.fromkeys(
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
    return pl.DataFrame(rows, schema=schema)


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
    return sum(known) / len(known) if known else math.nan


def _detectable(name: str, part: np.ndarray, coded: _Coded, alpha: float, power: float) -> dict[str, Any]:
    """One row of ``detectable_differences``: ``part`` holds the positions of its outcomes in ``coded``."""
    runs = list(dict.fromkeys(coded.run[part].tolist()))  # in order of first appearance
    by_run = {r: part[coded.run[part] == r] for r in runs}  # each run's positions, in the frame's order
    n = len(np.unique(coded.question[part]))
    k = len(np.unique(coded.haystack[part]))
    accuracy = _mean([float(pl.Series(coded.value[rows]).mean()) for rows in by_run.values()])  # type: ignore[arg-type]
    icc = _mean([intraclass_correlation(coded.value[rows], coded.haystack[rows]) for rows in by_run.values()])
    correlations, icc_diffs = [], []
    for a, b in combinations(runs, 2):
        # run a's questions that run b has too, in a's order, beside b's score on each
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
        # 5 haystacks or fewer (at 5%): the paired test's 2^K sign patterns allow no p below alpha
        "mde_paired": minimum_detectable_effect(
            n, accuracy, alpha, power, m, icc_d, paired=True, correlation=corr
        )
        if ok and smallest_p(k) < alpha
        else nan,
    }
