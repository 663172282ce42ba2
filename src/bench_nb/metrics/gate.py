"""The regression gate's statistics: is NEW worse than BASE by more than a margin, haystacks as clusters?

A one-sided test of the null "NEW is not worse than BASE by more than ``margin``" with the clustered paired
test of ``clustered_paired.paired_difference_test`` (the CR2 t on Bell-McCaffrey degrees of freedom at every
number of haystacks; the test ``tell_apart`` uses). The gate fails only when the test rejects that
null at ``alpha``: its false-alarm rate (failing when NEW is in truth no worse than the margin allows) is at
most ``alpha``. The one-sided test at ``alpha`` is the two-sided one at 2·``alpha`` read in the bad
direction (both tests are symmetric), so every row's interval is the two-sided 1 − 2·``alpha`` one.

- ``accuracy`` (share of scored questions scored 1) and ``quality`` (mean score): the change is
  NEW − BASE over the questions BASE scored, a question NEW did not score (failed, unfinished, unscored or
  absent) counted as wrong (0) for NEW; the gate shows NEW *worse* when the test of "change = −margin"
  rejects with the change below it, i.e. when the interval's upper end is below −margin, and *not worse*
  when the interval's lower end is above −margin; else the benchmark cannot tell (*inconclusive*).
- ``latency_ms`` (the search duration, MemScore's latency) and ``context_tokens``: lower is better and the
  margin is relative; the change is the ratio of means NEW / BASE over the questions both have a value for;
  the gate shows NEW worse when the test of "ratio = 1 + margin" (the mean of xᴺᵢ − (1 + margin)·xᴮᵢ is 0)
  rejects with the ratio above it, not worse when the interval's upper end is below 1 + margin. The interval
  of the ratio inverts the same test (bisection).

Every row also says what the benchmark can show (``metrics.power``, the same code as ``bench-nb plan`` and
``detectable_differences``): ``detectable``, the drop (or relative increase) the gate shows *worse* with 80%
power, and ``power_at_margin``, the chance that an equally good NEW is shown *not worse*.

Definitions: docs/statistics.md ("The regression gate").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from bench_nb.frames.backend import as_polars
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.metrics.clustered import cluster_variance, question_keys
from bench_nb.metrics.clustered_paired import PairedTest, paired_difference_test
from bench_nb.metrics.intervals import student_t_quantile, student_t_two_sided_p
from bench_nb.metrics.ordered import sums_by
from bench_nb.metrics.power import (
    detectable_differences_frame,
    minimum_detectable_effect,
    paired_test_multiplier,
)

METRICS: tuple[str, ...] = ("accuracy", "quality", "latency_ms", "context_tokens")
LOWER_IS_BETTER = frozenset({"latency_ms", "context_tokens"})
ALL = "all"
# The gate's outcomes: shown not worse than the margin allows, shown worse, neither (the benchmark cannot tell
# at this margin), and too few haystacks for any test at the level.
NOT_WORSE, WORSE, INCONCLUSIVE, UNDECIDED = "not worse", "worse", "inconclusive", "undecided"
POWER = 0.8  # the power at which ``detectable`` is stated
# The largest margins: a drop of a whole accuracy point scale (1) or more lets any change pass; for latency and
# tokens, NEW may be at most 10 times BASE (a margin of 9).
MAX_MARGIN = 1.0
MAX_RELATIVE_MARGIN = 9.0
# The powers ``power_at_margin`` is interpolated on. The power functions of ``metrics.power`` are two-sided (at
# the two-sided level 2·alpha); the gate's claims are one-sided. The two differ by the far tail, which is
# 2·alpha − alpha with no difference at all and under 2.5 points from a two-sided power of 30% up: below
# that, the power is stated as "under 30%".
_POWER_GRID = np.round(np.arange(0.30, 0.951, 0.05), 2)
_NAN = math.nan
_BISECTIONS = 60

ROW_SCHEMA: dict[str, Any] = {
    "question_type": pl.Utf8,
    "n": pl.Int64,
    "clusters": pl.Int64,
    "counted_wrong": pl.Int64,
    "base": pl.Float64,
    "new": pl.Float64,
    "change": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "alpha": pl.Float64,
    "p_value": pl.Float64,
    "test": pl.Utf8,
    "verdict": pl.Utf8,
    "shown_not_worse": pl.Boolean,
    "detectable": pl.Float64,
    "power_at_margin": pl.Float64,
    "note": pl.Utf8,
}


def check_margin(metric: str, margin: float) -> float:
    """``margin`` as a float, refused unless finite and in range: [0, 1) accuracy points as a proportion for
    ``accuracy`` and ``quality`` (a margin of 1 lets any change pass), [0, 9] relative for ``latency_ms`` and
    ``context_tokens`` (NEW at most 10 times BASE).

    Raises:
        ValueError: naming the margin and the range.
    """
    value = float(margin)
    if metric in LOWER_IS_BETTER:
        if not 0 <= value <= MAX_RELATIVE_MARGIN:
            raise ValueError(
                f"margin must be a relative increase from 0 to {MAX_RELATIVE_MARGIN:g} for {metric} (0.02 = 2% "
                f"more; {MAX_RELATIVE_MARGIN:g} = ten times BASE), not {margin}"
            )
    elif not 0 <= value < MAX_MARGIN:
        raise ValueError(
            f"margin must be from 0 to below 1 for {metric} (accuracy points as a proportion: 0.02 = 2 "
            f"points; 1 would pass any change), not {margin}"
        )
    return value


def gate_values(questions: Any, metric: str) -> pl.DataFrame:
    """``run_id, question_id, haystack_id, question_type, value`` of ``metric`` for the questions that have one.

    ``accuracy``: ``correct`` as 0/1 and ``quality``: ``score``, both over the questions with a verdict
    (``frames.verdicts.with_verdicts``: evaluated, scored, not null or NaN);
    ``latency_ms``: ``search_ms``; ``context_tokens``: ``context_tokens`` (questions that recorded them). A
    question with no haystack is its own cluster; the type is the normalised one.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, not {metric!r}")
    frame = as_polars(questions)
    if frame is None:
        raise TypeError("gate_values takes a questions frame (questions_df)")
    if metric in ("accuracy", "quality"):
        frame = with_verdicts(frame)  # the one rule: correct and score null for a question without a verdict
    column = {"accuracy": "correct", "quality": "score", "latency_ms": "search_ms"}.get(metric, metric)
    type_col = "question_type_norm" if "question_type_norm" in frame.columns else "question_type"
    return (
        frame.select(*question_keys(type_col), pl.col(column).cast(pl.Float64).alias("value"))
        .drop_nulls("value")
        .filter(pl.col("value").is_finite())
    )


def _at_margin(test: PairedTest, worse: bool, alpha: float) -> dict[str, Any]:
    """A row's decision from the two-sided test at the margin: the one-sided p of "no regression beyond the
    margin" (half the two-sided p when the estimate lies on the bad side, else one minus that), the test,
    and whether the row fails (the estimate on the bad side and the test rejecting at the one-sided alpha)."""
    p = _NAN if math.isnan(test.p) else test.p / 2 if worse else 1 - test.p / 2
    return {"p_value": p, "test": test.test, "fail": worse and test.p < 2 * alpha}


def _difference_row(
    b: np.ndarray, n: np.ndarray, c: np.ndarray, margin: float, alpha: float
) -> dict[str, Any]:
    d = n - b
    mean = float(d.sum() / c.sum())
    interval = paired_difference_test(d, c, 2 * alpha)
    at_margin = paired_difference_test(d + margin * c, c, 2 * alpha)
    worse = mean + margin < 0
    return {
        "change": mean,
        "ci_low": interval.low,
        "ci_high": interval.high,
        **_at_margin(at_margin, worse, alpha),
        "shown_not_worse": bool(interval.low > -margin) if not math.isnan(interval.low) else False,
    }


def _accuracy_power(part: pl.DataFrame, margin: float, alpha: float) -> tuple[float, float]:
    """``(detectable, power_at_margin)`` of an accuracy or quality row, from ``detectable_differences``'s
    estimates for the two runs (``metrics.power``: their questions, haystacks, accuracy, intraclass
    correlation of the paired differences and correlation) at the gate's one-sided level (two-sided 2·alpha)."""
    long = pl.concat(
        [
            part.select("question_id", "haystack_id", score="b").with_columns(run_id=pl.lit("base")),
            part.select("question_id", "haystack_id", score="n").with_columns(run_id=pl.lit("new")),
        ]
    ).with_columns(question_type=pl.lit(ALL))
    d = detectable_differences_frame(long, alpha=2 * alpha, power=POWER).row(0, named=True)
    if not 0 < d["accuracy"] < 1 or math.isnan(d["mde_paired"]):
        return _NAN, _NAN

    def mde(power: float) -> float:
        return minimum_detectable_effect(
            d["n"], d["accuracy"], 2 * alpha, power, d["cluster_size"], d["icc_difference"],
            paired=True, correlation=d["correlation"],
        )  # fmt: skip

    return margin + d["mde_paired"], _power_at(mde, margin)


def _ratio_power(
    b: np.ndarray, n: np.ndarray, c: np.ndarray, margin: float, alpha: float
) -> tuple[float, float]:
    """``(detectable, power_at_margin)`` of a latency or tokens row, from the clustered paired test's
    multiplier (``metrics.power.paired_test_multiplier``) and the ratio's relative cluster-robust standard
    error (docs/statistics.md, "The regression gate")."""
    total_b = float(b.sum())
    k = int((c > 0).sum())
    if total_b <= 0 or k < 2:
        return _NAN, _NAN
    ratio = float(n.sum()) / total_b
    se = math.sqrt(max(cluster_variance(n - ratio * b, c), 0.0)) / (total_b / float(c.sum()))

    def mde(power: float) -> float:
        return paired_test_multiplier(k, 2 * alpha, power) * se

    # The noise of a ratio grows with it: at a true ratio R its standard error is about R·se (se the relative
    # one, at R = 1), so the test at the margin shows R worse with the power when R − (1 + margin) reaches
    # mde·R, i.e. R = (1 + margin) / (1 − mde).
    shift = mde(POWER) / ratio if ratio > 0 else _NAN
    detectable = (1 + margin) / (1 - shift) - 1 if 0 <= shift < 1 else _NAN
    return detectable, _power_at(lambda power: mde(power) / ratio, margin)


def _power_at(mde: Any, margin: float) -> float:
    """The power at which ``mde(power)`` equals ``margin``, interpolated on a grid of powers 0.30 ... 0.95
    (each multiplier computed once and kept: ``paired_test_multiplier`` is cached); 0 stands for "under 30%",
    1 for "over 95%", ``nan`` when no test can reject."""
    values = np.array([mde(float(p)) for p in _POWER_GRID])
    if not np.isfinite(values).all():
        return _NAN
    return float(np.interp(margin, values, _POWER_GRID, left=0.0, right=1.0))


def _ratio_row(b: np.ndarray, n: np.ndarray, c: np.ndarray, margin: float, alpha: float) -> dict[str, Any]:
    total_b, total_n = float(b.sum()), float(n.sum())
    ratio = total_n / total_b if total_b > 0 else (1.0 if total_n == 0 else math.inf)
    limit = 1 + margin
    at_margin = paired_difference_test(n - limit * b, c, 2 * alpha)
    worse = total_n - limit * total_b > 0

    def accepted(rho: float) -> bool:
        p = paired_difference_test(n - rho * b, c, 2 * alpha).p
        return not p < 2 * alpha

    low, high = _NAN, _NAN
    if not math.isnan(at_margin.p) and math.isfinite(ratio) and total_b > 0:
        low = _bisect(accepted, 0.0, ratio) if not accepted(0.0) else 0.0
        far = max(2 * ratio, 1.0)
        while accepted(far) and far < 1e9 * max(ratio, 1.0):
            far *= 2
        high = _bisect(accepted, far, ratio) if not accepted(far) else math.inf
    return {
        "change": ratio - 1,
        "ci_low": low - 1,
        "ci_high": high - 1,
        **_at_margin(at_margin, worse, alpha),
        "shown_not_worse": bool(high < limit) if not math.isnan(high) else False,
    }


def _bisect(accepted: Any, rejected_end: float, accepted_end: float) -> float:
    """The boundary between a rejected and an accepted ratio (the accepted side's end, to float precision)."""
    lo, hi = rejected_end, accepted_end
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        if accepted(mid):
            hi = mid
        else:
            lo = mid
    return hi


def non_inferiority(
    values: pl.DataFrame,
    base_run: str,
    new_run: str,
    *,
    metric: str = "accuracy",
    margin: float = 0.02,
    alpha: float = 0.1,
    by: str | None = None,
    detectable: bool = True,
) -> pl.DataFrame:
    """The gate's rows: overall (``question_type = "all"``) and, with ``by="question_type"``, per type.

    ``values`` is a ``gate_values`` frame holding both runs. For ``accuracy`` and ``quality`` every question
    BASE has a value for is paired, a question NEW has none for counted as 0 (wrong) for NEW (``counted_wrong``
    of them); for ``latency_ms`` and ``context_tokens`` the questions both have a value for. Each row is tested at ``alpha`` divided by the number of rows (Bonferroni: the chance that any
    row fails falsely stays at most ``alpha``). Columns ``ROW_SCHEMA``: ``base``, ``new`` (the means),
    ``change`` (NEW − BASE; for latency and tokens NEW / BASE − 1), ``ci_low, ci_high`` (the two-sided
    1 − 2·alpha interval of the change), ``p_value`` (one-sided, of "no regression beyond the margin"),
    ``test`` (which clustered test), ``verdict`` (``"worse"``: the test rejects, NEW is worse by more than the
    margin; ``"not worse"``: the interval rules a regression beyond the margin out; ``"inconclusive"``:
    neither; ``"undecided"``: too few haystacks for any test at the row's level), ``shown_not_worse``,
    ``detectable`` (the drop, or relative increase, the row shows worse with 80% power: margin + the paired
    test's detectable difference at the row's one-sided level), ``power_at_margin`` (the chance an equally
    good NEW is shown not worse; 0 stands for under 30%, 1 for over 95%), ``note``. ``detectable=False``
    leaves those two ``nan`` (the decision alone, for simulations).
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, not {metric!r}")
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), not {alpha}")
    margin = check_margin(metric, margin)
    if by not in (None, "question_type", "type"):
        raise ValueError(f"by must be None or 'question_type' (or 'type'), not {by!r}")
    base = values.filter(pl.col("run_id") == base_run).select(
        "question_id", "haystack_id", "question_type", b="value"
    )
    new = values.filter(pl.col("run_id") == new_run).select("question_id", n="value")
    ratio = metric in LOWER_IS_BETTER
    if ratio:
        pairs = base.join(new, on="question_id", how="inner").with_columns(wrong=pl.lit(False))
    else:  # every question BASE scored: one NEW did not score counts as wrong
        pairs = base.join(new, on="question_id", how="left").with_columns(
            wrong=pl.col("n").is_null(), n=pl.col("n").fill_null(0.0)
        )
    groups: list[tuple[str, pl.DataFrame]] = [(ALL, pairs)]
    if by is not None:
        for (qtype,), part in sorted(pairs.group_by("question_type"), key=lambda g: str(g[0][0])):
            groups.append((str(qtype), part))
    row_alpha = alpha / len(groups)
    rows = []
    for qtype, part in groups:
        # per haystack (sorted): Σ BASE, Σ NEW and the questions, the same bits on every call (metrics.ordered)
        per = sums_by(part, ["haystack_id"], ["b", "n"])
        b, n, c = per["b"].to_numpy(), per["n"].to_numpy(), per["c"].to_numpy().astype(float)
        k = int((c > 0).sum())
        row: dict[str, Any] = {
            "question_type": qtype,
            "n": int(c.sum()),
            "clusters": k,
            "counted_wrong": int(part["wrong"].sum()) if len(part) else 0,
            "base": float(b.sum() / c.sum()) if k else _NAN,
            "new": float(n.sum() / c.sum()) if k else _NAN,
            "alpha": row_alpha,
        }
        if k == 0:
            rows.append(row | _empty("no question both runs have a value for"))
            continue
        stats = (_ratio_row if ratio else _difference_row)(b, n, c, margin, row_alpha)
        fail = stats.pop("fail")
        if fail:
            verdict, note = WORSE, None
        elif k < 2:  # no test at all (from 2 haystacks the CR2 t can decide at any level)
            verdict, note = UNDECIDED, undecided_note(k)
        elif stats["shown_not_worse"]:
            verdict, note = NOT_WORSE, None
        else:
            verdict, note = INCONCLUSIVE, None
        smallest, power = _NAN, _NAN
        if detectable:
            smallest, power = (
                _ratio_power(b, n, c, margin, row_alpha)
                if ratio
                else _accuracy_power(part, margin, row_alpha)
            )
        rows.append(
            row | stats | {"verdict": verdict, "note": note, "detectable": smallest, "power_at_margin": power}
        )
    return pl.DataFrame(rows, schema=ROW_SCHEMA)


WELCH = "Welch t over repeats"


def repeats_non_inferiority(
    base: list[float],
    new: list[float],
    *,
    questions: int,
    haystacks: int,
    margin: float = 0.02,
    alpha: float = 0.1,
    counted_wrong: int = 0,
) -> pl.DataFrame:
    """The gate's row for the estimand "is NEW worse on this benchmark beyond its run-to-run noise?": the
    accuracies (or mean scores) of R_B ≥ 2 repeated runs of BASE and R_N ≥ 2 of NEW on the same questions,
    compared with Welch's t (the benchmark's questions fixed, the runs' own randomness the only noise):
    change d = mean(NEW) − mean(BASE), SE² = s²_B/R_B + s²_N/R_N, Welch–Satterthwaite df, the interval
    d ± t_{df, 1−alpha}·SE (two-sided 1 − 2·alpha), and the outcome from it as in ``non_inferiority``.
    ``detectable`` = margin + (t_{df, 1−alpha} + t_{df, 0.8})·SE; ``power_at_margin`` the chance that an
    equally good NEW is shown not worse, P(T_df > t_{df, 1−alpha} − margin/SE). With SE = 0 (every repeat the
    same) the change itself decides. Columns ``ROW_SCHEMA``; ``clusters`` is the haystacks, ``note`` the
    repeats.
    """
    margin = check_margin("accuracy", margin)
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), not {alpha}")
    if len(base) < 2 or len(new) < 2:
        raise ValueError(
            f"the benchmark estimand needs at least 2 runs of BASE and 2 of NEW (bench-nb run --repeat), "
            f"not {len(base)} and {len(new)}"
        )
    b, n = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    d = float(n.mean() - b.mean())
    vb, vn = float(b.var(ddof=1)) / len(b), float(n.var(ddof=1)) / len(n)
    se = math.sqrt(vb + vn)
    if se > 0:
        df = se**4 / (vb**2 / (len(b) - 1) + vn**2 / (len(n) - 1))
        t = student_t_quantile(1 - alpha, df)
        low, high = d - t * se, d + t * se
        p2 = student_t_two_sided_p((d + margin) / se, df)
        p = p2 / 2 if d + margin < 0 else 1 - p2 / 2
        detectable = margin + (t + student_t_quantile(POWER, df)) * se
        x = t - margin / se  # the power is P(T > x)
        power = 1 - student_t_two_sided_p(x, df) / 2 if x < 0 else student_t_two_sided_p(x, df) / 2
    else:
        low = high = d
        p = 0.0 if d + margin < 0 else 1.0
        detectable, power = margin, 1.0
    if high < -margin:
        verdict = WORSE
    elif low > -margin:
        verdict = NOT_WORSE
    else:
        verdict = INCONCLUSIVE
    row = {
        "question_type": ALL,
        "n": questions,
        "clusters": haystacks,
        "counted_wrong": counted_wrong,
        "base": float(b.mean()),
        "new": float(n.mean()),
        "change": d,
        "ci_low": low,
        "ci_high": high,
        "alpha": alpha,
        "p_value": p,
        "test": WELCH,
        "verdict": verdict,
        "shown_not_worse": verdict == NOT_WORSE,
        "detectable": detectable,
        "power_at_margin": power,
        "note": f"{len(b)} BASE and {len(n)} NEW repeats",
    }
    return pl.DataFrame([row], schema=ROW_SCHEMA)


def _empty(note: str) -> dict[str, Any]:
    return {
        "change": _NAN,
        "ci_low": _NAN,
        "ci_high": _NAN,
        "p_value": _NAN,
        "test": "none",
        "verdict": UNDECIDED,
        "shown_not_worse": False,
        "detectable": _NAN,
        "power_at_margin": _NAN,
        "note": note,
    }


def undecided_note(clusters: int) -> str:
    """Why a row of ``clusters`` haystacks (fewer than 2) is undecided, in words."""
    return (
        f"{clusters} haystack{'s' if clusters != 1 else ''} allow{'s' if clusters == 1 else ''} no test at any "
        "level (the clustered test compares 2 haystacks at least)"
    )
