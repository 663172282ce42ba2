"""Issue 39, "the gate says what it showed": three outcomes (not worse / worse / inconclusive) with their exit
codes, and what the benchmark can detect in every summary. Done when: on 10 LoCoMo-sized haystacks a true
5-point regression is reported *not worse* in at most 10% of seeded simulations at the defaults, equal runs
are reported *worse* at most at the gate's level, and the summary names the detectable difference."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import bench_nb as bn
from bench_nb.metrics.gate import (
    INCONCLUSIVE,
    NOT_WORSE,
    WORSE,
    gate_values,
    non_inferiority,
    repeats_non_inferiority,
)
from bench_nb.metrics.power import detectable_differences_frame
from bench_nb.receipts.canonical import canonical_json, sha256_hex
from bench_nb.receipts.gate import DEFAULT_ALPHA, DEFAULT_MARGIN
from bench_nb.receipts.receipt import Receipt
from clustered_sim import LOCOMO_SIZES, frame, paired_null

REPS = 400


def _values(base: np.ndarray, new: np.ndarray) -> pl.DataFrame:
    data = frame({"base": base, "new": new}).with_columns(
        status=pl.lit("evaluated"), question_type_norm=pl.lit("t")
    )
    return gate_values(data.with_columns(score=pl.col("correct").cast(pl.Float64)), "accuracy")


def _regressed(rng: np.random.Generator, new: np.ndarray, points: float) -> np.ndarray:
    """NEW with ``points`` of its accuracy lost: that share of all questions, among those it got right, made
    wrong at random (a true drop of exactly ``points``)."""
    right = np.flatnonzero(new == 1)
    lost = rng.choice(right, size=round(points * len(new)), replace=False)
    out = new.copy()
    out[lost] = 0.0
    return out


def test_a_true_5_point_regression_on_locomo_is_almost_never_reported_not_worse() -> None:
    """At the defaults (margin 2 points, one-sided 0.1) the old gate passed 81.5% of true 5-point regressions
    on LoCoMo's 10 conversations. Now *not worse* needs the interval's lower end above −2 points: it is
    reported in at most 10% of 400 seeded benchmarks; most are *inconclusive* (LoCoMo cannot tell)."""
    rng = np.random.default_rng(39)
    template = _values(*paired_null(rng))
    outcomes: dict[str, int] = {}
    for _ in range(REPS):
        base, new = paired_null(rng)
        v = template.with_columns(value=pl.Series(np.concatenate([base, _regressed(rng, new, 0.05)])))
        row = non_inferiority(v, "base", "new", margin=DEFAULT_MARGIN, alpha=DEFAULT_ALPHA, detectable=False)
        outcomes[row["verdict"][0]] = outcomes.get(row["verdict"][0], 0) + 1
    assert outcomes.get(NOT_WORSE, 0) <= 0.10 * REPS, outcomes
    assert outcomes.get(INCONCLUSIVE, 0) > outcomes.get(WORSE, 0), (
        outcomes
    )  # the benchmark mostly cannot tell


def test_equal_runs_on_locomo_are_reported_worse_at_most_at_the_level() -> None:
    rng = np.random.default_rng(3939)
    template = _values(*paired_null(rng))
    worse = 0
    for _ in range(REPS):
        v = template.with_columns(value=pl.Series(np.concatenate(paired_null(rng))))
        row = non_inferiority(v, "base", "new", margin=DEFAULT_MARGIN, alpha=DEFAULT_ALPHA, detectable=False)
        worse += row["verdict"][0] == WORSE
    se = math.sqrt(DEFAULT_ALPHA * (1 - DEFAULT_ALPHA) / REPS)
    assert worse / REPS <= DEFAULT_ALPHA + 2 * se


@pytest.fixture(scope="module")
def template(mb_example: Path) -> dict[str, Any]:
    return bn.make_receipt(mb_example / "data" / "runs" / "fx-compare-supermemory").body


def _receipt(template: dict[str, Any], scores: np.ndarray, path: Path) -> Path:
    """A receipt of LoCoMo's shape: 1,540 questions in its 10 conversations' sizes, resealed."""
    body = copy.deepcopy(template)
    hay = np.repeat(np.arange(len(LOCOMO_SIZES)), LOCOMO_SIZES)
    q0 = body["questions"][0]
    body["questions"] = [
        q0
        | {
            "id": f"q{i:04d}",
            "haystack": f"conv-{h}",
            "score": float(s),
            "status": "evaluated",
            "unscored": False,
        }
        for i, (h, s) in enumerate(zip(hay, scores, strict=True))
    ]
    path.write_bytes(Receipt(body, sha256_hex(canonical_json(body))).to_bytes())
    return path


def test_the_summary_names_what_locomo_can_detect(template: dict[str, Any], tmp_path: Path) -> None:
    """The summary states the drop this benchmark shows worse with 80% power (margin + the paired detectable
    difference of ``detectable_differences``, what ``bench-nb plan`` says, at the gate's one-sided level) and
    the chance an equally good NEW is shown not worse at the margin, in words."""
    rng = np.random.default_rng(7)
    base, new = paired_null(rng)
    g = bn.gate(
        _receipt(template, base, tmp_path / "b.receipt.json"),
        _receipt(template, new, tmp_path / "n.receipt.json"),
    )
    row = g.rows.row(0, named=True)
    long = frame({"base": base, "new": new}).with_columns(question_type=pl.lit("all"))
    mde = detectable_differences_frame(long, alpha=2 * DEFAULT_ALPHA).row(0, named=True)["mde_paired"]
    assert row["detectable"] == pytest.approx(DEFAULT_MARGIN + mde)
    assert 0.08 < row["detectable"] < 0.25  # LoCoMo's 10 conversations: about 13 points (the audit's figure)
    assert row["power_at_margin"] < 0.5  # it cannot tell a 2-point drop from noise
    text = g.markdown()
    points = f"{100 * row['detectable']:.1f} points"
    assert (
        f"**What this benchmark can show:** 10 haystacks (conversations), 1,540 questions: at one-sided level 0.1 "
        f"this gate shows a drop of {points} or more *worse* 8 times in 10 (80% power)"
    ) in text
    assert "It cannot tell a drop of 2.0 points from noise" in text
    assert g.to_dict()["rows"][0]["detectable"] == row["detectable"]


def test_three_outcomes_and_their_exit_codes(template: dict[str, Any], tmp_path: Path) -> None:
    """Not worse 0, worse 1, inconclusive 3 by default (a pass must be evidence) or 0 with
    ``on_inconclusive="pass"``."""
    base, new = paired_null(np.random.default_rng(12))  # NEW 5.1 points better, its interval −4.5 to +14.5
    b = _receipt(template, base, tmp_path / "b.receipt.json")
    same = bn.gate(b, b)
    assert (same.verdict, same.exit_code, same.passed) == (NOT_WORSE, 0, True)
    zero = _receipt(template, np.zeros_like(base), tmp_path / "z.receipt.json")
    assert (bn.gate(b, zero).verdict, bn.gate(b, zero).exit_code) == (WORSE, 1)
    n = _receipt(template, new, tmp_path / "n.receipt.json")
    unsure = bn.gate(b, n)
    assert (unsure.verdict, unsure.exit_code, unsure.passed) == (INCONCLUSIVE, 3, False)
    assert "The gate fails (exit 3; `--on-inconclusive pass` lets it through)" in unsure.markdown()
    lenient = bn.gate(b, n, on_inconclusive="pass")
    assert (lenient.verdict, lenient.exit_code, lenient.passed) == (INCONCLUSIVE, 0, True)
    with pytest.raises(ValueError, match="on_inconclusive must be"):
        bn.gate(b, n, on_inconclusive="maybe")


def test_repeats_non_inferiority_is_welchs_t_test() -> None:
    """The benchmark estimand's row against scipy: its interval is Welch's two-sided 1 − 2·alpha interval of
    mean(NEW) − mean(BASE), its p the one-sided Welch p of "NEW is the margin worse" (alternative "less")."""
    from scipy import stats

    rng = np.random.default_rng(5)
    for _ in range(20):
        base = list(rng.normal(0.70, 0.01, int(rng.integers(2, 6))))
        new = list(rng.normal(0.68, 0.02, int(rng.integers(2, 6))))
        row = repeats_non_inferiority(base, new, questions=100, haystacks=10, margin=0.02, alpha=0.1).row(
            0, named=True
        )
        ref = stats.ttest_ind(np.array(new) + 0.02, base, equal_var=False, alternative="less")
        ci = stats.ttest_ind(new, base, equal_var=False).confidence_interval(0.8)
        assert row["ci_low"] == pytest.approx(ci.low) and row["ci_high"] == pytest.approx(ci.high)
        assert row["p_value"] == pytest.approx(ref.pvalue)
        assert row["verdict"] == (WORSE if ci.high < -0.02 else NOT_WORSE if ci.low > -0.02 else INCONCLUSIVE)
    with pytest.raises(ValueError, match="at least 2 runs of BASE and 2 of NEW"):
        repeats_non_inferiority([0.7], [0.7, 0.71], questions=1, haystacks=1)


def test_repeats_non_inferiority_holds_its_level_and_power() -> None:
    """Seeded: 3 repeats each, run-to-run sd 1 point. NEW exactly the margin worse is reported worse at most
    alpha of the time (plus two standard errors); an equally good NEW is shown not worse about as often as
    ``power_at_margin`` says (within 5 points)."""
    rng = np.random.default_rng(17)
    worse = not_worse = 0
    stated = []
    for _ in range(REPS):
        base = list(rng.normal(0.70, 0.01, 3))
        at_margin = list(rng.normal(0.68, 0.01, 3))
        worse += repeats_non_inferiority(base, at_margin, questions=100, haystacks=10)["verdict"][0] == WORSE
        equal = repeats_non_inferiority(base, list(rng.normal(0.70, 0.01, 3)), questions=100, haystacks=10)
        not_worse += equal["verdict"][0] == NOT_WORSE
        stated.append(equal["power_at_margin"][0])
    assert worse / REPS <= DEFAULT_ALPHA + 2 * math.sqrt(DEFAULT_ALPHA * (1 - DEFAULT_ALPHA) / REPS)
    assert abs(not_worse / REPS - float(np.mean(stated))) < 0.05


def test_the_two_estimands_answer_different_questions(template: dict[str, Any], tmp_path: Path) -> None:
    """NEW loses 5 points on LoCoMo's questions in every repeat, with little run-to-run noise: on this fixed
    benchmark it is shown worse (Welch over 3 + 3 repeats); whether it would be worse on new conversations
    like these, 10 conversations cannot tell. Each summary names the question it answers."""
    rng = np.random.default_rng(33)
    truth, other = paired_null(rng)  # two providers as good on these questions (NEW 0.3 points lower)...
    lost = _regressed(
        rng, other, 0.05
    )  # ... then NEW loses 5 points: 5.3 points lower, differently per conversation

    def repeat(scores: np.ndarray, name: str) -> Path:
        flip = rng.random(len(scores)) < 0.01  # the run's own noise: 1% of answers change
        return _receipt(template, np.where(flip, 1 - scores, scores), tmp_path / f"{name}.receipt.json")

    bases = [repeat(truth, f"b{i}") for i in range(3)]
    news = [repeat(lost, f"n{i}") for i in range(3)]
    fixed = bn.gate(bases, news, estimand="benchmark")
    assert fixed.verdict == WORSE and fixed.exit_code == 1 and fixed.estimand == "benchmark"
    assert (
        fixed.rows["test"][0] == "Welch t over repeats"
        and fixed.rows["note"][0] == "3 BASE and 3 NEW repeats"
    )
    text = fixed.markdown()
    assert "The question (benchmark): is NEW worse on this benchmark beyond its run-to-run noise?" in text
    assert (
        "3 BASE and 3 NEW repeats of 1,540 questions: at one-sided level 0.1 this gate shows a drop of"
        in text
    )
    general = bn.gate(bases[0], news[0])
    assert general.verdict == INCONCLUSIVE and general.estimand == "conversations"
    assert (
        "The question (conversations): would NEW be worse on new conversations like these?"
        in general.markdown()
    )
    assert bn.gate(",".join(map(str, bases)), ",".join(map(str, news)), estimand="benchmark").verdict == WORSE
    with pytest.raises(ValueError, match="estimand='benchmark'"):
        bn.gate(bases, news)


def test_the_stated_power_at_the_margin_matches_how_often_equal_runs_are_shown_not_worse() -> None:
    """Seeded: 150 pairs of equally good LoCoMo-shaped runs gated at a margin of 8 points, where the power is
    moderate: the share shown not worse is within 8 points of the mean ``power_at_margin`` the rows state
    (each estimated from its own pair)."""
    rng = np.random.default_rng(1)
    template = _values(*paired_null(rng))
    shown, stated = 0, []
    for _ in range(150):
        v = template.with_columns(value=pl.Series(np.concatenate(paired_null(rng))))
        row = non_inferiority(v, "base", "new", margin=0.08, alpha=DEFAULT_ALPHA).row(0, named=True)
        shown += row["verdict"] == NOT_WORSE
        stated.append(row["power_at_margin"])
    assert 0.3 < float(np.mean(stated)) < 0.95
    assert abs(shown / 150 - float(np.mean(stated))) < 0.08


def test_the_latency_gates_detectable_increase_is_caught_about_8_times_in_10() -> None:
    """Seeded: 10 haystacks of 20 searches, log-normal latencies with a per-haystack effect per run (means
    equal). The median ``detectable`` of 100 equal pairs, made the true slowdown, is shown worse in about 80%
    of 200 benchmarks (65-95%), and the stated ``power_at_margin`` is within 12 points of how often the equal
    pairs were shown not worse: approximate (the ratio's noise is estimated from each pair), as the docs say."""
    k, m = 10, 20
    hay = np.repeat(np.arange(k), m)
    rng = np.random.default_rng(0)
    template = gate_values(
        pl.DataFrame(
            {
                "run_id": ["base"] * (k * m) + ["new"] * (k * m),
                "question_id": [f"q{i}" for i in range(k * m)] * 2,
                "haystack_id": [str(h) for h in hay] * 2,
                "question_type": "t",
                "status": "evaluated",
                "search_ms": np.ones(2 * k * m),
            }
        ),
        "latency_ms",
    )

    def gated(slowdown: float, detectable: bool = True) -> dict[str, Any]:
        base = rng.lognormal(0, 0.3, k)[hay] * rng.lognormal(4, 0.4, k * m)
        new = base * rng.lognormal(-0.045, 0.3, k)[hay] * (1 + slowdown) * rng.lognormal(-0.005, 0.1, k * m)
        v = template.with_columns(value=pl.Series(np.concatenate([base, new])))
        return non_inferiority(v, "base", "new", metric="latency_ms", margin=0.1, detectable=detectable).row(
            0, named=True
        )

    equal = [gated(0.0) for _ in range(100)]
    shown = float(np.mean([r["verdict"] == NOT_WORSE for r in equal]))
    assert abs(shown - float(np.mean([r["power_at_margin"] for r in equal]))) < 0.12
    slowdown = float(np.median([r["detectable"] for r in equal]))
    caught = float(np.mean([gated(slowdown, detectable=False)["verdict"] == WORSE for _ in range(200)]))
    assert 0.65 <= caught <= 0.95, (slowdown, caught)
