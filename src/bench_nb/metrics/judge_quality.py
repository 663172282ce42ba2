"""Can the judge be believed? Its false-positive rate on known-wrong answers (``judge_audit``), its error rates
against human labels (``judge_vs_human``), accuracy corrected for those errors (``corrected_accuracy``,
``ppi_accuracy``), how accuracy moves with the judge prompt (``prompt_sweep``) and with answer length
(``length_bias``, ``answer_lengths``). Every number is defined in docs/statistics.md.

Accept rates and rates of the audit tables are percent (as the issue's public names ask); the functions that
take or return proportions say so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from bench_nb.frames.backend import as_polars, with_backend
from bench_nb.frames.judgments import judgments_frame, known_judges
from bench_nb.frames.questions import QuestionsLike, StoredFrames, as_questions, questions_frame
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.judges.labels import HUMAN, read_labels
from bench_nb.metrics.accuracy import accuracy_frame
from bench_nb.metrics.agreement import cohen_kappa, gwet_ac1, rating_counts
from bench_nb.metrics.clustered import clustered_interval, clustered_n, grouped_cluster_sums, question_keys
from bench_nb.metrics.intervals import normal_z, student_t_quantile, wilson_proportion_interval
from bench_nb.metrics.ordered import means_by, sums_by
from bench_nb.runformat.load import Run, RunSet, load_runs
from bench_nb.text import HtmlFields

if TYPE_CHECKING:
    from bench_nb.judges.audit import Kind  # an annotation only: the audit's generators import the providers

# --- Rogan-Gladen -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CorrectedAccuracy(HtmlFields):
    """Accuracy corrected for a judge's errors (proportions in [0, 1]).

    ``estimate`` is the Rogan-Gladen estimate clipped to [0, 1] (``clipped`` says when it was);
    ``ci_low``/``ci_high`` its interval (Lang & Reiczigel's adjusted delta method), which carries the
    uncertainty of the observed accuracy (with ``n``) and of the sensitivity and specificity (with
    ``n_labels``); ``source`` says where the error rates came from (``human labels``, ``leniency audit`` or
    ``given``).
    """

    estimate: float
    ci_low: float
    ci_high: float
    observed: float
    sensitivity: float
    specificity: float
    n: float | None
    n_labels: tuple[float, float] | None
    clipped: bool
    source: str = "given"

    def as_dict(self) -> dict[str, Any]:
        """The fields but the sample sizes, as a dict (the row of a corrected-accuracy table)."""
        return {k: v for k, v in asdict(self).items() if k not in ("n", "n_labels")}


def corrected_accuracy(
    observed: float,
    sensitivity: float,
    specificity: float,
    n_labels: int | tuple[float, float] | None = None,
    *,
    n: float | None = None,
    confidence: float = 0.95,
    source: str = "given",
) -> CorrectedAccuracy:
    """The Rogan-Gladen estimate of the true accuracy from a judge's observed accuracy, with its interval.

    π̂ = (p + Sp − 1) / (Se + Sp − 1), clipped to [0, 1]. The interval is Lang & Reiczigel's (2014)
    adjusted delta-method interval, which holds where the plain one collapses (an estimated sensitivity or
    specificity of exactly 1 has no variance): each proportion whose sample size is known gets pseudo-counts
    (p: z²/2 correct and z²/2 wrong over n + z²; Se and Sp: one of each over n₁ + 2, n₀ + 2), the adjusted
    estimate π̃ and Var(π̃) = [p̃(1−p̃)/ñ + π̃²·S̃e(1−S̃e)/ñ₁ + (1−π̃)²·S̃p(1−S̃p)/ñ₀] / (S̃e + S̃p − 1)² come
    from them, and the interval is π̃ + d ± z·√Var, d = 2z²·[π̃·S̃e(1−S̃e)/ñ₁ − (1−π̃)·S̃p(1−S̃p)/ñ₀], clipped
    to [0, 1]. A term whose size is not given is left out (that quantity is taken as known). Proportions in,
    proportions out. Definitions: docs/statistics.md ("Corrected accuracy").

    Args:
        observed: the share of answers the judge called correct (p).
        sensitivity: P(judge says correct | truly correct).
        specificity: P(judge says incorrect | truly incorrect).
        n_labels: the labelled answers behind sensitivity and specificity: ``(n₁, n₀)`` = (truly correct,
            truly incorrect), or their total, split as n·π̂ and n·(1 − π̂) (a random labelled sample). None:
            the error rates are taken as known.
        n: the answers behind ``observed``; when they are clustered (questions of one haystack succeed and
            fail together), the independent answers they are worth: ``metrics.clustered.clustered_n``, n /
            the design effect with Korn & Graubard's degrees-of-freedom factor, which
            ``corrected_accuracy_table`` passes. None: ``observed`` is taken as known.
        confidence: the interval's level.
        source: where the error rates came from, carried into the result.

    Raises:
        ValueError: a proportion outside [0, 1], or Se + Sp ≤ 1 (the judge is no better than a coin, and
            its verdicts say nothing about the true accuracy).
    """
    for name, value in (("observed", observed), ("sensitivity", sensitivity), ("specificity", specificity)):
        if not 0 <= value <= 1:
            raise ValueError(f"{name} must be a proportion in [0, 1], got {value!r}")
    youden = sensitivity + specificity - 1
    if youden <= 0:
        raise ValueError(
            f"sensitivity + specificity = {sensitivity + specificity:.3f} <= 1: the judge is no better than "
            "chance, so its accuracy cannot be corrected"
        )
    raw = (observed + specificity - 1) / youden
    est = min(1.0, max(0.0, raw))
    if isinstance(n_labels, tuple):
        n1, n0 = float(n_labels[0]), float(n_labels[1])
    elif n_labels is not None:
        n1, n0 = n_labels * est, n_labels * (1 - est)
    low, high = _adjusted_interval(
        observed, sensitivity, specificity, n, None if n_labels is None else (n1, n0), normal_z(confidence)
    )
    return CorrectedAccuracy(
        estimate=est,
        ci_low=low,
        ci_high=high,
        observed=observed,
        sensitivity=sensitivity,
        specificity=specificity,
        n=n,
        n_labels=None if n_labels is None else (n1, n0),
        clipped=raw != est,
        source=source,
    )


def _adjusted_interval(
    observed: float,
    sensitivity: float,
    specificity: float,
    n: float | None,
    n_labels: tuple[float, float] | None,
    z: float,
) -> tuple[float, float]:
    """Lang & Reiczigel's (2014) adjusted interval of the Rogan-Gladen estimate (``corrected_accuracy``):
    pseudo-counts on each proportion whose size is known, the delta method at the adjusted values, and a
    shift d toward the side the sensitivity's and specificity's errors push. A size of 0 or None leaves its
    proportion as given and its term out. [0, 1] when the adjusted Youden index is not positive."""

    def adjusted(share: float, size: float | None, plus: float) -> tuple[float, float]:
        """The proportion with ``plus``/2 pseudo-successes and failures, and ``size`` + plus (0: known)."""
        if not size:
            return share, 0.0
        return (share * size + plus / 2) / (size + plus), size + plus

    p, n_p = adjusted(observed, n, z * z)
    n1, n0 = n_labels if n_labels is not None else (None, None)
    se, n_se = adjusted(sensitivity, n1, 2.0)
    sp, n_sp = adjusted(specificity, n0, 2.0)
    youden = se + sp - 1
    if youden <= 0:
        return (0.0, 1.0)
    est = (p + sp - 1) / youden
    var_p = p * (1 - p) / n_p if n_p else 0.0
    var_se = se * (1 - se) / n_se if n_se else 0.0
    var_sp = sp * (1 - sp) / n_sp if n_sp else 0.0
    half = z * math.sqrt(var_p + est * est * var_se + (1 - est) ** 2 * var_sp) / youden
    centre = est + 2 * z * z * (est * var_se - (1 - est) * var_sp)
    return (min(1.0, max(0.0, centre - half)), min(1.0, max(0.0, centre + half)))


@dataclass(frozen=True)
class PPIEstimate(HtmlFields):
    """A prediction-powered estimate of the true accuracy (proportions)."""

    estimate: float
    ci_low: float
    ci_high: float
    n: int  # answers the judge scored
    n_labels: int  # of those, labelled by a person


def ppi_accuracy(
    judge_scores: Sequence[int], labelled: Sequence[tuple[int, int]], *, confidence: float = 0.95
) -> PPIEstimate:
    """Prediction-powered inference (Angelopoulos et al. 2023) for the mean of the true labels.

    θ̂ = mean(f over all N answers) − mean(f − y over the n labelled ones), with
    Var = var(f)/N + var(f − y)/n (sample variances); the interval is θ̂ ± z·√Var, clipped to [0, 1].
    Valid when the labelled answers are a uniform random sample of the answers.

    Args:
        judge_scores: the judge's 0/1 verdict on every answer (f).
        labelled: (judge verdict f, human label y) for each labelled answer.
        confidence: the interval's level.
    """
    big_n, n = len(judge_scores), len(labelled)
    if big_n < 2 or n < 2:
        raise ValueError(f"prediction-powered inference needs >= 2 answers and >= 2 labels, got {big_n}, {n}")
    f_mean = sum(judge_scores) / big_n
    f_var = sum((f - f_mean) ** 2 for f in judge_scores) / (big_n - 1)
    rect = [f - y for f, y in labelled]
    r_mean = sum(rect) / n
    r_var = sum((r - r_mean) ** 2 for r in rect) / (n - 1)
    est = f_mean - r_mean
    half = normal_z(confidence) * math.sqrt(f_var / big_n + r_var / n)
    return PPIEstimate(
        estimate=min(1.0, max(0.0, est)),
        ci_low=max(0.0, est - half),
        ci_high=min(1.0, est + half),
        n=big_n,
        n_labels=n,
    )


def _verdicts(judgments: pl.DataFrame) -> pl.DataFrame:
    """A judgments frame under the one rule for null, NaN and unscored verdicts (``frames.verdicts``)."""
    return with_verdicts(judgments.drop("status", "correct", strict=False))


# --- the leniency audit -----------------------------------------------------------------------------------


def audit_info(run: Run) -> dict[str, Any]:
    """A run's ``benchNb.audit`` record (``kind``, ``generator``, ``sourceRunId``...), or ``{}``."""
    extra = (run.view.benchNb or {}) if run.view is not None else {}
    info = extra.get("audit")
    return dict(info) if isinstance(info, dict) else {}


def _audit_kind(run: Run) -> Kind:
    """``correct`` for a known-correct audit set, else ``wrong`` (imported wrong-answer sets carry no mark)."""
    return "correct" if audit_info(run).get("kind") == "correct" else "wrong"


def _item_rates(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per (keys..., question): the share of the judge's scored verdicts (over replicates) that accept."""
    scored = _verdicts(frame).filter(pl.col("score").is_not_null())
    return means_by(scored, [*keys, "question_id"], ["score"]).rename({"score": "rate"})


def _rate_table(items: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """n (questions), the mean per-question rate in percent, its Wilson interval over the n questions."""
    agg = sums_by(items, keys, ["rate"]).select(*keys, n="c", p=pl.col("rate") / pl.col("c"))
    cis = [wilson_proportion_interval(p, n) for p, n in agg.select("p", "n").iter_rows()]
    return agg.select(
        *(pl.col(k).cast(pl.Utf8) for k in keys),
        "n",
        accept_rate=100 * pl.col("p").cast(pl.Float64),
        ci_low=100 * pl.Series([lo for lo, _ in cis], dtype=pl.Float64),
        ci_high=100 * pl.Series([hi for _, hi in cis], dtype=pl.Float64),
    )


def judge_audit_frame(
    runs: Any, judge: str | Sequence[str] | None = None, by: Literal["question_type"] | None = None
) -> pl.DataFrame:
    """How often a judge accepts answers known to be wrong: its false-positive rate, with intervals.

    For runs whose answers are known to be wrong (an imported wrong-answer set such as the LoCoMo audit's
    stress test, or one written by ``bench-nb judge-audit``); runs marked known-correct (the paraphrase sets)
    are left out (see ``judge_error_rates``). A question's acceptance is the share of the judge's scored
    verdicts on it that say correct (its replicates averaged, so that with every replicate scoring every
    question ``accept_rate`` is the mean of the replicates' accept rates); unscored verdicts are left out.

    Args:
        runs: anything ``load_runs`` takes, or a ``RunSet``.
        judge: one judge or several (default: every judge in the runs).
        by: ``"question_type"`` for one row per normalised question type.

    Returns columns ``run_id``, ``judge``, ``question_type`` (when ``by``), ``n`` (questions scored),
    ``accept_rate`` (percent), ``ci_low``, ``ci_high`` (Wilson 95% over the n questions, percent).
    """
    if by not in (None, "question_type"):
        raise ValueError(f"by must be None or 'question_type', not {by!r}")
    frame, runset = _judgments_and_runs(runs)
    chosen = known_judges(frame, judge)
    wrong = [r.run_id for r in runset if _audit_kind(r) == "wrong"]
    frame = frame.filter(pl.col("run_id").is_in(wrong))
    if chosen is not None:
        frame = frame.filter(pl.col("judge").is_in(chosen))
    frame = frame.with_columns(question_type=pl.col("question_type_norm").fill_null("other"))
    keys = ["run_id", "judge"] + (["question_type"] if by else [])
    return _rate_table(_item_rates(frame, keys), keys)


judge_audit = with_backend(judge_audit_frame, "judge_audit")


def judge_error_rates_frame(
    runs: Any, *, judge: str | None = None, by: Literal["question_type"] | None = None
) -> pl.DataFrame:
    """Per judge and kind of audit set: the accept rate on known-wrong sets (false-positive rate) and on
    known-correct sets (sensitivity; its complement the false-negative rate), percent, Wilson intervals.

    The sets of several runs are pooled by question: the generated answers depend on the question and the
    seed only, so the same question audited beside two runs counts once (its verdicts averaged).

    Columns: ``judge, generator, kind`` (``wrong`` / ``correct``), ``runs`` (audit runs pooled), ``n``
    (questions), ``accept_rate, ci_low, ci_high, error_rate`` (false-positive rate for a wrong set,
    false-negative rate for a correct one; null when n is 0), ``unreadable`` (verdicts without a score: a
    judge none of whose verdicts could be read has n = 0 and keeps its row); ``question_type`` after
    ``kind`` with ``by="question_type"``.
    """
    if by not in (None, "question_type"):
        raise ValueError(f"by must be None or 'question_type', not {by!r}")
    frame, runset = _judgments_and_runs(runs)
    if judge is not None:
        frame = frame.filter(pl.col("judge") == judge)
    meta = pl.DataFrame(
        {
            "run_id": [r.run_id for r in runset],
            "generator": [str(audit_info(r).get("generator") or "imported") for r in runset],
            "kind": [_audit_kind(r) for r in runset],
        },
        schema={"run_id": pl.Utf8, "generator": pl.Utf8, "kind": pl.Utf8},
    )
    frame = frame.join(meta, on="run_id", how="inner", maintain_order="left").with_columns(
        question_type=pl.col("question_type_norm").fill_null("other")
    )
    keys = ["judge", "generator", "kind"] + (["question_type"] if by else [])
    counts = (
        _verdicts(frame)
        .group_by(keys)
        .agg(runs=pl.col("run_id").n_unique(), unreadable=pl.col("unscored").sum())
    )
    # a judge none of whose verdicts could be read keeps its row: n = 0, no rate
    table = counts.join(_rate_table(_item_rates(frame, keys), keys), on=keys, how="left")
    return table.select(
        *keys,
        runs=pl.col("runs").cast(pl.Int64),
        n=pl.col("n").fill_null(0),
        accept_rate="accept_rate",
        ci_low="ci_low",
        ci_high="ci_high",
        error_rate=pl.when(pl.col("kind") == "wrong")
        .then(pl.col("accept_rate"))
        .otherwise(100 - pl.col("accept_rate")),
        unreadable=pl.col("unreadable").cast(pl.Int64),
    ).sort("judge", "kind", "generator", *keys[3:])


judge_error_rates = with_backend(judge_error_rates_frame, "judge_error_rates")


def audit_correction(
    observed: float,
    n: float | None,
    rates: Any,
    judge: str,
    *,
    wrong: Sequence[str] = ("specific",),
    correct: Sequence[str] = ("paraphrase",),
) -> CorrectedAccuracy | None:
    """Rogan-Gladen correction from a leniency audit's rates (``judge_error_rates`` output) instead of human
    labels: specificity = 1 − the accept rate on the ``wrong`` sets (default the specific-but-wrong one),
    sensitivity = the accept rate on the ``correct`` sets, pooled over their questions; the sets' sizes are
    the label counts. None when the audit lacks either side for this judge, or the judge is no better than
    chance on it. It assumes the run's wrong answers are as hard to catch as the audit's."""
    table = as_polars(rates)
    if table is None:
        raise ValueError("rates must be judge_error_rates output (a frame)")
    mine = table.filter((pl.col("judge") == judge) & (pl.col("n") > 0))
    w = mine.filter((pl.col("kind") == "wrong") & pl.col("generator").is_in(list(wrong)))
    c = mine.filter((pl.col("kind") == "correct") & pl.col("generator").is_in(list(correct)))
    if w.is_empty() or c.is_empty():
        return None
    n0, n1 = int(w["n"].sum()), int(c["n"].sum())
    sp = 1 - float((w["accept_rate"] * w["n"]).sum()) / 100 / n0
    se = float((c["accept_rate"] * c["n"]).sum()) / 100 / n1
    try:
        return corrected_accuracy(observed, se, sp, (n1, n0), n=n, source="leniency audit")
    except ValueError:
        return None


# --- judges against people --------------------------------------------------------------------------------


def _label_weights(runset: RunSet) -> pl.DataFrame:
    rows: list[tuple[str, str, str, float]] = []
    for run in runset:
        labels, _ = read_labels(run.path)
        rows.extend((run.run_id, qid, judge, lab.weight) for (qid, judge), lab in labels.items())
    return pl.DataFrame(
        rows,
        schema={"run_id": pl.Utf8, "question_id": pl.Utf8, "human": pl.Utf8, "weight": pl.Float64},
        orient="row",
    )


def _weighted_share(hit: list[float], w: list[float]) -> tuple[float, float]:
    """Weighted share of hits and Kish's effective sample size (Σw)²/Σw²; ``(nan, 0)`` with no weight."""
    total = sum(w)
    if total <= 0:
        return (math.nan, 0.0)
    return sum(h * x for h, x in zip(hit, w, strict=True)) / total, total * total / sum(x * x for x in w)


def _judgments_and_runs(data: Any) -> tuple[pl.DataFrame, RunSet]:
    """The judgments frame and its runs: ``data`` is runs, or a judgments frame whose ``run_path`` names them."""
    frame = as_polars(data)
    if frame is None:
        runset = load_runs(data)
        return judgments_frame(runset), runset
    return frame, load_runs(frame["run_path"].unique(maintain_order=True).to_list())


def judge_vs_human_frame(
    data: Any, *, human: str = HUMAN, judges: Sequence[str] | None = None
) -> pl.DataFrame:
    """Each judge against the human labels, on the answers both scored (an unsure label is left out).

    Columns: ``judge, n`` (answers both scored), ``n_correct`` / ``n_incorrect`` (by the human),
    ``sensitivity, sensitivity_low, sensitivity_high, specificity, specificity_low, specificity_high``
    (weighted by the labels' sampling weights, Wilson intervals on Kish's effective sample size; proportions),
    ``agreement, cohen_kappa, gwet_ac1`` (unweighted, on the same answers).
    """
    frame, runset = _judgments_and_runs(data)
    frame = _verdicts(frame)
    weights = _label_weights(runset)
    people = frame.filter((pl.col("judge") == human) & pl.col("score").is_not_null()).select(
        "run_id", "question_id", y=pl.col("score")
    )
    people = people.join(
        weights.filter(pl.col("human") == human).select("run_id", "question_id", "weight"),
        on=["run_id", "question_id"],
        how="left",
        maintain_order="left",
    ).with_columns(pl.col("weight").fill_null(1.0))
    names = [j for j in frame["judge"].unique(maintain_order=True).to_list() if not str(j).startswith(HUMAN)]
    if judges is not None:
        names = [j for j in names if j in judges]
    rows = []
    for j in names:
        both = (
            frame.filter((pl.col("judge") == j) & pl.col("score").is_not_null())
            .select("run_id", "question_id", f=pl.col("score"))
            .join(people, on=["run_id", "question_id"], how="inner", maintain_order="left")
        )
        f, y = both["f"].to_list(), both["y"].to_list()
        pos, neg = both.filter(pl.col("y") == 1), both.filter(pl.col("y") == 0)
        se, se_n = _weighted_share(pos["f"].to_list(), pos["weight"].to_list())
        sp, sp_n = _weighted_share([1 - v for v in neg["f"].to_list()], neg["weight"].to_list())
        se_lo, se_hi = wilson_proportion_interval(se, se_n)
        sp_lo, sp_hi = wilson_proportion_interval(sp, sp_n)
        n = len(f)
        rows.append(
            {
                "judge": j,
                "n": n,
                "n_correct": pos.height,
                "n_incorrect": neg.height,
                "sensitivity": se,
                "sensitivity_low": se_lo,
                "sensitivity_high": se_hi,
                "specificity": sp,
                "specificity_low": sp_lo,
                "specificity_high": sp_hi,
                "sensitivity_n_eff": se_n,
                "specificity_n_eff": sp_n,
                "agreement": sum(a == b for a, b in zip(f, y, strict=True)) / n if n else math.nan,
                "cohen_kappa": cohen_kappa(f, y) if n else math.nan,
                "gwet_ac1": gwet_ac1(rating_counts([[a, b] for a, b in zip(f, y, strict=True)])),
            }
        )
    schema = {"judge": pl.Utf8, "n": pl.Int64, "n_correct": pl.Int64, "n_incorrect": pl.Int64}
    schema |= {
        c: pl.Float64
        for c in (
            "sensitivity",
            "sensitivity_low",
            "sensitivity_high",
            "specificity",
            "specificity_low",
            "specificity_high",
            "sensitivity_n_eff",
            "specificity_n_eff",
            "agreement",
            "cohen_kappa",
            "gwet_ac1",
        )
    }
    return pl.DataFrame(rows, schema=schema)


judge_vs_human = with_backend(judge_vs_human_frame, "judge_vs_human")


def corrected_accuracy_table_frame(
    data: Any, *, human: str = HUMAN, audit: Any = None, judges: Sequence[str] | None = None
) -> pl.DataFrame:
    """Per run and judge: raw accuracy beside the Rogan-Gladen corrected one, from the human labels when
    the judge has been labelled against (``source = "human labels"``), else from a leniency audit's rates
    (``audit``: audit runs or ``judge_error_rates`` output; ``source = "leniency audit"``), else none.

    Columns (percent): ``run_id, provider, judge, scored, accuracy, ci_low, ci_high, corrected,
    corrected_low, corrected_high, source``. ``ci_low``/``ci_high`` are the raw accuracy's ``clustered``
    interval over the haystacks (Wilson's with fewer than 2); the correction's interval takes the raw
    accuracy as worth ``clustered_n`` independent answers (n / the CR2 design effect, Korn-Graubard's df
    factor): the answers of one haystack succeed and fail together.
    """
    runs: Any = data if isinstance(data, StoredFrames) else load_runs(data)  # a run store: its frames
    frame = judgments_frame(runs)
    versus = judge_vs_human_frame(frame, human=human)
    rates = None if audit is None else as_polars(audit)
    if audit is not None and rates is None:  # audit runs: their rates
        rates = judge_error_rates_frame(audit)
    judged = frame.filter(pl.col("score").is_not_null() & ~pl.col("judge").str.starts_with(HUMAN))
    acc = judged.group_by("run_id", "judge", maintain_order=True).agg(
        pl.col("provider").first(), scored=pl.len()
    )
    acc = acc.join(
        means_by(judged, ["run_id", "judge"], ["score"]), on=["run_id", "judge"], maintain_order="left"
    )
    if judges is not None:
        acc = acc.filter(pl.col("judge").is_in(list(judges)))
    # each run and judge's verdicts per haystack: the clustering its intervals respect (a question with no
    # haystack is its own)
    keyed = judged.select(
        *question_keys(), pl.col("judge").cast(pl.Utf8), value=pl.col("score").cast(pl.Float64)
    )
    clusters = dict(grouped_cluster_sums(keyed, ["run_id", "judge"]))
    by_judge = {r["judge"]: r for r in versus.iter_rows(named=True)}
    rows = []
    for r in acc.iter_rows(named=True):
        n, p = int(r["scored"]), float(r["score"])
        cs = clusters[(r["run_id"], r["judge"])]
        # the raw accuracy's clustered interval, and the questions it is worth to the correction's (n*)
        lo, hi = wilson_proportion_interval(p, n)
        if cs.clusters >= 2:
            got = clustered_interval(cs)
            lo, hi = (lo, hi) if math.isnan(got.low) else (got.low, got.high)
        effective = clustered_n(cs)
        fix: CorrectedAccuracy | None = None
        h = by_judge.get(r["judge"])
        if h is not None and h["n_correct"] and h["n_incorrect"]:
            try:
                fix = corrected_accuracy(
                    p,
                    h["sensitivity"],
                    h["specificity"],
                    (h["sensitivity_n_eff"], h["specificity_n_eff"]),
                    n=effective,
                    source="human labels",
                )
            except ValueError:
                fix = None
        source = None
        if fix is None and rates is not None:
            fix = audit_correction(p, effective, rates, r["judge"])
            if fix is None and r["judge"] in set(rates["judge"]):
                source = "leniency audit: no correction (sensitivity + specificity <= 1, or a side missing)"
        rows.append(
            {
                "run_id": r["run_id"],
                "provider": r["provider"],
                "judge": r["judge"],
                "scored": n,
                "accuracy": 100 * p,
                "ci_low": 100 * lo,
                "ci_high": 100 * hi,
                "corrected": None if fix is None else 100 * fix.estimate,
                "corrected_low": None if fix is None else 100 * fix.ci_low,
                "corrected_high": None if fix is None else 100 * fix.ci_high,
                "source": source if fix is None else fix.source,
            }
        )
    schema = {"run_id": pl.Utf8, "provider": pl.Utf8, "judge": pl.Utf8, "scored": pl.Int64}
    schema |= {
        c: pl.Float64
        for c in ("accuracy", "ci_low", "ci_high", "corrected", "corrected_low", "corrected_high")
    }
    return pl.DataFrame(rows, schema=schema | {"source": pl.Utf8})


corrected_accuracy_table = with_backend(corrected_accuracy_table_frame, "corrected_accuracy_table")


# --- the prompt sweep -------------------------------------------------------------------------------------

_PROMPTED = re.compile(r"^(?P<model>.+)\[(?P<prompt>lenient|standard|strict)\]$")


def split_judge_name(judge: str) -> tuple[str, str]:
    """``("gpt-4o-mini", "strict")`` for ``gpt-4o-mini[strict]``; a plain name is the standard prompt."""
    m = _PROMPTED.match(judge)
    return (m.group("model"), m.group("prompt")) if m else (judge, "standard")


def prompt_sweep_frame(data: Any) -> pl.DataFrame:
    """How each run's accuracy and the runs' ranking move with the judge prompt.

    One row per (run, judge model, prompt) for judge models graded with more than one prompt (judges named
    ``model[lenient]``, ``model``, ``model[strict]``; see ``bench-nb rejudge --judge-prompts``). Columns:
    ``run_id, provider, model, judge_prompt, judge, scored, accuracy, ci_low, ci_high`` (percent, Wilson),
    ``change`` (points against the standard prompt), ``rank`` (1 = best among the runs under that judge).
    """
    frame = as_polars(data)
    if frame is None:
        frame = judgments_frame(load_runs(data))
    frame = _verdicts(frame).filter(pl.col("score").is_not_null() & ~pl.col("judge").str.starts_with(HUMAN))
    parts = [split_judge_name(j) for j in frame["judge"].to_list()]
    frame = frame.with_columns(
        model=pl.Series([m for m, _ in parts], dtype=pl.Utf8),
        judge_prompt=pl.Series([p for _, p in parts], dtype=pl.Utf8),
    )
    swept = frame.group_by("model").agg(pl.col("judge_prompt").n_unique().alias("k")).filter(pl.col("k") > 1)
    frame = frame.join(swept.select("model"), on="model", how="semi")
    # each (run, prompt)'s accuracy and Wilson interval as metrics.accuracy has them, in percent
    keys = ["run_id", "provider", "model", "judge_prompt", "judge"]
    verdicts = frame.with_columns(
        pl.col("provider").cast(pl.Utf8), status=pl.lit("evaluated"), graded=pl.lit(False)
    )
    table = accuracy_frame(verdicts, by=keys).with_columns(pl.col("accuracy", "ci_low", "ci_high") * 100)
    standard = table.filter(pl.col("judge_prompt") == "standard").select(
        "run_id", "model", std=pl.col("accuracy")
    )
    return (
        table.join(standard, on=["run_id", "model"], how="left", maintain_order="left")
        .with_columns(
            change=pl.col("accuracy") - pl.col("std"),
            rank=pl.col("accuracy").rank("min", descending=True).over("model", "judge_prompt").cast(pl.Int64),
        )
        .sort(
            "model",
            pl.col("judge_prompt").replace_strict({"lenient": 0, "standard": 1, "strict": 2}, default=3),
            "rank",
            "run_id",
        )
        .drop("correct", "unscored", "measure", "std")  # accuracy_frame's columns the sweep does not show
    )


prompt_sweep = with_backend(prompt_sweep_frame, "prompt_sweep")


def ranking_moves(sweep: Any) -> bool | None:
    """Whether the runs' order differs between two prompts of one judge model (None with < 2 runs)."""
    table = as_polars(sweep)
    assert table is not None
    moved: bool | None = None
    for (_model,), part in table.group_by(["model"]):
        orders = {
            p: tuple(g.sort("accuracy", "run_id", descending=[True, False])["run_id"].to_list())
            for (p,), g in part.group_by(["judge_prompt"])
        }
        if len(next(iter(orders.values()), ())) < 2:
            continue
        moved = bool(moved) or len(set(orders.values())) > 1
    return moved


# --- length bias ------------------------------------------------------------------------------------------


def _words(text: str | None) -> int:
    return len((text or "").split())


def answer_lengths_frame(data: QuestionsLike) -> pl.DataFrame:
    """The answer-length distribution per run, in words: ``run_id, provider, n, mean, p25, median, p75,
    p90, max`` (answered questions only; quantiles by linear interpolation)."""
    q = as_questions(data)
    q = q.filter(pl.col("hypothesis").is_not_null()).with_columns(
        words=pl.col("hypothesis").map_elements(_words, return_dtype=pl.Int64)
    )
    w = pl.col("words")
    return q.group_by("run_id", maintain_order=True).agg(
        pl.col("provider").first(),
        n=pl.len().cast(pl.Int64),
        mean=w.mean(),
        p25=w.quantile(0.25, "linear"),
        median=w.quantile(0.5, "linear"),
        p75=w.quantile(0.75, "linear"),
        p90=w.quantile(0.9, "linear"),
        max=w.max().cast(pl.Float64),
    )


answer_lengths = with_backend(answer_lengths_frame, "answer_lengths")


def ols_slope(
    x: Sequence[float], y: Sequence[float], *, confidence: float = 0.95
) -> tuple[float, float, float, float]:
    """Least-squares slope of y on x with its heteroskedasticity-robust (HC1) standard error and t
    interval on n − 2 degrees of freedom: ``(slope, se, low, high)``; nans when x does not vary."""
    n = len(x)
    if n < 3:
        return (math.nan, math.nan, math.nan, math.nan)
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((a - mx) ** 2 for a in x)
    if sxx == 0:
        return (math.nan, math.nan, math.nan, math.nan)
    slope = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sxx
    intercept = my - slope * mx
    meat = sum(((a - mx) ** 2) * (b - intercept - slope * a) ** 2 for a, b in zip(x, y, strict=True))
    se = math.sqrt(n / (n - 2) * meat) / sxx
    q = student_t_quantile(0.5 + confidence / 2, n - 2)
    return (slope, se, slope - q * se, slope + q * se)


def length_bias_frame(data: Any, *, per_words: int = 10) -> pl.DataFrame:
    """Per judge: how accuracy moves with answer length. A linear probability model, score (0/1) on the
    answer's length in words, over every answer the judge scored (all runs pooled): ``slope`` in accuracy
    points per ``per_words`` words with its HC1-robust 95% interval. Columns: ``judge, n, mean_words,
    accuracy, slope, ci_low, ci_high`` (points, percent)."""
    frame, runset = _judgments_and_runs(data)
    q = questions_frame(runset)
    words = q.select(
        "run_id", "question_id", words=pl.col("hypothesis").map_elements(_words, return_dtype=pl.Int64)
    )
    scored = (
        _verdicts(frame)
        .filter(pl.col("score").is_not_null())
        .join(words, on=["run_id", "question_id"], how="inner", maintain_order="left")
    )
    rows = []
    for (judge,), part in scored.group_by(["judge"], maintain_order=True):
        x = [float(v) / per_words for v in part["words"].to_list()]
        y = [100.0 * v for v in part["score"].to_list()]
        slope, _, lo, hi = ols_slope(x, y)
        rows.append(
            {
                "judge": judge,
                "n": len(x),
                "mean_words": sum(x) * per_words / len(x) if x else math.nan,
                "accuracy": sum(y) / len(y) if y else math.nan,
                "slope": slope,
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    schema = {"judge": pl.Utf8, "n": pl.Int64} | {
        c: pl.Float64 for c in ("mean_words", "accuracy", "slope", "ci_low", "ci_high")
    }
    return pl.DataFrame(rows, schema=schema)


length_bias = with_backend(length_bias_frame, "length_bias")
