"""Paired comparison of two runs on the same questions: the difference, its 95% interval and a test.

Only questions both runs scored are paired (failed, pending and unscored ones are dropped and counted); two
runs that share no scored question are refused (``ComparisonError``), never given p = 1. ``difference`` =
accuracy A − accuracy B (the mean score for graded runs: BEAM's rubric scores). ``method`` picks the test:

- ``"clustered"`` (the default): the clustered paired test and the interval that inverts it, the same as
  ``tell_apart``'s (``clustered_paired.paired_difference_test``, over the haystacks: the conversations,
  chats): the CR2 cluster-robust t on Bell-McCaffrey degrees of freedom at every number of haystacks.
  0/1 and graded scores alike. Haystacks are taken in sorted order, so the rows' order never matters.
- ``"independent"``: McNemar's test and Newcombe's interval, which count every question as independent
  evidence (0/1 scores only). Questions of one conversation are not independent: with few conversations
  they reject a true null far too often (34-52% at 5% over 10 conversations). With a = both correct,
  b = only A correct, c = only B correct, d = neither, n = a+b+c+d: Newcombe's square-and-add interval
  for paired proportions (Newcombe 1998, method 10; Fagerland, Lydersen & Laake 2014) and McNemar's test on
  b and c: exact (two-sided binomial, p = min(1, 2·P[X ≤ min(b, c)]), X ~ Bin(b+c, ½)) when b+c < 25, else
  chi-square with continuity correction (|b−c|−1)²/(b+c) on 1 df. Both equal statsmodels'
  ``mcnemar(table, exact=...)``.
- ``"signed-rank"``: the clustered interval with Datta & Satten's clustered signed-rank test of the
  per-question differences over the same haystacks (``bench_nb.metrics.signed_rank``, ``statistic`` its z):
  a test of the ranks of the differences, not of their mean.

The counts of questions scored 1 (``both_correct``, ``a_only``, ...) are kept for reading whatever the
method. Definitions: docs/statistics.md ("Comparing two runs on the same questions").

Runs that differ in question set, benchmark, judge, answering model, retrieval limit k, answerer, prompts
or a provider's own judge prompt are not like for like: the result says so (``like_for_like``, ``warning``),
or ``require_like_for_like=True`` raises ``ComparisonError``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from itertools import combinations
from typing import Any, Literal

import msgspec
import numpy as np
import polars as pl

from bench_nb.errors import ComparisonError
from bench_nb.frames.backend import Backend, Frame, as_polars, once_per_frame, to_backend, with_backend
from bench_nb.frames.judgments import collapse_replicates, judgments_frame, known_judges
from bench_nb.frames.questions import questions_frame
from bench_nb.frames.store import StoredRuns
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.metrics.clustered_paired import PairSums, paired_difference_test, paired_warning
from bench_nb.metrics.intervals import mcnemar_test, wilson_interval
from bench_nb.metrics.ordered import sums_by
from bench_nb.metrics.signed_rank import clustered_signed_rank
from bench_nb.runformat.load import RunSet, load_runs
from bench_nb.runformat.spec import RunSpec, read_spec
from bench_nb.runformat.spec import differences as settings_differences
from bench_nb.text import Cell, fmt_number, render

PairedMethod = Literal["clustered", "independent", "signed-rank"]
METHODS: tuple[PairedMethod, ...] = ("clustered", "independent", "signed-rank")
SIGNED_RANK = "clustered-signed-rank"  # the test of method="signed-rank"
# What each method's test and interval are, for the tables that show them (the paired table, the result's HTML).
METHOD_NOTES: dict[PairedMethod, str] = {
    "clustered": "Clustered (haystacks as the independent units, the tell-apart section's test): the CR2 "
    "cluster-robust t on Bell-McCaffrey degrees of freedom (haystacks − 1 when they are of equal size, fewer "
    "when one holds most questions); the interval inverts the test, so it excludes 0 exactly when p < 0.05.",
    "independent": "Independent (McNemar's test, exact for small counts, and Newcombe's interval for paired "
    "proportions): every question counts as independent evidence, and questions about one conversation are "
    "not, so with few conversations they overstate certainty; the clustered method does not.",
    "signed-rank": "Clustered signed-rank (Datta & Satten's test of the ranks of the differences over the "
    "haystacks) with the clustered interval of the mean difference: near the 5% line one can exclude 0 while "
    "the other does not.",
}
# The columns of a paired comparison's row, as the result's HTML and the paired table (with Holm's p) show it.
HEADERS = (
    "pair (A vs B)",
    "questions / haystacks",
    "accuracy A / B",
    "A − B [95% CI]",
    "only A / only B right",
    "test",
    "p",
)
_NAN = math.nan


def newcombe_paired_interval(
    both: int, a_only: int, b_only: int, neither: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's (1998, method 10) interval for p_A − p_B from a paired 2×2 table; ``nan`` when n = 0."""
    n = both + a_only + b_only + neither
    if n == 0:
        return (_NAN, _NAN)
    p1, p2 = (both + a_only) / n, (both + b_only) / n
    l1, u1 = wilson_interval(both + a_only, n, confidence)
    l2, u2 = wilson_interval(both + b_only, n, confidence)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    psi = 0.0
    if margins > 0:
        cross = both * neither - a_only * b_only
        if cross > n / 2:
            psi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            psi = cross / math.sqrt(margins)
    d = p1 - p2
    low = d - math.sqrt(max(0.0, (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2)))
    high = d + math.sqrt(max(0.0, (p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1)))
    return (max(-1.0, low), min(1.0, high))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (as statsmodels' ``multipletests(method="holm")``).

    Sorted ascending, the i-th (from 0) of n is multiplied by n - i; a running maximum keeps them monotone.
    """
    n = len(p_values)
    order = sorted(range(n), key=lambda i: p_values[i])
    adjusted = [0.0] * n
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (n - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class PairedComparison:
    """Run A against run B on the questions both scored (``difference`` = accuracy A − accuracy B).

    ``method`` is how they were compared (``"clustered"``, ``"independent"`` or ``"signed-rank"``: see
    ``paired_comparison``) and ``test`` the test that gave ``p_value``: ``"CR2 t (Bell-McCaffrey df)"``
    (clustered; ``"none"`` with one haystack),
    ``"McNemar exact"`` or ``"McNemar chi2-cc"`` (independent), ``"clustered-signed-rank"``. ``clusters``:
    the haystacks the paired questions come from.

    ``by_type`` is a pandas frame, or polars with ``paired_comparison(..., backend="polars")``;
    ``by_type_frame`` is the same table in polars, whatever the backend."""

    run_a: str
    run_b: str
    provider_a: str
    provider_b: str
    judge: str | None
    n_pairs: int
    n_dropped: int
    accuracy_a: float
    accuracy_b: float
    difference: float
    ci_low: float
    ci_high: float
    both_correct: int
    a_only: int
    b_only: int
    both_incorrect: int
    test: str
    statistic: float
    p_value: float
    method: PairedMethod
    clusters: int
    like_for_like: bool
    warning: str
    by_type_frame: pl.DataFrame = field(repr=False)  # the same per question type, in polars
    backend: Backend = field(default="pandas", repr=False)  # the library ``by_type`` is handed out in

    @cached_property
    def by_type(self) -> Frame:
        """The comparison per question type (``question_type_norm`` and the same figures), in ``backend``."""
        return to_backend(self.by_type_frame, self.backend)

    def _repr_html_(self) -> str:
        """One row: both accuracies, the difference with its interval, the discordant pairs and the test
        (rounded for reading; the exact values are the attributes, or ``as_dict()``)."""
        ci = (
            "[n/a]"
            if math.isnan(self.ci_low) or math.isnan(self.ci_high)
            else f"[{self.ci_low * 100:+.1f}, {self.ci_high * 100:+.1f}]"
        )
        row = [
            f"{self.provider_a or self.run_a} vs {self.provider_b or self.run_b}",
            Cell(f"{self.n_pairs} / {self.clusters}", "num"),
            Cell(f"{self.accuracy_a:.1%} / {self.accuracy_b:.1%}", "num"),
            Cell(f"{self.difference * 100:+.1f} pts {ci}", "num"),
            Cell(f"{self.a_only} / {self.b_only}", "num"),
            self.test,
            Cell(fmt_number(self.p_value), "num"),
        ]
        notes = [self.warning] if self.warning else []
        notes.append(METHOD_NOTES[self.method])
        notes.append(
            f"Runs {self.run_a} and {self.run_b}; judge {self.judge or 'primary'}; exact values: .as_dict()."
        )
        return render(
            HEADERS,
            [row],
            caption="Paired comparison",
            notes=notes,
        )

    def as_dict(self) -> dict[str, Any]:
        """The scalar fields (everything but ``by_type`` and ``backend``)."""
        out = asdict(self)
        out.pop("by_type_frame")
        out.pop("backend")
        return out


def _counts(pairs: pl.DataFrame) -> dict[str, Any]:
    """The paired questions' counts and means, whatever the method: the 2×2 table of questions scored 1,
    both runs' accuracies (mean scores) and their difference."""
    a, b = pairs["correct_a"], pairs["correct_b"]
    both, a_only = int((a & b).sum()), int((a & ~b).sum())
    b_only, neither = int((~a & b).sum()), int((~a & ~b).sum())
    n = len(pairs)
    values = pairs.select(_value("a"), _value("b"))
    acc_a = float(values["a"].mean()) if n else _NAN  # type: ignore[arg-type]
    acc_b = float(values["b"].mean()) if n else _NAN  # type: ignore[arg-type]
    return {
        "n_pairs": n,
        "accuracy_a": acc_a,
        "accuracy_b": acc_b,
        "difference": acc_a - acc_b,
        "both_correct": both,
        "a_only": a_only,
        "b_only": b_only,
        "both_incorrect": neither,
    }


def _test_warning(
    pairs: pl.DataFrame, unscored_a: int, unscored_b: int, run_a: str, run_b: str
) -> str | None:
    """``clustered_paired.paired_warning`` of the paired questions (per haystack, sorted) and the questions
    only one run scored: why no clustered paired test may hold its level for these runs."""
    per = sums_by(
        pairs.select("haystack_id", "question_id", _value("a"), _value("b")), ["haystack_id"], ["a", "b"]
    )
    a, b = per["a"].to_numpy(), per["b"].to_numpy()
    counts = per["c"].to_numpy().astype(float)
    ps = PairSums(
        per["haystack_id"].to_numpy(), a - b, a, b, counts, 0.0, False, 0, 0, unscored_a, unscored_b
    )
    return paired_warning(ps, run_a, run_b)


def _value(run: str) -> pl.Expr:
    """A paired question's score in run ``run`` (``"a"`` or ``"b"``): its score, else 1/0 for correct."""
    return pl.coalesce(pl.col(f"score_{run}"), pl.col(f"correct_{run}").cast(pl.Float64)).alias(run)


def _stats(pairs: pl.DataFrame, method: PairedMethod) -> dict[str, Any]:
    """Counts, means, the interval and the test of ``method`` for the paired questions (``pairs``: one row
    per question, ``correct_a, correct_b, score_a, score_b, haystack_id``)."""
    out = _counts(pairs)
    n = len(pairs)
    if n == 0:
        return out | {
            "ci_low": _NAN,
            "ci_high": _NAN,
            "test": "none",
            "statistic": _NAN,
            "p_value": _NAN,
            "clusters": 0,
        }
    clusters = int(pairs["haystack_id"].n_unique())
    if method == "independent":
        low, high = newcombe_paired_interval(
            out["both_correct"], out["a_only"], out["b_only"], out["both_incorrect"]
        )
        stat, p, which = mcnemar_test(out["a_only"], out["b_only"])
        return out | {
            "ci_low": low,
            "ci_high": high,
            "test": f"McNemar {which}",
            "statistic": stat,
            "p_value": p,
            "clusters": clusters,
        }
    # Per haystack, in sorted order, added in the questions' order: the same questions in any row order give
    # the same sums to the bit, and so the same p and interval.
    per = sums_by(
        pairs.select("haystack_id", "question_id", d=_value("a") - _value("b")), ["haystack_id"], ["d"]
    )
    test = paired_difference_test(per["d"].to_numpy(), per["c"].to_numpy().astype(float))
    out |= {"ci_low": test.low, "ci_high": test.high, "clusters": clusters}
    if method == "clustered":
        return out | {"test": test.test, "statistic": test.statistic, "p_value": test.p}
    diff = pairs.select(_value("a") - _value("b")).to_series().to_numpy()
    _, index = np.unique(pairs["haystack_id"].to_numpy().astype(str), return_inverse=True)
    z, p_value = clustered_signed_rank(diff, index)
    return out | {"test": SIGNED_RANK, "statistic": float(z), "p_value": float(p_value)}


def paired_comparison(
    data: Any,
    run_a: str,
    run_b: str,
    *,
    judge: str | None = None,
    method: PairedMethod = "clustered",
    require_like_for_like: bool = False,
    backend: Backend = "pandas",
) -> PairedComparison:
    """Compare two runs question by question.

    Args:
        data: run directories (or anything ``load_runs`` takes: every setting is checked), a run store's
            runs (``load_runs(STORE, runs=[...])``: the settings recorded at export), a questions frame
            (``questions_df``) or a judgments frame (``judgments_df``).
        run_a: the first run's id; ``difference`` is A − B.
        run_b: the second run's id.
        judge: grade both runs with this judge's verdicts (from judgments.jsonl); default the primary one.
        method: ``"clustered"`` (default): the clustered paired test over the haystacks and its inverted
            interval, ``tell_apart``'s; ``"independent"``: McNemar's test and Newcombe's interval, which
            treat every question as independent (0/1 scores only; too eager when questions share a
            conversation); ``"signed-rank"``: the clustered interval with the clustered signed-rank test.
        require_like_for_like: raise ``ComparisonError`` instead of flagging runs that are not comparable.
        backend: ``"pandas"`` (default) or ``"polars"`` for ``by_type``.

    Raises:
        ComparisonError: a run is not in the data, the two runs share no question both scored, or
            (``require_like_for_like``) they are not like for like.
        ValueError: an unknown ``method``, or ``"independent"`` for graded scores.
    """
    _check_method(method)
    outcomes, settings = _outcomes(data, judge)
    result = _compare(outcomes, settings, run_a, run_b, judge, require_like_for_like, method=method)
    return replace(result, backend=backend)


def paired_comparisons_frame(
    data: Any, *, judge: str | None = None, by_type: bool = False, method: PairedMethod = "clustered"
) -> pl.DataFrame:
    """Every pair of runs in ``data`` (in order of appearance), one row each, with Holm-adjusted p-values.

    With ``by_type=True`` each pair also gets one row per question type (``question_type_norm``; the
    overall row has ``"all"``). ``p_value_holm`` adjusts the overall rows for the number of pairs.
    ``method`` as for ``paired_comparison``. A pair that shares no question both scored gets a row with
    no p-value and its ``warning`` saying so (``paired_comparison`` refuses it).

    Of a loaded ``RunSet`` graded by its primary judges, the frame is worked out once per report kernel
    (``once_per_frame`` of the runs' questions frame, which the ``RunSet`` keeps): the compare report's
    summary (neighbours) and its full paired table are the same pairs.
    """
    _check_method(method)
    if judge is None and isinstance(data, RunSet):
        return once_per_frame(
            f"paired comparisons of the runs, {method}{', by type' if by_type else ''}",
            questions_frame(data),
            lambda _: _paired_comparisons(data, judge, by_type, method),
        )
    return _paired_comparisons(data, judge, by_type, method)


def _paired_comparisons(data: Any, judge: str | None, by_type: bool, method: PairedMethod) -> pl.DataFrame:
    outcomes, settings = _outcomes(data, judge)
    run_ids = outcomes["run_id"].unique(maintain_order=True).to_list()
    rows: list[dict[str, Any]] = []
    for a, b in combinations(run_ids, 2):
        result = _compare(
            outcomes, settings, a, b, judge, False, per_type=by_type, method=method, empty_ok=True
        )
        rows.append(result.as_dict() | {"question_type_norm": "all"})
        if by_type:
            for t in result.by_type_frame.iter_rows(named=True):
                base = {k: v for k, v in result.as_dict().items() if k not in t}
                rows.append(base | t)
    table = pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame(schema=_EMPTY)
    overall = table["question_type_norm"] == "all" if rows else pl.Series([], dtype=pl.Boolean)
    holm: list[float | None] = [None] * len(table)
    ps = [(i, p) for i, (p, is_all) in enumerate(zip(table["p_value"], overall, strict=True)) if is_all]
    valid = [(i, p) for i, p in ps if p is not None and not math.isnan(p)]
    if valid:
        for (i, _), adj in zip(valid, holm_adjust([p for _, p in valid]), strict=True):
            holm[i] = adj
    table = table.with_columns(pl.Series("p_value_holm", holm, dtype=pl.Float64))
    front = ["run_a", "run_b", "provider_a", "provider_b", "question_type_norm"]
    return table.select(*front, *[c for c in table.columns if c not in front])


paired_comparisons = with_backend(paired_comparisons_frame, "paired_comparisons")


_EMPTY: dict[str, Any] = {
    "run_a": pl.Utf8,
    "run_b": pl.Utf8,
    "provider_a": pl.Utf8,
    "provider_b": pl.Utf8,
    "question_type_norm": pl.Utf8,
    "p_value": pl.Float64,
}


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, not {method!r}")


def _compare(
    outcomes: pl.DataFrame,
    settings: dict[str, RunSpec],
    run_a: str,
    run_b: str,
    judge: str | None,
    require: bool,
    *,
    per_type: bool = True,
    method: PairedMethod = "clustered",
    empty_ok: bool = False,
) -> PairedComparison:
    """Run a against run b; ``per_type=False`` leaves ``by_type`` empty (the overall figures only).
    ``empty_ok``: two runs that share no question both scored get no test (and a warning saying so)
    instead of ``ComparisonError``."""
    known = outcomes["run_id"].unique(maintain_order=True).to_list()
    for rid in (run_a, run_b):
        if rid not in known:
            from bench_nb.registry import did_you_mean

            raise ComparisonError(f"run {rid!r} is not in the data{did_you_mean(rid, known)}; runs: {known}")
    if run_a == run_b:
        raise ComparisonError(f"cannot compare run {run_a!r} with itself")
    a = outcomes.filter(pl.col("run_id") == run_a)
    b = outcomes.filter(pl.col("run_id") == run_b)
    warning = _differences(_or_bare(settings, run_a, a), _or_bare(settings, run_b, b))
    if warning and require:
        raise ComparisonError(f"runs {run_a!r} and {run_b!r} are not like for like: {warning}")
    pairs = a.select(
        "question_id", "question_type_norm", "haystack_id", correct_a="correct", score_a="score"
    ).join(
        b.select("question_id", correct_b="correct", score_b="score"),
        on="question_id",
        how="inner",
        maintain_order="left",
    )
    unscored_a = pairs.filter(pl.col("correct_a").is_null() & pl.col("correct_b").is_not_null()).height
    unscored_b = pairs.filter(pl.col("correct_b").is_null() & pl.col("correct_a").is_not_null()).height
    pairs = pairs.drop_nulls(["correct_a", "correct_b"])
    union = pl.concat([a["question_id"], b["question_id"]]).n_unique()
    if pairs.is_empty():
        shared = a.join(b, on="question_id", how="semi").height
        why = (
            f"runs {run_a!r} and {run_b!r} share no question both scored ({a.height} and {b.height} "
            f"questions, {shared} in common): there is nothing to compare"
        )
        if not empty_ok:
            raise ComparisonError(why)
        warning = "; ".join(filter(None, [why, warning]))
    graded = bool(a["graded"].any()) or bool(b["graded"].any())
    if graded and method == "independent":
        raise ValueError(
            f"method='independent' (McNemar's test) needs 0/1 scores, and runs {run_a!r} and {run_b!r} are "
            "graded: use method='clustered' (the default) or 'signed-rank'"
        )
    by_type_df = pl.DataFrame()
    if per_type and len(pairs):
        by_type = [
            {"question_type_norm": t} | _stats(part, method)
            for (t,), part in pairs.group_by("question_type_norm", maintain_order=True)
        ]
        by_type_df = pl.DataFrame(by_type, infer_schema_length=None)
    like_for_like = not warning
    if method != "independent":
        caution = _test_warning(pairs, unscored_a, unscored_b, run_a, run_b)
        warning = "; ".join(filter(None, [warning, caution]))
    return PairedComparison(
        run_a=run_a,
        run_b=run_b,
        provider_a=_first(a, "provider"),
        provider_b=_first(b, "provider"),
        judge=judge,
        n_dropped=union - len(pairs),
        method=method,
        like_for_like=like_for_like,
        warning=warning,
        by_type_frame=by_type_df,
        **_stats(pairs, method),
    )


def _first(df: pl.DataFrame, col: str) -> str:
    return str(df[col][0]) if len(df) and col in df.columns and df[col][0] is not None else ""


def _or_bare(settings: dict[str, RunSpec], run_id: str, rows: pl.DataFrame) -> RunSpec:
    """The run's settings, or only its question set when nothing else is known."""
    if run_id in settings:
        return settings[run_id]
    ids = tuple(rows["question_id"].to_list())
    return RunSpec(run_id=run_id, question_ids=ids)


def _differences(sa: RunSpec, sb: RunSpec) -> str:
    """What makes two runs not like for like: their question sets (counted), then ``settings_differences``
    on what both record."""
    notes: list[str] = []
    qa, qb = set(sa.question_ids or ()), set(sb.question_ids or ())
    if qa != qb:
        notes.append(
            f"question sets differ ({len(qa - qb)} only in {sa.run_id}, {len(qb - qa)} only in {sb.run_id})"
        )
    notes += settings_differences([sa, sb], missing_differs=False, skip=("question_set",))
    return "; ".join(notes)


def _outcomes(data: Any, judge: str | None) -> tuple[pl.DataFrame, dict[str, RunSpec]]:
    """(run_id, provider, question_id, question_type_norm, correct) rows, and each run's settings."""
    frame = as_polars(data)
    if frame is not None:
        if "primary" in frame.columns:  # a judgments frame: a run's questions are those any judge graded
            sets = {
                str(k[0]): tuple(p["question_id"].unique(maintain_order=True).to_list())
                for k, p in frame.partition_by("run_id", as_dict=True).items()
            }
            bare = {rid: RunSpec(run_id=rid, question_ids=qs) for rid, qs in sets.items()}
            return _from_judgments(frame, judge), bare
        if judge is not None:
            raise ValueError("judge= needs a judgments frame (judgments_df) or run directories")
        return _from_questions(frame), _frame_settings(frame)
    runset: Any
    if isinstance(data, StoredRuns):  # a run store: the settings recorded at export
        runset = data
        settings = {s.run_id: s for s in data.recorded_settings()}
    else:
        runset = load_runs(data)
        settings = {run.run_id: read_spec(run) for run in runset}
    questions = questions_frame(runset)
    if judge is None:
        return _from_questions(questions), settings
    settings = {  # one judge grades both runs
        rid: msgspec.structs.replace(s, primary_judge=judge) for rid, s in settings.items()
    }
    judgments = judgments_frame(runset)
    if judgments["haystack_id"].null_count():  # a run store exported before judgments carried haystacks
        known = questions.select("run_id", "question_id", _hay="haystack_id")
        judgments = judgments.join(known, on=["run_id", "question_id"], how="left", maintain_order="left")
        judgments = judgments.with_columns(haystack_id=pl.coalesce("haystack_id", "_hay")).drop("_hay")
    return _from_judgments(judgments, judge), settings


def _from_questions(q: pl.DataFrame) -> pl.DataFrame:
    q = with_verdicts(q)  # the one rule: score and correct are null for a question without a verdict
    return q.select(
        "run_id",
        pl.col("provider") if "provider" in q.columns else pl.lit("").alias("provider"),
        "question_id",
        pl.col("question_type_norm").fill_null("other"),
        "correct",
        "score",
        graded=pl.col("graded").fill_null(False) if "graded" in q.columns else pl.lit(False),
        haystack_id=pl.col("haystack_id").fill_null(pl.col("question_id"))
        if "haystack_id" in q.columns
        else pl.col("question_id"),
    )


def _from_judgments(j: pl.DataFrame, judge: str | None) -> pl.DataFrame:
    j = with_verdicts(j.drop("correct", strict=False))  # the one rule for null, NaN and unscored
    known_judges(j, judge, error=ComparisonError)  # a typo: the nearest judge and those present
    rows = j.filter(pl.col("primary")) if judge is None else j.filter(pl.col("judge") == judge)
    rows = collapse_replicates(rows)  # a judge's replicates: their majority
    if rows.is_empty():
        raise ComparisonError(
            f"no verdict of judge {judge!r} in the data" if judge else "no primary verdicts"
        )
    fractional = pl.col("score").is_not_null() & ~pl.col("score").is_in([0.0, 1.0])
    return rows.select(
        "run_id",
        "provider",
        "question_id",
        pl.col("question_type_norm").fill_null("other"),
        correct=pl.when(pl.col("unscored")).then(None).otherwise(pl.col("score") == 1),
        score=pl.when(pl.col("unscored")).then(None).otherwise(pl.col("score").cast(pl.Float64)),
        graded=fractional.any().over("run_id"),
        haystack_id=pl.coalesce(pl.col("haystack_id"), pl.col("question_id"))
        if "haystack_id" in rows.columns
        else pl.col("question_id"),  # a frame without haystacks: each question its own cluster
    )


def _frame_settings(q: pl.DataFrame) -> dict[str, RunSpec]:
    """What a questions frame tells of each run's settings (a run directory tells more: ``read_spec``)."""
    out: dict[str, RunSpec] = {}
    for (rid,), part in q.group_by("run_id", maintain_order=True):

        def first(col: str, part: pl.DataFrame = part) -> Any:
            return part[col][0] if col in part.columns else None

        ids = tuple(part["question_id"].unique(maintain_order=True).to_list())
        k = part["k"].max() if "k" in part.columns and part["k"].drop_nulls().len() else None
        out[str(rid)] = RunSpec(
            run_id=str(rid),
            provider=str(first("provider") or ""),
            benchmark=first("benchmark"),
            question_ids=ids,
            k=k,  # type: ignore[arg-type]
            answerer=first("answering_model"),
            primary_judge=first("judge"),
            custom_prompt="custom_prompt" in part.columns and bool(part["custom_prompt"].any()),
        )
    return out
