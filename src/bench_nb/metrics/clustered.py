"""Accuracy intervals that respect clustering: the cluster bootstrap, the design effect, the effective n.

Questions of one haystack (a LoCoMo conversation, a BEAM chat) share what the provider stored, so they
succeed and fail together; an interval that treats them as independent is too narrow. Definitions and
references: docs/statistics.md ("Clustered questions").

Every function takes a questions frame (``questions_df``), any frame (pandas or polars) with the columns
``run_id``, ``question_id``, ``haystack_id`` and ``correct`` (``question_type`` for ``by="question_type"``),
or run sources. When the frame has a ``score`` column its values are used instead of ``correct``: a score
is any number in [0, 1], so a fractional score (BEAM's rubric scores, 0 / 0.5 / 1 per item, averaged) is
handled like a 0/1 one, and "accuracy" is the mean score. Only rows with a verdict count, by the one rule
of ``frames.verdicts`` (evaluated, not ``unscored``, a score that is not null or NaN, else ``correct``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike, as_questions
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.metrics.intervals import (
    normal_z,
    student_t_quantile,
    wilson_interval,
    wilson_proportion_interval,
)
from bench_nb.metrics.ordered import segment_spread, segment_sums, sizes, sort_rows, starts

IntervalMethod = Literal["clustered", "wilson"]
RESAMPLES = 2000  # bootstrap resamples (over clusters)
_NAN = math.nan


def question_keys(type_col: str | None = None) -> list[pl.Expr]:
    """``run_id, question_id, haystack_id`` as text (a question with no haystack is its own cluster), and
    ``type_col`` as ``question_type`` ("other" where null)."""
    q = pl.col("question_id").cast(pl.Utf8)
    cols = [pl.col("run_id").cast(pl.Utf8), q, pl.coalesce(pl.col("haystack_id").cast(pl.Utf8), q)]
    if type_col is not None:
        cols.append(pl.col(type_col).cast(pl.Utf8).fill_null("other").alias("question_type"))
    return cols


def outcomes(data: Any, by: Literal["question_type"] | None = None) -> pl.DataFrame:
    """``run_id, question_id, haystack_id, [question_type], value`` for the questions that count.

    ``value`` is the score in [0, 1] (``score`` when the frame has it, else ``correct`` as 0/1). A question
    with no haystack is its own cluster. With ``by="question_type"`` the normalised type
    (``question_type_norm``) is used when the frame has it, else ``question_type``.

    Raises:
        ValueError: a required column is missing, a score is outside [0, 1], or a question appears twice
            in one run (each message names the column or the question).
    """
    frame = as_questions(data)
    if by not in (None, "question_type"):
        raise ValueError(f"by must be None or 'question_type', not {by!r}")
    missing = [c for c in ("run_id", "question_id", "haystack_id") if c not in frame.columns]
    if "score" not in frame.columns and "correct" not in frame.columns:
        missing.append("correct (or score)")
    type_col = None
    if by is not None:
        type_col = next((c for c in ("question_type_norm", "question_type") if c in frame.columns), None)
        if type_col is None:
            missing.append("question_type")
    if missing:
        raise ValueError(
            f"the questions frame has no column {', '.join(missing)}: build it with bench_nb.questions_df "
            "or give run_id, question_id, haystack_id and correct (or score)"
        )
    # the one rule (frames.verdicts): ``score`` is the verdict, in [0, 1], null for a question without one
    frame = with_verdicts(frame)
    out = frame.select(*question_keys(type_col), value="score").drop_nulls("value")
    dup = out.filter(pl.struct("run_id", "question_id").is_duplicated())
    if len(dup):
        r = dup.row(0, named=True)
        raise ValueError(f"run {r['run_id']!r} has question {r['question_id']!r} more than once")
    return out


@dataclass(frozen=True)
class ClusterSums:
    """One run (or group) summed per cluster: ``sums[k]``, ``counts[k]`` over the clusters ``ids``."""

    ids: np.ndarray
    sums: np.ndarray
    counts: np.ndarray
    squares: float  # Σ (y - ȳ)² over the questions

    @property
    def n(self) -> int:
        """The number of questions summed."""
        return int(self.counts.sum())

    @property
    def clusters(self) -> int:
        """The number of clusters with at least one question."""
        return int((self.counts > 0).sum())

    @property
    def mean(self) -> float:
        """The mean over the questions (NaN without any)."""
        return float(self.sums.sum() / self.counts.sum()) if self.n else _NAN


def _residual_sums(sums: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """(S_k − ȳ·N_k, N_k, n) over the K clusters that have questions; None when K < 2 or n = 0."""
    present = counts > 0
    n = counts.sum()
    if int(present.sum()) < 2 or n == 0:
        return None
    s, c = sums[present], counts[present]
    return s - s.sum() / n * c, c, n


def cluster_variance(sums: np.ndarray, counts: np.ndarray) -> float:
    """The cluster-robust (CR1, linearisation) variance of the mean Σ sums / Σ counts.

    V = K/(K−1) · Σ_k (S_k − ȳ·N_k)² / n², over the K clusters that have questions.
    """
    if (r := _residual_sums(sums, counts)) is None:
        return _NAN
    e, c, n = r
    k = len(c)
    return float(k / (k - 1) * (e**2).sum() / n**2)


def cr2_variance(sums: np.ndarray, counts: np.ndarray) -> float:
    """The CR2 (bias-reduced linearisation; Bell & McCaffrey 2002) cluster-robust variance of the mean
    Σ sums / Σ counts: V = Σ_k (S_k − ȳ·N_k)² / (1 − N_k/n) / n², over the K ≥ 2 clusters that have questions.

    For the intercept-only model each cluster's residuals are scaled by (I − H_kk)^(−1/2), H_kk = J/n, whose
    eigenvalue on the cluster's sum is 1/(1 − N_k/n): the residual of a large cluster, pulled towards the
    mean it is a large part of, is scaled back up. Unbiased when the questions are independent with a common
    variance; with equal sizes it is CR1's K/(K−1) correction exactly."""
    if (r := _residual_sums(sums, counts)) is None:
        return _NAN
    e, c, n = r
    return float(((e**2) / (1 - c / n)).sum() / n**2)


def bell_mccaffrey_df(counts: np.ndarray) -> float:
    """Bell & McCaffrey's (2002) degrees of freedom of the CR2 variance of a mean over clusters of ``counts``
    questions (the clusters with questions; ``nan`` with fewer than 2).

    Under the working model of independent questions with a common variance, V_CR2 = ε′GG′ε with G's k-th
    column (I − H)_{·k}(I − H_kk)^(−1/2)1/n, a weighted sum of χ²₁ whose weights are the eigenvalues of G′G;
    ν = (tr G′G)² / tr((G′G)²) matches its first two moments (Satterthwaite). With h_k = N_k/n and
    b_k = 1/(1 − h_k), n·G′G = diag(√b)(diag(h) − hh′)diag(√b), of trace 1, so
    ν = 1 / [Σ_k b_k²h_k²(1 − 2h_k) + (Σ_k b_k h_k²)²]. It depends only on the sizes: K − 1 when they are
    equal, near 2 when one cluster holds most of the questions (clubSandwich's "CR2" with test = "Satterthwaite"
    for an intercept-only lm; tested against the matrix definition). ``effective_clusters`` is ν + 1."""
    c = np.asarray(counts, dtype=float)
    c = c[c > 0]
    if len(c) < 2:
        return _NAN
    h = c / c.sum()
    b = 1 / (1 - h)
    return float(1 / ((b * b * h * h * (1 - 2 * h)).sum() + (b * h * h).sum() ** 2))


def design_effect(cs: ClusterSums) -> float:
    """Kish's design effect: the clustered variance of the mean over the independent one (``nan`` when
    there are fewer than 2 clusters or every score is the same)."""
    if cs.squares <= 0 or cs.clusters < 2:
        return _NAN
    return cluster_variance(cs.sums, cs.counts) / (cs.squares / cs.n**2)


def intraclass_correlation(values: np.ndarray, clusters: np.ndarray) -> float:
    """The one-way ANOVA estimator of the intraclass correlation (unequal cluster sizes).

    ICC = (MSB − MSW) / (MSB + (m₀ − 1)·MSW), m₀ = (n − Σ n_k²/n)/(K − 1); ``nan`` with fewer than 2
    clusters, no within-cluster degrees of freedom, or no variance at all. It can be negative.
    """
    y = np.asarray(values, dtype=float)
    _, codes = np.unique(np.asarray(clusters), return_inverse=True)
    n, k = len(y), int(codes.max()) + 1 if len(y) else 0
    if k < 2 or n - k < 1:
        return _NAN
    counts = np.bincount(codes, minlength=k).astype(float)
    means = np.bincount(codes, weights=y, minlength=k) / counts
    grand = y.mean()
    msb = float((counts * (means - grand) ** 2).sum() / (k - 1))
    msw = float(((y - means[codes]) ** 2).sum() / (n - k))
    m0 = (n - (counts**2).sum() / n) / (k - 1)
    denom = msb + (m0 - 1) * msw
    return (msb - msw) / denom if denom > 0 else _NAN


def expanded_alpha(clusters: int, confidence: float = 0.95) -> float:
    """The tail probability of Hesterberg's expanded percentile interval for ``clusters`` resampled units:
    α′/2 = Φ(−√(K/(K−1)) · t_{K−1, 1−α/2}). It widens the percentile interval for few clusters."""
    if clusters < 2:
        return _NAN
    t = student_t_quantile(0.5 + confidence / 2, clusters - 1)
    return 2 * NormalDist().cdf(-math.sqrt(clusters / (clusters - 1)) * t)


_CHUNK = 1 << 16  # draws counted at a time: a block of rows that stays in cache


def resampled_sums(x: np.ndarray, seed: int, resamples: int = RESAMPLES) -> np.ndarray:
    """The sums of ``x``'s rows (one row per cluster) over each of ``resamples`` cluster bootstrap resamples:
    the (resamples × columns) matrix W @ x, where W, the bootstrap weights, counts how often each of the K
    clusters is drawn in each resample (``resampled_sums(np.eye(K), ...)`` is W itself).

    Resample b draws K cluster indices uniformly with replacement, the b-th row of
    ``numpy.random.default_rng(seed).integers(0, K, (resamples, K))``, and counts them: the multinomial with
    equal probabilities (``Generator.multinomial`` draws one binomial per cell, about 50 times slower at
    LongMemEval's 500 or a synthetic run's 2,000 clusters). W is drawn and multiplied a block of rows at a time
    from the one generator (the same stream, so the same numbers), never whole: a whole W of a report's
    4 million entries cost a fresh process 32 MB of new pages per matrix, twice the CPU of the draws."""
    clusters = len(x)
    rng = np.random.default_rng(seed)
    out = np.empty((resamples, x.shape[1]))
    rows = max(1, _CHUNK // max(clusters, 1))
    offsets = np.arange(0, rows * clusters, clusters)[:, None]  # resample b counts into row b of a block
    for start in range(0, resamples, rows):
        block = min(rows, resamples - start)
        draws = rng.integers(0, clusters, size=(block, clusters))
        draws += offsets[:block]
        counts = np.bincount(draws.ravel(), minlength=block * clusters).reshape(block, clusters)
        out[start : start + block] = counts @ x
    return out


MIN_EFFECTIVE_EVENTS = 10  # below this many effective wrong (or right) answers the interval carries a warning
# Below this many haystacks rank intervals are not bootstrapped (ranks.py): a bootstrap of 4-8 haystacks
# is degenerate (few distinct resamples, many drawing one or two haystacks).
MIN_BOOTSTRAP_CLUSTERS = 10
WILSON_DEFF_WARNING = 1.25  # Wilson's interval with a design effect above this covers under about 92%
DESIGN_WILSON = "design-adjusted Wilson (CR2, Bell-McCaffrey df)"


def design_wilson_interval(
    successes: float, n: int, deff: float, clusters: int, confidence: float = 0.95, df: float | None = None
) -> tuple[float, float]:
    """Wilson's interval at the effective sample size, with Korn & Graubard's (1998) degrees-of-freedom
    correction: n* = n / max(1, deff) · (z_{1−α/2} / t_{df, 1−α/2})², successes scaled to keep p; ``df``
    defaults to ``clusters`` − 1."""
    if n == 0 or clusters < 2:
        return (_NAN, _NAN)
    n_star = _korn_graubard_n(n, deff, clusters - 1 if df is None else df, confidence)
    return wilson_proportion_interval(successes / n, n_star, normal_z(confidence))


def _korn_graubard_n(n: float, deff: float, df: float, confidence: float) -> float:
    """n / max(1, deff) · (z_{1−α/2} / t_{df, 1−α/2})² (a nan ``deff`` counts as 1)."""
    return n / max(1.0, deff) * (normal_z(confidence) / student_t_quantile(0.5 + confidence / 2, df)) ** 2


def cr2_design_effect(cs: ClusterSums) -> float:
    """V_CR2 / V₀: the CR2 variance of the mean over the independent-questions one, V₀ = Σ(y − ȳ)²/n²
    (``nan`` with fewer than 2 clusters or no spread)."""
    if cs.clusters < 2 or cs.n == 0 or cs.squares <= 0:
        return _NAN
    return cr2_variance(cs.sums, cs.counts) / (cs.squares / cs.n**2)


def clustered_n(cs: ClusterSums, confidence: float = 0.95) -> float:
    """The number of independent questions a clustered run's mean is worth to a normal-theory interval:
    n* = n / max(1, deff_CR2) · (z_{1−α/2} / t_{ν,1−α/2})², ν = ``bell_mccaffrey_df`` (the ``n*`` of the
    ``clustered`` interval; Korn & Graubard 1998). ``n`` itself with fewer than 2 clusters or no spread.
    ``corrected_accuracy_table`` passes it as the ``n`` of ``corrected_accuracy``."""
    deff = cr2_design_effect(cs)
    if math.isnan(deff):
        return float(cs.n)
    return _korn_graubard_n(cs.n, deff, bell_mccaffrey_df(cs.counts), confidence)


@dataclass(frozen=True)
class ClusteredInterval:
    """One run's (or group's) interval: its bounds, which interval it is (``None``: fewer than 2 clusters,
    no interval), the effective number of clusters (Bell-McCaffrey ν + 1) and a warning when the interval
    may cover less than it says (``None`` otherwise)."""

    low: float
    high: float
    interval: str | None
    effective_clusters: float
    warning: str | None


# The lowest coverage of a 95% ``clustered`` interval that bench/coverage.py's --audit sweep found (LoCoMo-sized
# haystacks; 90-98% accuracy; ICC 0.3-0.6, logit-normal haystack effects, one haystack holding 60%; 10 and 20
# haystacks added), by the effective haystacks (ν + 1) of the design, up to each limit, rounded down: what a
# warning says coverage may fall to. Rerun with ``bench/coverage.py --audit``, which prints both.
WORST_COVERAGE = ((4.5, 27), (6.5, 33), (8.5, 36), (12.5, 40), (math.inf, 59))
UNSEEN_RATE = 0.5  # the accuracy of the one unseen haystack a warned interval could not absorb
# Fewer effective haystacks than this (Bell-McCaffrey ν + 1; 3.2-3.3 when one of 6-20 haystacks holds 60-65% of
# the questions, 3.7 for LoCoMo's first four): the interval rests on about three haystacks' worth of evidence,
# and a bad dominant haystack looks like a design at that accuracy (issue 39's undetected misses).
FEW_EFFECTIVE_CLUSTERS = 3.5


def worst_coverage(effective_clusters: float) -> int:
    """The lowest coverage (percent) the audit sweep found at ``effective_clusters`` (``WORST_COVERAGE``)."""
    return next(pct for limit, pct in WORST_COVERAGE if effective_clusters <= limit)


def interval_warning(
    cs: ClusterSums, deff: float, effective_clusters: float, low: float, high: float, confidence: float = 0.95
) -> str | None:
    """Why a clustered interval ``[low, high]`` may cover far less than it says (``None`` when neither holds).

    It warns when

    - it rests on fewer than ``MIN_EFFECTIVE_EVENTS`` effective wrong (or right) answers,
      n / max(1, deff) · min(p, 1 − p): the mean's skew makes any symmetric-variance interval too short on one
      side;
    - one more haystack of the average size at ``UNSEEN_RATE`` accuracy would move the accuracy outside the
      interval, (S + ½·n/K) / (n + n/K) ∉ [low, high]: a benchmark whose rare bad haystack was not drawn (the
      accuracy near 100% in every haystack seen) gets an interval that does not allow for it;
    - it rests on fewer than ``FEW_EFFECTIVE_CLUSTERS`` effective haystacks (one haystack holding most of the
      questions): how far that haystack's accuracy strays cannot be seen from the data.

    The text names the reasons, how low coverage fell in simulations of designs with as many effective
    haystacks (``worst_coverage``) and the effective haystacks (docs/statistics.md, "When the interval
    warns")."""
    p = cs.mean
    reasons = []
    events = cs.n / (1.0 if math.isnan(deff) else max(1.0, deff)) * min(p, 1 - p)
    if events < MIN_EFFECTIVE_EVENTS:
        side = "wrong" if p >= 0.5 else "right"
        reasons.append(f"{events:.1f} effective {side} answers (fewer than {MIN_EFFECTIVE_EVENTS})")
    size = cs.n / cs.clusters
    unseen = (float(cs.sums.sum()) + UNSEEN_RATE * size) / (cs.n + size)
    if not low <= unseen <= high:
        reasons.append(
            f"one more haystack of {size:.0f} questions at {UNSEEN_RATE:.0%} would move accuracy to "
            f"{unseen:.3f}, {'below' if unseen < low else 'above'} the interval"
        )
    if effective_clusters < FEW_EFFECTIVE_CLUSTERS:
        share = float(cs.counts.max()) / cs.n
        reasons.append(
            f"one haystack holds {share:.0%} of the questions"
            if share >= 0.5
            else f"fewer than {FEW_EFFECTIVE_CLUSTERS} effective haystacks"
        )
    if not reasons:
        return None
    return (
        f"may cover less than {confidence:.0%} (down to {worst_coverage(effective_clusters)}% in simulations): "
        f"{'; '.join(reasons)}; in {effective_clusters:.1f} effective haystacks of {cs.clusters}"
    )


def clustered_interval(cs: ClusterSums, confidence: float = 0.95) -> ClusteredInterval:
    """The ``clustered`` interval of one run: the design-adjusted Wilson interval with the CR2 variance and
    Bell-McCaffrey degrees of freedom, n* = n / max(1, V_CR2/V₀) · (z / t_ν)², V₀ = Σ(y − ȳ)²/n² the
    independent-questions variance and ν = ``bell_mccaffrey_df`` of the cluster sizes. Deterministic (no
    resampling). Carries ``interval_warning``'s warning where it may cover far less than it says."""
    if cs.clusters < 2 or cs.n == 0:
        return ClusteredInterval(_NAN, _NAN, None, float(cs.clusters), None)
    df = bell_mccaffrey_df(cs.counts)
    deff = cr2_design_effect(cs)
    low, high = design_wilson_interval(float(cs.sums.sum()), cs.n, deff, cs.clusters, confidence, df=df)
    warning = interval_warning(cs, deff, df + 1, low, high, confidence)
    return ClusteredInterval(low, high, DESIGN_WILSON, df + 1, warning)


def independent_interval(cs: ClusterSums, deff: float, confidence: float = 0.95) -> ClusteredInterval:
    """The ``wilson`` interval of one run (every question independent), with a warning when its design
    effect ``deff`` is above ``WILSON_DEFF_WARNING`` (there a 95% Wilson interval covers less than 92%)."""
    low, high = wilson_interval(cs.sums.sum(), cs.n, confidence)
    effective = bell_mccaffrey_df(cs.counts) + 1 if cs.clusters >= 2 else float(cs.clusters)
    warning = None
    if deff > WILSON_DEFF_WARNING:
        warning = (
            f"too narrow: treats the questions as independent, but the design effect is {deff:.2f} "
            f"({effective:.1f} effective haystacks of {cs.clusters}); use the clustered interval"
        )
    return ClusteredInterval(low, high, "Wilson" if cs.n else None, effective, warning)


@dataclass(frozen=True)
class PerCluster:
    """A frame's rows per group and cluster (``haystack_id``), in one fixed order: the groups in order of
    appearance, the clusters sorted within each, the questions sorted within each cluster
    (``metrics.ordered``: every sum taken from it is the same bits on every call)."""

    names: list[tuple[Any, ...]]  # each group's keys
    rows: pl.DataFrame  # the frame's rows in that order, with ``_group`` (the group's number)
    ids: np.ndarray  # each cluster's haystack_id
    counts: np.ndarray  # each cluster's questions
    groups: list[slice]  # each group's clusters (into ids, counts and ``sums``)
    cluster_rows: np.ndarray  # each cluster's first row
    group_rows: np.ndarray  # each group's first row

    def sums(self, column: str) -> np.ndarray:
        """Each cluster's sum of ``column``."""
        return segment_sums(self.rows[column].to_numpy(), self.cluster_rows)

    def spread(self, column: str) -> np.ndarray:
        """Each group's Σ (y − ȳ)² of ``column`` over its rows."""
        return segment_spread(self.rows[column].to_numpy(), self.group_rows)

    def per_group(self, values: np.ndarray, reduce: np.ufunc = np.add) -> np.ndarray:
        """``reduce`` (``numpy.add``, ``numpy.logical_and``...) of row ``values`` over each group."""
        return reduce.reduceat(values, self.group_rows) if len(self.group_rows) else values[:0]


def per_cluster(data: pl.DataFrame, keys: list[str]) -> PerCluster:
    """``data``'s rows per group of ``keys`` and cluster (``haystack_id``), sorted into ``PerCluster``'s
    order; one sort, however many groups."""
    names: list[tuple[Any, ...]] = [()]
    if keys:
        groups = data.select(keys).unique(maintain_order=True).with_row_index("_group")
        names = [row[1:] for row in groups.rows()]
        data = data.join(groups, on=keys, how="left")
    else:
        data = data.with_columns(_group=pl.lit(0, dtype=pl.UInt32))
    rows = sort_rows(data, ["_group", "haystack_id"])
    first = starts(rows, ["_group", "haystack_id"])
    group_rows = starts(rows, ["_group"])
    ends = np.append(group_rows, len(rows))
    bounds: list[int] = np.searchsorted(first, ends).tolist()
    return PerCluster(
        [names[g] for g in rows["_group"].to_numpy()[group_rows]],
        rows,
        np.array(rows["haystack_id"].to_numpy()[first], dtype=object),
        sizes(first, len(rows)).astype(float),
        [slice(a, b) for a, b in pairwise(bounds)],
        first,
        group_rows,
    )


def grouped_cluster_sums(data: pl.DataFrame, keys: list[str]) -> list[tuple[tuple[Any, ...], ClusterSums]]:
    """Every group of ``keys`` in an ``outcomes`` frame (``keys`` empty: the whole frame) summed per cluster
    (groups in order of appearance, clusters sorted), from one sort; the same bits on every call."""
    per = per_cluster(data, keys)
    sums, spread = per.sums("value"), per.spread("value")
    return [
        (name, ClusterSums(per.ids[r], sums[r], per.counts[r], float(spread[g])))
        for g, (name, r) in enumerate(zip(per.names, per.groups, strict=True))
    ]


def accuracy_intervals_frame(
    questions: QuestionsLike,
    method: IntervalMethod = "clustered",
    by: Literal["question_type"] | None = None,
    *,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Accuracy per run (and question type) with an interval that respects the haystack clusters.

    Accepts 0/1 outcomes (``correct``) and fractional scores in [0, 1] (a ``score`` column, used when
    present: BEAM's rubric scores), so "accuracy" is the mean score. Columns: ``run_id``, ``question_type``
    (with ``by="question_type"``), ``accuracy``, ``ci_low``, ``ci_high``, ``n`` (questions scored),
    ``clusters`` (haystacks among them), ``design_effect``, ``effective_n`` (n / design effect, at most n),
    ``interval`` (the interval used: ``"design-adjusted Wilson (CR2, Bell-McCaffrey df)"`` or ``"Wilson"``;
    null where there is none), ``effective_clusters`` (Bell-McCaffrey degrees of freedom + 1: K with equal
    haystacks, near 3 when one haystack holds most questions) and ``warning`` (why the interval may cover
    less than ``confidence``, naming the effective haystacks; null when there is no reason to think so).

    Args:
        questions: a questions frame, a frame with ``run_id, question_id, haystack_id, correct`` (or
            ``score``), or run sources.
        method: ``"clustered"``: the design-adjusted Wilson interval (Korn & Graubard 1998) with the CR2
            cluster-robust variance and Bell-McCaffrey degrees of freedom (``clustered_interval``):
            deterministic, and it holds its level when one haystack dominates; ``"wilson"``: the Wilson
            score interval, which treats every question as independent (too narrow when the design effect is
            above 1: warned above 1.25). The design effect and effective n are the same for both.
        by: ``None`` or ``"question_type"`` (the normalised type).
        confidence: the interval's coverage.
    """
    if method not in ("clustered", "wilson"):
        raise ValueError(f"method must be 'clustered' or 'wilson', not {method!r}")
    data = outcomes(questions, by)
    keys = ["run_id"] + ([] if by is None else ["question_type"])
    return intervals_of(data, keys, method, confidence)


accuracy_intervals = with_backend(accuracy_intervals_frame, "accuracy_intervals")


def intervals_of(
    data: pl.DataFrame,
    keys: list[str],
    method: IntervalMethod = "clustered",
    confidence: float = 0.95,
    groups: list[tuple[tuple[Any, ...], ClusterSums]] | None = None,
) -> pl.DataFrame:
    """``accuracy_intervals_frame`` from an ``outcomes`` frame, per group of ``keys`` (``groups``: that
    frame's ``grouped_cluster_sums(data, keys)`` when the caller has them already)."""
    if groups is None:
        groups = grouped_cluster_sums(data, keys)
    rows: list[dict[str, Any]] = []
    for key, cs in groups:
        deff = design_effect(cs)
        got = (
            independent_interval(cs, deff, confidence)
            if method == "wilson"
            else clustered_interval(cs, confidence)
        )
        rows.append(
            dict(zip(keys, key, strict=True))
            | {
                "accuracy": cs.mean,
                "ci_low": got.low,
                "ci_high": got.high,
                "n": cs.n,
                "clusters": cs.clusters,
                "design_effect": deff,
                # never above n: a design effect under 1 (clusters more alike than chance) is estimation noise
                # in a handful of haystacks, not more information than n independent questions hold
                "effective_n": min(cs.n, cs.n / deff) if deff and not math.isnan(deff) else _NAN,
                "interval": got.interval,
                "effective_clusters": got.effective_clusters,
                "warning": got.warning,
            }
        )
    schema: dict[str, Any] = dict.fromkeys(keys, pl.Utf8) | {
        "accuracy": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "n": pl.Int64,
        "clusters": pl.Int64,
        "design_effect": pl.Float64,
        "effective_n": pl.Float64,
        "interval": pl.Utf8,
        "effective_clusters": pl.Float64,
        "warning": pl.Utf8,
    }
    return pl.DataFrame(rows, schema=schema)
