"""Two runs on the same questions, with the questions' haystacks taken into account.

For every pair of runs, on the questions both scored: the difference of accuracies (mean scores) with a
clustered paired test and the interval that inverts it, so that the interval excludes 0 exactly when the
test rejects: the CR2 cluster-robust t on Bell-McCaffrey degrees of freedom at every number of haystacks
(``paired_difference_test``); beside McNemar's test, which assumes independent questions. ``tell_apart``
sets the clustered verdict next to what the Wilson-interval-overlap rule would say. Definitions:
docs/statistics.md ("Paired differences between runs"). Scores may be fractional (see
``bench_nb.metrics.clustered``): the test and interval then work on score differences and McNemar is n/a.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import numpy as np
import polars as pl

from bench_nb.errors import ComparisonError
from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike, as_questions
from bench_nb.metrics.clustered import (
    bell_mccaffrey_df,
    cluster_variance,
    cr2_variance,
    outcomes,
    per_cluster,
)
from bench_nb.metrics.intervals import (
    mcnemar_test,
    student_t_quantile,
    student_t_two_sided_p,
    wilson_interval,
)
from bench_nb.metrics.sign_flip import smallest_p

_NAN = math.nan
Verdict = str  # "A higher", "B higher" or "cannot tell"
CANNOT_TELL = "cannot tell"
ALL = "all"  # the question type of a comparison over every question


def same_questions(questions: Any) -> pl.DataFrame:
    """``questions`` as a polars frame (built from run sources when it is not a frame), once every run in it
    is known to hold the same questions; the paired statistics compare runs on one question set, never on
    the part two sets share.

    A run's question set is every question it has a row for, scored or not (a failed or unscored question
    is still the run's: it is left out of the statistics, as the paired tests leave out any question one
    run did not score).

    Raises:
        ComparisonError: two runs hold different questions; the message names them and counts the
            questions only each holds (filter the frame to the questions you mean to compare them on).
    """
    frame = as_questions(questions)
    if "run_id" not in frame.columns or "question_id" not in frame.columns:
        return frame  # outcomes() names what is missing
    ids = frame.select(pl.col("run_id").cast(pl.Utf8), pl.col("question_id").cast(pl.Utf8)).unique()
    runs = frame["run_id"].cast(pl.Utf8).unique(maintain_order=True).to_list()
    if len(runs) < 2:
        return frame
    held = ids.group_by("question_id").agg(runs=pl.len())
    if held["runs"].min() == len(runs):
        return frame
    sets = {r: set(p["question_id"].to_list()) for (r,), p in ids.group_by("run_id")}
    first = runs[0]
    other = next(r for r in runs[1:] if sets[r] != sets[first])
    only_first, only_other = len(sets[first] - sets[other]), len(sets[other] - sets[first])
    shared = len(sets[first] & sets[other])
    raise ComparisonError(
        f"runs {first!r} and {other!r} hold different questions ({only_first} only in {first!r}, "
        f"{only_other} only in {other!r}, {shared} in both): paired statistics compare runs on one question "
        "set; select the questions to compare them on (e.g. those every run holds) first"
    )


def largest_question_set(questions: Any) -> tuple[list[str], list[str]]:
    """``(kept, left_out)``: the runs that hold the question set most runs hold (ties: the larger set, then
    the first run's), and the others, each in the frame's order. The paired statistics (ranks, tell-apart)
    are computed on ``kept``, so one run on other questions (a 60-question sample among 1,540-question runs,
    another benchmark's run) is left out and named instead of switching them off for every run."""
    frame = as_questions(questions)
    ids = frame.select(pl.col("run_id").cast(pl.Utf8), pl.col("question_id").cast(pl.Utf8))
    runs = ids["run_id"].unique(maintain_order=True).to_list()
    sets = {r: frozenset(p["question_id"].to_list()) for (r,), p in ids.group_by("run_id")}
    groups: dict[frozenset[str], list[str]] = {}
    for r in runs:
        groups.setdefault(sets[r], []).append(r)
    best = max(groups.items(), key=lambda g: (len(g[1]), len(g[0])))[1]  # max keeps the first of ties
    return best, [r for r in runs if r not in best]


CR2_T = "CR2 t (Bell-McCaffrey df)"
NO_TEST = "none"  # fewer than 2 haystacks


@dataclass(frozen=True)
class PairedTest:
    """One pair's clustered test: which (``test``), the CR2 ``statistic`` t on ``df`` Bell-McCaffrey degrees
    of freedom, the test's ``p`` and the 1 − alpha interval (``low``, ``high``) that excludes 0 exactly when
    p < alpha (``nan`` with fewer than 2 haystacks)."""

    test: str
    statistic: float
    df: float
    p: float
    low: float
    high: float


def paired_difference_test(diff_sums: np.ndarray, counts: np.ndarray, alpha: float = 0.05) -> PairedTest:
    """The clustered paired test of H0: mean difference = 0 and its inverted interval, from the per-cluster
    sums of differences (clusters with no question are left out): one test at every number of haystacks,
    for 0/1 and graded scores alike.

    With D̄ = Σ Dₖ / n the mean difference and SE² = ``cr2_variance`` (CR2: Σ (Dₖ − D̄·nₖ)² / (1 − nₖ/n) / n²),
    t = D̄ / SE is referred to Student's t on ν = ``bell_mccaffrey_df`` degrees of freedom (K − 1 with equal
    haystacks, near 2 when one holds most questions): p = 2·P(T_ν > |t|), and the interval D̄ ± t_{ν,1−α/2}·SE
    (clipped to [−1, 1]) holds exactly the δ that the same test of "mean = δ" accepts, so it excludes 0
    exactly when p < ``alpha``. When every haystack has the same mean difference SE is 0 and t has no
    distribution: p = 1 and the interval [0, 0] when that difference is 0, else t = ±inf and p = 2 / 2^K (the
    sign test of K haystacks that all agree: no more than that is shown), with the interval [D̄, D̄] when p is
    below ``alpha`` and the segment from 0 to D̄ when not (so it still holds 0 exactly when p ≥ ``alpha``). No test (p ``nan``) with one
    haystack.
    """
    present = np.asarray(counts) > 0
    d = np.asarray(diff_sums, dtype=float)[present]
    c = np.asarray(counts, dtype=float)[present]
    k = len(d)
    if k < 2:
        return PairedTest(NO_TEST, _NAN, _NAN, _NAN, _NAN, _NAN)
    mean = float(d.sum() / c.sum())
    var = cr2_variance(d, c)
    df = bell_mccaffrey_df(c)
    if not var > 1e-300:
        if mean == 0:
            return PairedTest(CR2_T, _NAN, df, 1.0, 0.0, 0.0)
        p = smallest_p(k)
        low, high = (mean, mean) if p < alpha else (min(0.0, mean), max(0.0, mean))
        return PairedTest(CR2_T, math.copysign(math.inf, mean), df, p, low, high)
    se = math.sqrt(var)
    t = mean / se
    half = student_t_quantile(1 - alpha / 2, df) * se
    low, high = max(-1.0, mean - half), min(1.0, mean + half)
    return PairedTest(CR2_T, t, df, student_t_two_sided_p(t, df), low, high)


def _pairs(data: pl.DataFrame, run_a: str, run_b: str, by: str | None) -> pl.DataFrame:
    keys = ["question_id", "haystack_id"] + ([] if by is None else ["question_type"])
    a = data.lazy().filter(pl.col("run_id") == run_a).select(*keys, a="value")
    b = data.lazy().filter(pl.col("run_id") == run_b).select("question_id", b="value")
    return (
        a.join(b, on="question_id", how="inner", maintain_order="left")
        .with_columns(d=pl.col("a") - pl.col("b"))
        .collect()
    )


@dataclass(frozen=True)
class PairSums:
    """Two runs on the questions both scored, summed per cluster (``ids``, sorted): the differences A − B,
    each run's scores and the questions; and what the paired statistics need of the questions themselves."""

    ids: np.ndarray
    d: np.ndarray
    a: np.ndarray
    b: np.ndarray
    counts: np.ndarray
    spread: float  # Σ (dᵢ − D̄)² over the questions
    binary: bool  # every score of both runs is 0 or 1
    a_only: int  # questions only A got right (0/1 scores)
    b_only: int
    unscored_a: int = 0  # questions B scored and A did not (failed, unscored)
    unscored_b: int = 0  # questions A scored and B did not

    @property
    def n(self) -> int:
        """The number of paired questions."""
        return int(self.counts.sum())


_NONE = np.zeros(0)
_EMPTY = PairSums(_NONE, _NONE, _NONE, _NONE, _NONE, 0.0, False, 0, 0)  # no paired question
SPREAD_LEVEL = 0.99  # the F(ν, ν) quantile one run's haystack-level variance over the other's must exceed
UNSCORED_P = 0.05  # McNemar's p on the questions only one run scored below which the warning fires


def paired_warning(ps: PairSums, run_a: str = "A", run_b: str = "B") -> str | None:
    """Why the clustered paired test may not hold its level for this pair (``None`` when there is no reason
    to think so): the conditions under which no paired test does (issue 39; calibrated by
    ``bench/paired_calibration.py``, rates in docs/statistics.md).

    - **Not exchangeable within haystacks**: the CR2 variance of one run's mean over the haystacks is above
      the other's times the ``SPREAD_LEVEL`` (0.99) quantile of F(ν, ν), ν the Bell-McCaffrey df (one run
      erratic: rare very bad haystacks). Runs exchangeable within haystacks have equal variances (the F
      quantile treats the two as independent, so it fires less often than 1% for them); an erratic run with
      an equal mean makes the paired differences skewed, and the test's false alarms then mostly call the
      erratic run better.
    - **Unscored at different rates**: the questions only one run scored (failed, unscored) differ between
      the runs by McNemar's test at p < ``UNSCORED_P`` (the questions as independent: conservative for a
      warning). The comparison uses the questions both scored; when a judge fails to parse long wrong
      answers, or a provider times out on hard questions, in one run only, that comparison is biased."""
    notes = []
    if len(ps.ids) >= 2 and ps.n:
        from scipy.special import fdtri  # F's quantiles: scipy, imported on first use

        va, vb = cr2_variance(ps.a, ps.counts), cr2_variance(ps.b, ps.counts)
        low, high = sorted((va, vb))
        nu = bell_mccaffrey_df(ps.counts)
        if high > 0 and high > float(fdtri(nu, nu, SPREAD_LEVEL)) * low:
            erratic = run_a if va > vb else run_b
            spread = (
                "while the other's is the same in every haystack"
                if low == 0
                else f"{high / low:.1f}x as much (variance) as the other's"
            )
            notes.append(
                f"not exchangeable within haystacks: {erratic}'s accuracy varies across haystacks {spread}, so "
                "no paired test holds its level (false alarms tend to call the steadier-looking run better); "
                "compare per haystack before trusting a verdict"
            )
    if ps.unscored_a + ps.unscored_b:
        p = mcnemar_test(ps.unscored_a, ps.unscored_b)[1]
        if p < UNSCORED_P:
            notes.append(
                f"unscored at different rates: {ps.unscored_a} question(s) only {run_b} scored, "
                f"{ps.unscored_b} only {run_a} scored (McNemar p = {p:.2g}); the test uses the questions both "
                "scored, which is biased if unscored answers are more often wrong (or right) in one run: see "
                "the bounds with every unscored answer wrong / right"
            )
    return "; ".join(notes) or None


PairKey = tuple[str, str, str]  # run A, run B, question type ("all" without by)


def paired_cluster_sums(data: pl.DataFrame, by: str | None = None) -> dict[PairKey, PairSums]:
    """``PairSums`` of every pair of runs (in order of appearance) from an ``outcomes`` frame, overall
    (``"all"``) or per question type: one join and one query per pair."""
    run_ids = data["run_id"].unique(maintain_order=True).to_list()
    out: dict[PairKey, PairSums] = {}
    for run_a, run_b in combinations(run_ids, 2):
        pairs = _pairs(data, run_a, run_b, by)
        missing = _only_one(data, run_a, run_b, by)
        if by is None:
            pairs = pairs.with_columns(question_type=pl.lit(ALL))
            out[(run_a, run_b, ALL)] = _EMPTY  # no paired question: still a row
        per = per_cluster(pairs, ["question_type"])
        if not per.groups:
            continue
        a, b = per.rows["a"].to_numpy(), per.rows["b"].to_numpy()
        d, spread = per.sums("d"), per.spread("d")
        sums_a, sums_b = per.sums("a"), per.sums("b")
        binary = per.per_group(np.isin(a, (0.0, 1.0)) & np.isin(b, (0.0, 1.0)), np.logical_and)
        a_only = per.per_group(((a == 1) & (b == 0)).astype(np.int64))
        b_only = per.per_group(((a == 0) & (b == 1)).astype(np.int64))
        for g, ((qtype,), r) in enumerate(zip(per.names, per.groups, strict=True)):
            out[(run_a, run_b, str(qtype))] = PairSums(
                per.ids[r],
                d[r],
                sums_a[r],
                sums_b[r],
                per.counts[r],
                float(spread[g]),
                bool(binary[g]),
                int(a_only[g]),
                int(b_only[g]),
                missing.get((str(qtype), run_b), 0),
                missing.get((str(qtype), run_a), 0),
            )
    return out


def _only_one(data: pl.DataFrame, run_a: str, run_b: str, by: str | None) -> dict[tuple[str, str], int]:
    """``(question type, run) → questions only that run scored`` of two runs in an ``outcomes`` frame (whose
    rows are the scored questions), per type (``"all"`` without ``by``)."""
    keys = ["question_id"] + ([] if by is None else ["question_type"])
    a = data.lazy().filter(pl.col("run_id") == run_a).select(keys)
    b = data.lazy().filter(pl.col("run_id") == run_b).select(keys)
    parts = [
        a.join(b, on="question_id", how="anti").with_columns(run_id=pl.lit(run_a)),
        b.join(a, on="question_id", how="anti").with_columns(run_id=pl.lit(run_b)),
    ]
    only = pl.concat(parts).collect()
    if by is None:
        only = only.with_columns(question_type=pl.lit(ALL))
    counts = only.group_by("question_type", "run_id").len()
    return {(str(t), str(r)): int(c) for t, r, c in counts.iter_rows()}


def _verdict(p: float, difference: float, alpha: float) -> Verdict:
    if math.isnan(p) or p >= alpha or difference == 0:
        return CANNOT_TELL
    return "A higher" if difference > 0 else "B higher"


def _compare(ps: PairSums, test: PairedTest) -> dict[str, Any]:
    n, k = ps.n, len(ps.ids)
    mean = float(ps.d.sum() / n) if n else _NAN
    var = cluster_variance(ps.d, ps.counts)
    deff = var / (ps.spread / n**2) if n and ps.spread > 0 and not math.isnan(var) else _NAN
    mcnemar_p = mcnemar_test(ps.a_only, ps.b_only)[1] if n > 0 and ps.binary else _NAN
    return {
        "n": n,
        "clusters": k,
        "accuracy_a": float(ps.a.sum() / n) if n else _NAN,
        "accuracy_b": float(ps.b.sum() / n) if n else _NAN,
        "difference": mean,
        "ci_low": test.low,
        "ci_high": test.high,
        "design_effect": deff,
        "statistic": test.statistic,
        "df": test.df,
        "p_value": test.p,
        "mcnemar_p": mcnemar_p,
    }


_SCHEMA: dict[str, Any] = {
    "run_a": pl.Utf8,
    "run_b": pl.Utf8,
    "question_type": pl.Utf8,
    "n": pl.Int64,
    "clusters": pl.Int64,
    "accuracy_a": pl.Float64,
    "accuracy_b": pl.Float64,
    "difference": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "design_effect": pl.Float64,
    "statistic": pl.Float64,
    "df": pl.Float64,
    "p_value": pl.Float64,
    "mcnemar_p": pl.Float64,
    "verdict": pl.Utf8,
    "test": pl.Utf8,
    "warning": pl.Utf8,
}


def clustered_paired_comparisons_frame(
    questions: QuestionsLike, *, by: Literal["question_type"] | None = None, alpha: float = 0.05
) -> pl.DataFrame:
    """Every pair of runs (in order of appearance) on the questions both scored, haystacks as clusters.

    Columns: ``run_a, run_b``, ``question_type`` (``"all"`` without ``by``), ``n`` (paired questions),
    ``clusters``, ``accuracy_a, accuracy_b, difference`` (A − B), ``ci_low, ci_high`` (the 1 − ``alpha``
    interval that inverts the clustered test: it excludes 0 exactly when p < ``alpha``; ``nan`` with one
    haystack), ``design_effect`` (of the paired differences), ``statistic, df`` (the CR2 t and its
    Bell-McCaffrey degrees of freedom, fractional), ``p_value`` (the clustered paired test), ``mcnemar_p``
    (McNemar's test, which ignores the clusters; n/a for fractional scores), ``verdict`` (``"A higher"``,
    ``"B higher"`` or ``"cannot tell"`` at ``alpha``, from the clustered test), ``test`` (``"CR2 t
    (Bell-McCaffrey df)"`` at every number of haystacks, ``"none"`` with one) and ``warning`` (why no
    paired test may hold its level for this pair: ``paired_warning``; null when there is no reason to
    think so).
    ``paired_difference_test`` has the definitions. Runs that hold different questions are refused (``ComparisonError``, from
    ``same_questions``), never compared on the questions they share.
    """
    data = outcomes(same_questions(questions), by)
    return paired_of(paired_cluster_sums(data, by), alpha=alpha)


clustered_paired_comparisons = with_backend(
    clustered_paired_comparisons_frame, "clustered_paired_comparisons"
)


def paired_of(sums: dict[PairKey, PairSums], alpha: float = 0.05) -> pl.DataFrame:
    """``clustered_paired_comparisons_frame`` from ``paired_cluster_sums``."""
    rows: list[dict[str, Any]] = []
    for (run_a, run_b, qtype), ps in sums.items():
        test = paired_difference_test(ps.d, ps.counts, alpha)
        stats = _compare(ps, test)
        verdict = _verdict(stats["p_value"], stats["difference"], alpha)
        rows.append(
            {"run_a": run_a, "run_b": run_b, "question_type": qtype}
            | stats
            | {"verdict": verdict, "test": test.test, "warning": paired_warning(ps, run_a, run_b)}
        )
    return pl.DataFrame(rows, schema=_SCHEMA)


def tell_apart_frame(questions: QuestionsLike, *, alpha: float = 0.05) -> pl.DataFrame:
    """Answer "Can we tell them apart?" for every pair of runs, overall (``question_type = "all"``) and per type,
    the clustered paired verdict with its interval next to the Wilson-overlap rule.

    The overlap rule (as the public LoCoMo audit applies it) calls two runs different only when their Wilson
    intervals on the paired questions do not overlap; it is unpaired and ignores the clusters.
    Adds ``wilson_a_low, wilson_a_high, wilson_b_low, wilson_b_high``, ``overlap_verdict`` and ``agree``
    (both rules give the same verdict) to ``clustered_paired_comparisons``' columns. Runs that hold
    different questions are refused (``ComparisonError``, naming them and counting the questions only each
    holds).
    """
    questions = same_questions(questions)
    overall = paired_of(paired_cluster_sums(outcomes(questions)), alpha=alpha)
    by_type = outcomes(questions, "question_type")
    per_type = paired_of(paired_cluster_sums(by_type, "question_type"), alpha=alpha)
    return tell_apart_of(overall, per_type, alpha)


tell_apart = with_backend(tell_apart_frame, "tell_apart")


def tell_apart_of(overall: pl.DataFrame, per_type: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """``tell_apart_frame`` from the ``paired_of`` frames of every question and of each type."""
    pair_order = overall.select("run_a", "run_b").with_row_index("_pair")
    table = (
        pl.concat([overall, per_type])
        .join(pair_order, on=["run_a", "run_b"], how="left", maintain_order="left")
        .sort("_pair", pl.col("question_type") != "all", maintain_order=True)
        .drop("_pair")
    )
    names = ("wilson_a_low", "wilson_a_high", "wilson_b_low", "wilson_b_high")
    extra: dict[str, list[Any]] = {k: [] for k in (*names, "overlap_verdict")}
    for r in table.iter_rows(named=True):
        n = int(r["n"])  # n = 0: nan intervals, so "cannot tell"
        # round(): a 0/1 run's sum is an integer that the mean times n misses by ~1e-13
        wa, wb = (
            wilson_interval(min(float(n), round(r[f"accuracy_{x}"] * n, 9)), n, 1 - alpha) for x in "ab"
        )
        for k, v in zip(names, (*wa, *wb), strict=True):
            extra[k].append(v)
        higher = "A higher" if wa[0] > wb[1] else "B higher" if wb[0] > wa[1] else CANNOT_TELL
        extra["overlap_verdict"].append(higher)
    table = table.with_columns(
        *(pl.Series(k, v, dtype=pl.Utf8 if k == "overlap_verdict" else pl.Float64) for k, v in extra.items())
    ).with_columns(agree=pl.col("verdict") == pl.col("overlap_verdict"))
    return table
