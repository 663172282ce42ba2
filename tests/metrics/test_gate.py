"""The regression gate's statistics (``metrics.gate``): its false-alarm rate by seeded clustered simulation,
its decision against the clustered paired test's interval, and the ratio metrics."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from bench_nb.metrics.clustered_paired import paired_difference_test
from bench_nb.metrics.gate import (
    INCONCLUSIVE,
    NOT_WORSE,
    UNDECIDED,
    WORSE,
    gate_values,
    non_inferiority,
)
from clustered_sim import LOCOMO_SIZES, frame, paired_null


def _values(base: np.ndarray, new: np.ndarray, sizes: np.ndarray = LOCOMO_SIZES) -> pl.DataFrame:
    data = frame({"base": base, "new": new}, sizes).with_columns(
        status=pl.lit("evaluated"), unscored=pl.lit(False), question_type_norm=pl.lit("single-hop")
    )
    return gate_values(data.with_columns(score=pl.col("correct").cast(pl.Float64)), "accuracy")


def _refill(template: pl.DataFrame, base: np.ndarray, new: np.ndarray) -> pl.DataFrame:
    """``template`` (a ``_values`` frame) with new scores: the simulations build the frame once."""
    return template.with_columns(value=pl.Series(np.concatenate([base, new])))


@pytest.mark.parametrize(
    ("alpha", "margin", "sizes"),
    [
        (0.1, 0.02, LOCOMO_SIZES),  # the default gate on LoCoMo's shape
        (0.1, 0.0, LOCOMO_SIZES),  # no margin: H0's boundary, where the level is reached
        (0.05, 0.0, LOCOMO_SIZES),
        (0.1, 0.0, np.array([13, 12, 12, 13])),  # the demo's 4 haystacks
    ],
)
def test_false_alarm_rate_under_a_clustered_null_is_at_most_alpha(
    alpha: float, margin: float, sizes: np.ndarray
) -> None:
    """Two equally good providers (a shared question difficulty, a per-run effect per haystack: strongly
    clustered), 500 seeded benchmarks: the gate fails at most alpha of the time (plus two Monte Carlo
    standard errors), where a gate that ignored the haystacks would fail far more often."""
    rng = np.random.default_rng(2912)
    reps = 500
    fails = 0
    naive = 0
    clustered = _values(*paired_null(rng, sizes), sizes)
    unclustered = clustered.with_columns(haystack_id=pl.col("question_id"))
    for i in range(reps):
        a, b = paired_null(rng, sizes)
        rows = non_inferiority(
            _refill(clustered, a, b), "base", "new", margin=margin, alpha=alpha, detectable=False
        )
        fails += rows["verdict"][0] == WORSE
        if i < 200 and len(sizes) == 10 and margin == 0:
            # the same one-sided test with every question its own haystack (what an unclustered gate does)
            rows = non_inferiority(
                _refill(unclustered, a, b), "base", "new", margin=margin, alpha=alpha, detectable=False
            )
            naive += rows["verdict"][0] == WORSE
    rate = fails / reps
    se = math.sqrt(alpha * (1 - alpha) / reps)
    assert rate <= alpha + 2 * se, rate
    if len(sizes) == 10 and margin == 0:
        assert naive / 200 > 2 * alpha  # the clustering matters: ignoring it raises false alarms


def test_fails_when_the_interval_lies_below_minus_the_margin() -> None:
    """The decision is the clustered paired test's: fail exactly when the upper end of its two-sided
    1 − 2·alpha interval of NEW − BASE is below −margin (checked on 100 seeded benchmarks with a true drop)."""
    rng = np.random.default_rng(7)
    seen = set()
    template = _values(*paired_null(rng))
    for _ in range(100):
        a, b = paired_null(rng)
        b = np.where(rng.random(len(b)) < 0.06, 0.0, b)  # NEW loses about 4.5 points
        v = _refill(template, a, b)
        row = non_inferiority(v, "base", "new", margin=0.02, alpha=0.1, detectable=False).row(0, named=True)
        base = v.filter(pl.col("run_id") == "base").sort("question_id")
        new = v.filter(pl.col("run_id") == "new").sort("question_id")
        d = (
            base.select("haystack_id", d=new["value"] - pl.col("value"))
            .group_by("haystack_id")
            .agg(s=pl.col("d").sum(), c=pl.len())
            .sort("haystack_id")
        )
        test = paired_difference_test(d["s"].to_numpy(), d["c"].to_numpy().astype(float), alpha=0.2)
        assert row["ci_high"] == pytest.approx(test.high)
        assert (row["verdict"] == WORSE) == (test.high < -0.02)
        seen.add(row["verdict"])
    assert WORSE in seen and seen <= {WORSE, INCONCLUSIVE, NOT_WORSE}


def test_too_few_haystacks_is_undecided_and_identical_runs_pass() -> None:
    same = np.array([1.0, 0.0, 1.0, 1.0] * 3)
    rows = non_inferiority(_values(same, same, np.array([12])), "base", "new", alpha=0.1)
    assert rows["verdict"][0] == UNDECIDED  # 1 haystack: no test at any level
    assert "1 haystack allows no test" in rows["note"][0]
    for sizes in (
        [4, 4, 4],
        [3, 3, 3, 3],
    ):  # from 2 haystacks the CR2 t decides: identical runs are not worse
        rows = non_inferiority(_values(same, same, np.array(sizes)), "base", "new", alpha=0.1)
        assert rows.row(0, named=True) | {"note": None} == rows.row(0, named=True)
        assert rows["verdict"][0] == NOT_WORSE and rows["shown_not_worse"][0] and rows["change"][0] == 0


def test_by_type_shares_alpha_among_the_rows() -> None:
    rng = np.random.default_rng(3)
    a, b = paired_null(rng)
    v = _values(a, b).with_columns(
        question_type=pl.when(pl.col("question_id").str.slice(1).cast(pl.Int64) % 2 == 0)
        .then(pl.lit("even"))
        .otherwise(pl.lit("odd"))
    )
    rows = non_inferiority(v, "base", "new", alpha=0.09, by="type")
    assert rows["question_type"].to_list() == ["all", "even", "odd"]
    assert rows["alpha"].to_list() == pytest.approx([0.03] * 3)
    assert rows["n"].to_list() == [1540, 770, 770]


def _latency(base: list[list[float]], new: list[list[float]]) -> pl.DataFrame:
    rows = []
    for run, values in (("base", base), ("new", new)):
        for k, hay in enumerate(values):
            for i, x in enumerate(hay):
                rows.append(
                    {
                        "run_id": run,
                        "question_id": f"q{k}-{i}",
                        "haystack_id": f"h{k}",
                        "question_type_norm": "t",
                        "status": "evaluated",
                        "unscored": False,
                        "search_ms": x,
                    }
                )
    return gate_values(pl.DataFrame(rows), "latency_ms")


def test_latency_ratio_fails_only_beyond_the_relative_margin() -> None:
    """Lower is better: the change is mean NEW / mean BASE − 1, the test that of the mean of
    xᴺ − (1 + margin)·xᴮ per haystack; the interval of the ratio inverts the same test (its ends are where the
    test at that ratio starts to reject)."""
    rng = np.random.default_rng(11)
    base = [list(rng.uniform(40, 60, 10)) for _ in range(8)]
    slower = [[x * 1.3 for x in hay] for hay in base]
    rows = non_inferiority(_latency(base, slower), "base", "new", metric="latency_ms", margin=0.02, alpha=0.1)
    r = rows.row(0, named=True)
    assert r["change"] == pytest.approx(0.3)
    assert r["verdict"] == WORSE and r["ci_low"] == pytest.approx(0.3) and r["ci_high"] == pytest.approx(0.3)
    same = non_inferiority(_latency(base, base), "base", "new", metric="latency_ms", alpha=0.1).row(
        0, named=True
    )
    assert same["verdict"] == NOT_WORSE and same["change"] == 0 and same["shown_not_worse"]
    noisy = [[x * rng.uniform(0.8, 1.3) for x in hay] for hay in base]
    r = non_inferiority(_latency(base, noisy), "base", "new", metric="latency_ms", alpha=0.1).row(
        0, named=True
    )
    assert r["ci_low"] < r["change"] < r["ci_high"]
    b = np.array([sum(h) for h in base])
    n = np.array([sum(h) for h in noisy])
    c = np.full(8, 10.0)

    def p_at(ratio: float) -> float:
        return paired_difference_test(n - ratio * b, c, 0.2).p

    low, high = 1 + r["ci_low"], 1 + r["ci_high"]
    assert p_at(low) >= 0.2 > p_at(low - 1e-6)
    assert p_at(high) >= 0.2 > p_at(high + 1e-6)
    with pytest.raises(ValueError, match="metric must be one of"):
        gate_values(pl.DataFrame(), "speed")


def test_a_gate_by_it_does_not_take_names_question_type() -> None:
    """``gate(by=...)`` takes ``"question_type"`` (every other ``by`` of a row per type) and ``"type"`` (the
    command's ``--by type``); its error named only ``'type'``, and its docstring too."""
    from pathlib import Path

    import bench_nb

    runs = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
    with pytest.raises(
        ValueError, match=r"by must be None or 'question_type' \(or 'type'\), not 'question_typ'"
    ):
        bench_nb.gate(runs / "synthetic-sqlite", runs / "synthetic-no-memory", by="question_typ")
    assert '``"question_type"``' in (bench_nb.gate.__doc__ or "")
