"""Judge quality: Rogan-Gladen correction (closed form and seeded coverage), prediction-powered inference,
the leniency audit's accept rates, judges against human labels, the prompt sweep and length bias."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from bench_nb.judges.labels import append_label
from bench_nb.metrics.clustered import ClusterSums, clustered_n
from bench_nb.metrics.intervals import wilson_interval, wilson_proportion_interval
from bench_nb.metrics.judge_quality import (
    corrected_accuracy,
    judge_audit,
    judge_vs_human,
    length_bias,
    ols_slope,
    ppi_accuracy,
    prompt_sweep,
    ranking_moves,
    split_judge_name,
)
from clustered_sim import LOCOMO_SIZES, cluster_rates


def test_rogan_gladen_closed_form() -> None:
    # p = π·Se + (1 − π)(1 − Sp): π = 0.6, Se = 0.9, Sp = 0.8 gives p = 0.62; the correction inverts it.
    fix = corrected_accuracy(0.62, 0.9, 0.8)
    assert fix.estimate == pytest.approx(0.6, abs=1e-12)
    assert fix.ci_low == fix.ci_high == fix.estimate  # nothing uncertain was given
    # Lang & Reiczigel's adjusted delta method, by hand: z²/2 pseudo-counts each way on p, 1 on Se and Sp,
    # [p̃(1-p̃)/ñ + π̃²S̃e(1-S̃e)/ñ1 + (1-π̃)²S̃p(1-S̃p)/ñ0] / J̃², centre π̃ + 2z²(π̃·var_Se − (1-π̃)·var_Sp)
    fix = corrected_accuracy(0.62, 0.9, 0.8, (120, 80), n=1000)
    z = 1.959963984540054
    p, se, sp = (620 + z * z / 2) / (1000 + z * z), (108 + 1) / 122, (64 + 1) / 82
    j = se + sp - 1
    pi = (p + sp - 1) / j
    v_se, v_sp = se * (1 - se) / 122, sp * (1 - sp) / 82
    half = z * math.sqrt(p * (1 - p) / (1000 + z * z) + pi**2 * v_se + (1 - pi) ** 2 * v_sp) / j
    centre = pi + 2 * z * z * (pi * v_se - (1 - pi) * v_sp)
    assert (fix.ci_low, fix.ci_high) == pytest.approx((centre - half, centre + half), rel=1e-9)
    assert fix.estimate == pytest.approx(0.6, abs=1e-12)  # the point estimate stays Rogan-Gladen's
    # a total of labels is split by the estimate
    assert corrected_accuracy(0.62, 0.9, 0.8, 200, n=1000).n_labels == pytest.approx((120, 80))
    # observed above the sensitivity: the estimate passes 1, is clipped and flagged
    assert corrected_accuracy(0.99, 0.97, 0.7).estimate == 1.0 and corrected_accuracy(0.99, 0.97, 0.7).clipped
    with pytest.raises(ValueError, match="no better than chance"):
        corrected_accuracy(0.5, 0.5, 0.5)
    with pytest.raises(ValueError, match="observed must be a proportion"):
        corrected_accuracy(1.5, 0.9, 0.9)


def _simulate(truth: float, se: float, sp: float, n: int, n_labels: int, *, subset: bool, reps: int = 1500):
    """Seeded replications: answers truly right with probability ``truth``, a judge erring at ``se``/``sp``,
    and a labelled sample (a subset of the run's answers, or drawn apart) that estimates Se and Sp."""
    rng = np.random.default_rng(18)
    covered, estimates, raw = 0, [], []
    for _ in range(reps):
        y = rng.random(n) < truth
        f = np.where(y, rng.random(n) < se, rng.random(n) < 1 - sp)
        if subset:
            idx = rng.choice(n, n_labels, replace=False)
            yl, fl = y[idx], f[idx]
        else:
            yl = rng.random(n_labels) < truth
            fl = np.where(yl, rng.random(n_labels) < se, rng.random(n_labels) < 1 - sp)
        fix = corrected_accuracy(
            f.mean(), fl[yl].mean(), 1 - fl[~yl].mean(), (int(yl.sum()), int((~yl).sum())), n=n
        )
        covered += fix.ci_low <= truth <= fix.ci_high
        estimates.append(fix.estimate)
        raw.append(f.mean())
    return covered / reps, float(np.mean(estimates)), float(np.mean(raw))


@pytest.mark.parametrize(
    ("truth", "se", "sp", "n", "n_labels"),
    [(0.6, 0.92, 0.75, 800, 300), (0.35, 0.85, 0.8, 1500, 400), (0.6, 0.92, 0.75, 1540, 150)],
)
def test_rogan_gladen_recovers_the_true_accuracy_with_its_coverage(
    truth: float, se: float, sp: float, n: int, n_labels: int
) -> None:
    """The estimate is unbiased where the raw accuracy is not; with the labels drawn apart from the run the
    95% interval covers the truth in 93-97% of 1,500 replications (binomial noise on 1,500 is ±1.1 points);
    with the labels a subset of the run's own answers (the labelling widget's case) it is conservative."""
    coverage, estimate, raw = _simulate(truth, se, sp, n, n_labels, subset=False)
    assert abs(raw - truth) > 0.02  # the judge's raw accuracy is biased...
    assert estimate == pytest.approx(truth, abs=0.005)  # ...the correction is not
    assert 0.93 <= coverage <= 0.97
    coverage, estimate, _ = _simulate(truth, se, sp, n, n_labels, subset=True)
    assert estimate == pytest.approx(truth, abs=0.005)
    assert 0.95 <= coverage <= 0.995


def test_corrected_accuracy_interval_holds_when_sensitivity_or_specificity_is_estimated_as_one() -> None:
    """Issue 27, item 4: an estimated sensitivity of exactly 1 has no delta-method variance, so the plain
    interval collapsed (half as wide as at 0.975) and covered the truth in 63% of the benchmarks where it
    happens below; the adjusted interval holds there."""
    at_one = corrected_accuracy(0.87, 1.0, 0.9, (40, 40), n=1000)
    near_one = corrected_accuracy(0.87, 0.975, 0.9, (40, 40), n=1000)
    assert at_one.ci_high - at_one.ci_low >= 0.7 * (near_one.ci_high - near_one.ci_low)  # was 0.5
    assert at_one.ci_low <= at_one.estimate <= at_one.ci_high
    # seeded coverage: true accuracy 0.85, Se 0.97, Sp 0.9, 1,000 answers, 40 labelled right and 40 wrong;
    # P(all 40 right answers accepted) = 0.97^40 = 0.30, so about 1,200 of 4,000 benchmarks sit at Se = 1
    rng = np.random.default_rng(27)
    truth, se, sp, n, n1, n0, reps = 0.85, 0.97, 0.9, 1000, 40, 40, 4000
    k1, k0 = rng.binomial(n1, se, reps), rng.binomial(n0, sp, reps)
    k = rng.binomial(n, truth * se + (1 - truth) * (1 - sp), reps)
    at_boundary, elsewhere = [], []
    for a, b, c in zip(k.tolist(), k1.tolist(), k0.tolist(), strict=True):
        fix = corrected_accuracy(a / n, b / n1, c / n0, (n1, n0), n=n)
        (at_boundary if b == n1 or c == n0 else elsewhere).append(fix.ci_low <= truth <= fix.ci_high)
    assert len(at_boundary) > 1000
    assert np.mean(at_boundary) >= 0.95  # the plain delta method: 0.63
    assert 0.93 <= np.mean(at_boundary + elsewhere) <= 0.995


def test_corrected_accuracy_covers_on_a_clustered_run_with_the_clustered_n() -> None:
    """Issue 39, item 4: on a clustered run (LoCoMo's 10 conversations, ICC 0.1) the interval with n = the
    answers covered 62-83% (the audit); with the run's clustering (``clustered_n``: n / the CR2 design effect,
    Korn-Graubard's df factor), as ``corrected_accuracy_table`` passes it, at least 92%."""
    rng = np.random.default_rng(39)
    truth, se, sp, n1, n0, reps = 0.7, 0.92, 0.8, 210, 90, 1000
    counts = LOCOMO_SIZES.astype(float)
    right = rng.binomial(LOCOMO_SIZES, cluster_rates(rng, truth, 0.1, (reps, len(LOCOMO_SIZES))))
    # the judge accepts each right answer with probability se and each wrong one with 1 - sp
    judged = (rng.binomial(right, se) + rng.binomial(LOCOMO_SIZES - right, 1 - sp)).astype(float)
    k1, k0 = rng.binomial(n1, se, reps), rng.binomial(n0, sp, reps)
    clustered = plain = 0
    worth = []
    for s, a, b in zip(judged, k1.tolist(), k0.tolist(), strict=True):
        n, p = counts.sum(), s.sum() / counts.sum()
        cs = ClusterSums(np.arange(len(s)).astype(object), s, counts, n * p * (1 - p))
        worth.append(clustered_n(cs))
        fix = corrected_accuracy(p, a / n1, b / n0, (n1, n0), n=worth[-1])
        clustered += fix.ci_low <= truth <= fix.ci_high
        fix = corrected_accuracy(p, a / n1, b / n0, (n1, n0), n=int(n))
        plain += fix.ci_low <= truth <= fix.ci_high
    assert clustered / reps >= 0.92
    assert plain / reps < 0.85  # the defect: the answers counted as independent
    assert np.median(worth) < counts.sum() / 5  # the design effect at ICC 0.1 and about 150 a haystack


def test_prediction_powered_inference_closed_form_and_coverage() -> None:
    est = ppi_accuracy([1, 1, 0, 1, 0, 1], [(1, 1), (0, 1), (1, 0)])
    f_mean, rect = 4 / 6, [0, -1, 1]
    assert est.estimate == pytest.approx(f_mean - sum(rect) / 3)
    var = np.var([1, 1, 0, 1, 0, 1], ddof=1) / 6 + np.var(rect, ddof=1) / 3
    assert est.ci_high == pytest.approx(min(1.0, est.estimate + 1.959963984540054 * math.sqrt(var)))
    rng = np.random.default_rng(5)
    covered = 0
    for _ in range(800):
        y = rng.random(1000) < 0.55
        f = np.where(y, rng.random(1000) < 0.9, rng.random(1000) < 0.3)
        idx = rng.choice(1000, 150, replace=False)
        e = ppi_accuracy(
            f.astype(int).tolist(), list(zip(f[idx].astype(int), y[idx].astype(int), strict=True))
        )
        covered += e.ci_low <= 0.55 <= e.ci_high
    assert 0.92 <= covered / 800 <= 0.98


def test_wilson_of_a_proportion_matches_the_integer_interval_and_accepts_effective_sizes() -> None:
    for k, n in ((0, 10), (3, 10), (10, 10), (37, 240)):
        assert wilson_proportion_interval(k / n, n) == pytest.approx(wilson_interval(k, n), abs=1e-12)
    lo, hi = wilson_proportion_interval(0.3, 12.5)
    from statsmodels.stats.proportion import proportion_confint

    assert (lo, hi) == pytest.approx(proportion_confint(0.3 * 12.5, 12.5, method="wilson"), abs=1e-12)
    assert all(math.isnan(v) for v in wilson_proportion_interval(0.5, 0))


def test_ols_slope_matches_statsmodels_hc1() -> None:
    from statsmodels.regression.linear_model import OLS

    rng = random.Random(2)
    x = [rng.randint(1, 60) / 10 for _ in range(300)]
    y = [100.0 * (rng.random() < 0.4 + 0.05 * v) for v in x]
    slope, se, lo, hi = ols_slope(x, y)
    fit = OLS(np.array(y), np.column_stack([np.ones(len(x)), x])).fit(cov_type="HC1", use_t=True)
    assert slope == pytest.approx(fit.params[1], rel=1e-9)
    assert se == pytest.approx(fit.bse[1], rel=1e-9)
    assert (lo, hi) == pytest.approx(tuple(fit.conf_int()[1]), rel=1e-9)
    # Six answers: the t quantile on 4 degrees of freedom (2.776), far from the normal's 1.96.
    x6, y6 = x[:6], [0.0, 100.0, 100.0, 0.0, 100.0, 100.0]
    _, _, lo6, hi6 = ols_slope(x6, y6)
    fit6 = OLS(np.array(y6), np.column_stack([np.ones(6), x6])).fit(cov_type="HC1", use_t=True)
    assert (lo6, hi6) == pytest.approx(tuple(fit6.conf_int()[1]), rel=1e-9)
    assert all(math.isnan(v) for v in ols_slope([1, 1, 1, 1], [0, 1, 0, 1]))


ANSWERS = {
    "q1": "Biscuit",
    "q2": "I think it was in Leeds, near the river, in a flat",
    "q3": "March 2024",
    "q4": "cello",
}


def test_judge_audit_averages_replicates_and_groups_by_type(make_run) -> None:
    path = make_run(
        "wrong-set",
        answers=ANSWERS,
        primary="j",
        primary_scores={"q1": 1, "q2": 0, "q3": 0, "q4": 0},
        bench_nb={},
        verdicts={"lenient": {"q1": 1, "q2": 1, "q3": 0, "q4": None}},
    )
    table = judge_audit([path], backend="polars")
    rows = {r["judge"]: r for r in table.iter_rows(named=True)}
    assert table.columns == ["run_id", "judge", "n", "accept_rate", "ci_low", "ci_high"]
    assert rows["j"]["n"] == 4 and rows["j"]["accept_rate"] == pytest.approx(25.0)
    lo, hi = wilson_interval(1, 4)
    assert (rows["j"]["ci_low"], rows["j"]["ci_high"]) == pytest.approx((100 * lo, 100 * hi))
    assert rows["lenient"]["n"] == 3 and rows["lenient"]["accept_rate"] == pytest.approx(
        200 / 3
    )  # unscored out
    by = judge_audit([path], judge="lenient", by="question_type", backend="polars")
    assert by.columns == ["run_id", "judge", "question_type", "n", "accept_rate", "ci_low", "ci_high"]
    assert dict(zip(by["question_type"], by["accept_rate"], strict=True)) == {
        "single-hop": 100.0,
        "temporal": 0.0,
    }
    with pytest.raises(ValueError, match="by must be None or 'question_type'"):
        judge_audit([path], by="type")


def test_a_judge_whose_verdicts_are_all_unreadable_keeps_its_row_and_is_not_to_be_used(make_run) -> None:
    """A judge none of whose audit verdicts could be read stays in ``judge_error_rates`` with n = 0 and its
    unreadable count (it used to vanish), and the report's verdict says not to use it."""
    import polars as pl

    from bench_nb.metrics.judge_quality import audit_correction, judge_error_rates
    from bench_nb.tables.judges import judge_verdict

    path = make_run(
        "unreadable-set",
        answers=ANSWERS,
        primary="contains",
        bench_nb={"audit": {"kind": "wrong", "generator": "specific"}},
        verdicts={"garbled": {"q1": None, "q2": None, "q3": None, "q4": None}},
    )
    rates = judge_error_rates([path], backend="polars")
    rows = {r["judge"]: r for r in rates.iter_rows(named=True)}
    assert rows["garbled"]["n"] == 0 and rows["garbled"]["unreadable"] == 4
    assert rows["garbled"]["accept_rate"] is None and rows["garbled"]["error_rate"] is None
    assert rows["contains"]["n"] == 4 and rows["contains"]["unreadable"] == 0
    assert rates.schema["unreadable"] == pl.Int64
    html = judge_verdict(rates=rates).html
    assert "Do not use garbled" in html and "none of its 4 verdicts" in html
    assert "Trust contains most" in html
    assert audit_correction(0.6, 100, rates, "garbled") is None


def test_judge_audit_pools_replicate_judgments_as_their_mean() -> None:
    import polars as pl

    from bench_nb.metrics.judge_quality import _item_rates, _rate_table

    # three replicates over four questions: the accept rate equals the mean of the replicates' rates
    scores = {1: [1, 0, 0, 0], 2: [1, 1, 0, 0], 3: [1, 0, 0, 1]}
    frame = pl.DataFrame(
        [
            {"run_id": "r", "judge": "j", "question_id": f"q{i}", "replicate": rep, "score": s}
            for rep, ss in scores.items()
            for i, s in enumerate(ss)
        ]
    )
    table = _rate_table(_item_rates(frame, ["run_id", "judge"]), ["run_id", "judge"])
    assert table["n"][0] == 4
    assert table["accept_rate"][0] == pytest.approx(100 * np.mean([np.mean(v) for v in scores.values()]))


def test_judges_against_human_labels(make_run, tmp_path: Path) -> None:
    answers = {"q1": "Biscuit", "q2": "Leeds", "q3": "March 2024", "q4": "cello", "q5": "Leeds"}
    path = make_run(
        "run-a",
        answers=answers,
        primary="j",
        primary_scores={"q1": 1, "q2": 1, "q3": 1, "q4": 0, "q5": 1},
        bench_nb={},
    )
    for qid, label in (
        ("q1", "correct"),
        ("q2", "incorrect"),
        ("q3", "correct"),
        ("q4", "incorrect"),
        ("q5", "unsure"),
    ):
        append_label(path, qid, label)
    append_label(path, "q2", "correct")  # relabelled: the last line wins
    table = judge_vs_human([path], backend="polars")
    row = table.row(0, named=True)
    # human: q1 1, q2 1, q3 1, q4 0 (q5 unsure, left out); judge: 1, 1, 1, 0
    assert row["judge"] == "j" and row["n"] == 4 and row["n_correct"] == 3 and row["n_incorrect"] == 1
    assert row["sensitivity"] == 1.0 and row["specificity"] == 1.0
    lo, hi = wilson_interval(3, 3)
    assert (row["sensitivity_low"], row["sensitivity_high"]) == pytest.approx((lo, hi))
    from sklearn.metrics import cohen_kappa_score

    assert row["cohen_kappa"] == pytest.approx(cohen_kappa_score([1, 1, 1, 0], [1, 1, 1, 0]))


def test_weighted_sensitivity_uses_the_sampling_weights(make_run) -> None:
    answers = {"q1": "Biscuit", "q2": "Leeds", "q3": "March 2024", "q4": "cello"}
    path = make_run(
        "run-w",
        answers=answers,
        primary="j",
        primary_scores={"q1": 1, "q2": 0, "q3": 1, "q4": 0},
        bench_nb={},
    )
    # all four truly correct; the judge misses q2 and q4, which carry weight 3 each
    for qid, w in (("q1", 1.0), ("q2", 3.0), ("q3", 1.0), ("q4", 3.0)):
        append_label(path, qid, "correct", weight=w)
    row = judge_vs_human([path], backend="polars").row(0, named=True)
    assert row["sensitivity"] == pytest.approx(2 / 8)
    assert row["sensitivity_n_eff"] == pytest.approx(64 / 20)  # Kish: (Σw)² / Σw²
    assert math.isnan(row["specificity"])


def test_prompt_sweep_moves_and_ranks(make_run) -> None:
    answers = {"q1": "Biscuit", "q2": "Leeds", "q3": "March 2024", "q4": "cello"}
    a = make_run(
        "run-a",
        provider="alpha",
        answers=answers,
        primary="m",
        primary_scores={"q1": 1, "q2": 1, "q3": 0, "q4": 0},
        bench_nb={},
        verdicts={
            "m[lenient]": {"q1": 1, "q2": 1, "q3": 1, "q4": 1},
            "m[strict]": {"q1": 1, "q2": 0, "q3": 0, "q4": 0},
        },
    )
    b = make_run(
        "run-b",
        provider="beta",
        answers=answers,
        primary="m",
        primary_scores={"q1": 1, "q2": 0, "q3": 0, "q4": 0},
        bench_nb={},
        verdicts={
            "m[lenient]": {"q1": 1, "q2": 1, "q3": 1, "q4": 0},
            "m[strict]": {"q1": 1, "q2": 1, "q3": 0, "q4": 0},
        },
    )
    sweep = prompt_sweep([a, b], backend="polars")
    got = {
        (r["run_id"], r["judge_prompt"]): (r["accuracy"], r["change"], r["rank"])
        for r in sweep.iter_rows(named=True)
    }
    assert got["run-a", "lenient"] == (100.0, 50.0, 1)
    assert got["run-a", "standard"] == (50.0, 0.0, 1)
    assert got["run-a", "strict"] == (25.0, -25.0, 2)
    assert got["run-b", "strict"] == (50.0, 25.0, 1)
    assert ranking_moves(sweep) is True
    assert split_judge_name("gpt-4o-mini[strict]") == ("gpt-4o-mini", "strict")
    assert split_judge_name("contains") == ("contains", "standard")


def test_length_bias_slope_per_judge(make_run) -> None:
    answers = {
        "q1": "Biscuit",
        "q2": "a b c d e f g h i j k l Leeds",
        "q3": "March 2024 " + "x " * 20,
        "q4": "cello",
    }
    path = make_run(
        "run-l",
        answers=answers,
        primary="j",
        primary_scores={"q1": 0, "q2": 1, "q3": 1, "q4": 0},
        bench_nb={},
    )
    row = length_bias([path], backend="polars").row(0, named=True)
    x = [1 / 10, 13 / 10, 22 / 10, 1 / 10]
    slope, _, lo, hi = ols_slope(x, [0.0, 100.0, 100.0, 0.0])
    assert row["judge"] == "j" and row["n"] == 4 and row["slope"] == pytest.approx(slope) and slope > 0
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi))


def test_the_locomo_audit_stress_test_reproduces_its_published_leniency(locomo_audit: Path) -> None:
    """ap-baseline/v1: gpt-4o-mini with a lenient prompt, three runs, on deliberately wrong answers.
    Published (locomo-audit NOTE.md): 10.61% overall (per-run mean), per category 1: 5.91%, 2: 3.43%,
    3: 8.33%, 4: 15.18%; LoCoMo's categories 1-4 are multi-hop, temporal, open-domain, single-hop."""
    from bench_nb.runformat.load import load_runs

    runs = load_runs(locomo_audit / "ap-baseline" / "v1" / "ap_eval_results_scored.json")
    overall = judge_audit(runs, backend="polars").row(0, named=True)
    assert overall["n"] == 1540 and round(overall["accept_rate"], 2) == 10.61
    assert overall["ci_low"] < 10.61 < overall["ci_high"]
    by = judge_audit(runs, by="question_type", backend="polars")
    got = {r["question_type"]: round(r["accept_rate"], 2) for r in by.iter_rows(named=True)}
    assert got == {"multi-hop": 5.91, "temporal": 3.43, "open-domain": 8.33, "single-hop": 15.18}
    assert dict(zip(by["question_type"], by["n"], strict=True)) == {
        "multi-hop": 282,
        "temporal": 321,
        "open-domain": 96,
        "single-hop": 841,
    }


def test_corrected_accuracy_table_uses_the_runs_clustering(make_run) -> None:
    # Issue 39, item 4: 40 answers in 4 haystacks of 10, the judge accepting 10, 9, 2 and 1 of them (clustered);
    # people labelled 8 (4 right, 4 wrong). The table's raw interval is the clustered one and the correction
    # takes the raw accuracy as worth clustered_n answers, not 40.
    from bench_nb.metrics.clustered import clustered_interval
    from bench_nb.metrics.judge_quality import corrected_accuracy_table

    questions = [{"id": f"q{i}", "q": f"question {i}?", "gt": "x", "type": "single-hop"} for i in range(40)]
    scores = {f"q{i}": int(i % 10 < (10, 9, 2, 1)[i // 10]) for i in range(40)}
    path = make_run(
        "run-c",
        answers={q["id"]: "x" for q in questions},
        primary="j",
        primary_scores=scores,
        bench_nb={},
        questions=questions,
        haystacks={f"q{i}": f"h{i // 10}" for i in range(40)},
    )
    for qid, label in (("q0", "correct"), ("q1", "correct"), ("q10", "correct"), ("q20", "correct")):
        append_label(path, qid, label)
    for qid, label in (
        ("q25", "incorrect"),
        ("q26", "incorrect"),
        ("q35", "incorrect"),
        ("q19", "incorrect"),
    ):
        append_label(path, qid, label)
    row = corrected_accuracy_table([path], judges=["j"], backend="polars").row(0, named=True)
    counts = np.full(4, 10.0)
    sums = np.array([10.0, 9.0, 2.0, 1.0])
    cs = ClusterSums(np.arange(4).astype(object), sums, counts, 40 * 0.55 * 0.45)
    raw = clustered_interval(cs)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((100 * raw.low, 100 * raw.high))
    # q19 is judged wrong and labelled wrong; the judge accepts every labelled right answer: Se 1, Sp 1
    fix = corrected_accuracy(0.55, 1.0, 1.0, (4, 4), n=clustered_n(cs))
    assert clustered_n(cs) < 10  # four haystacks far apart: worth a handful of answers
    assert (row["corrected_low"], row["corrected_high"]) == pytest.approx(
        (100 * fix.ci_low, 100 * fix.ci_high)
    )
    plain = corrected_accuracy(0.55, 1.0, 1.0, (4, 4), n=40)
    assert row["corrected_high"] - row["corrected_low"] > 100 * (plain.ci_high - plain.ci_low) + 10


def test_audit_accept_rate_and_corrected_accuracy_are_the_same_bits_whatever_the_verdicts_order(
    make_run,
) -> None:
    """Two runs with the same graded verdicts, written in opposite orders (a shuffled judgments frame): the
    accept rate, its interval and the raw accuracy are the same bits (polars' group sums added the scores in
    the rows' order, and the questions' rates in the order of a hash)."""
    import polars as pl

    from bench_nb.metrics.judge_quality import corrected_accuracy_table

    answers = {f"q{i}": "x" for i in range(1, 7)}
    scores = dict(zip(answers, [0.452, 0.56, 0.924, 0.466, 0.508, 0.587], strict=True))
    runs = [
        make_run(name, answers=answers, primary="contains", bench_nb={}, verdicts={"g": verdicts})
        for name, verdicts in (("forward", scores), ("backward", dict(reversed(scores.items()))))
    ]
    audit = pl.concat([judge_audit(runs, judge="g", backend="polars") for _ in range(5)])
    assert audit["n"].to_list() == [6] * 10
    assert audit.select(pl.exclude("run_id")).n_unique() == 1, audit  # both runs, every call: one row of bits
    acc = corrected_accuracy_table(runs, judges=["g"], backend="polars")
    assert acc["accuracy"].n_unique() == 1 and acc["ci_low"].n_unique() == 1, acc
    assert acc["accuracy"][0] == pytest.approx(100 * sum(scores.values()) / 6)
