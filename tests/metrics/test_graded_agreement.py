"""Judge agreement on graded scores (BEAM's rubric): Krippendorff's alpha at the interval level, checked
against the krippendorff package, missing values included."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import polars as pl
import pytest
from krippendorff import alpha

from bench_nb.metrics.agreement import judge_agreement, krippendorff_alpha_interval


def test_interval_alpha_equals_the_krippendorff_package_with_missing_values() -> None:
    rng = random.Random(19)
    for _ in range(50):
        judges, items = rng.randint(2, 4), rng.randint(3, 12)
        data = [[rng.choice([0, 0.25, 0.5, 0.75, 1, None]) for _ in range(items)] for _ in range(judges)]
        matrix = np.array([[np.nan if v is None else v for v in row] for row in data], dtype=float)
        units = [[row[i] for row in data if row[i] is not None] for i in range(items)]
        ours = krippendorff_alpha_interval(units)
        if (
            sum(len(u) for u in units if len(u) >= 2) < 2
            or len({v for u in units if len(u) >= 2 for v in u}) < 2
        ):
            assert math.isnan(ours)
            continue
        expected = alpha(reliability_data=matrix, level_of_measurement="interval")
        assert ours == pytest.approx(expected, abs=1e-9)


def test_judge_agreement_on_graded_scores_reports_the_interval_alpha() -> None:
    scores = {
        "rubric": [1.0, 0.5, 0.25, 0.0, 0.75, None],
        "rubric:gpt-4o": [1.0, 0.5, 0.5, 0.0, 1.0, 0.5],
    }
    rows = [
        {"run_id": "r", "question_id": f"q{i}", "judge": j, "score": v, "question_type_norm": "summarization"}
        for j, vs in scores.items()
        for i, v in enumerate(vs)
    ]
    ag = judge_agreement(pl.DataFrame(rows), backend="polars")
    matrix = np.array([[np.nan if v is None else v for v in vs] for vs in scores.values()])
    assert ag.alpha_level == "interval"
    assert ag.krippendorff_alpha == pytest.approx(
        alpha(reliability_data=matrix, level_of_measurement="interval")
    )
    assert (ag.n_items, ag.n_dropped, ag.krippendorff_items) == (5, 1, 5)
    assert ag.percent_agreement == pytest.approx(3 / 5)  # identical scores on q0, q1, q3
    assert math.isnan(ag.fleiss_kappa) and math.isnan(ag.gwet_ac1)
    summary = ag.summary(backend="polars")
    assert "krippendorff_alpha_interval" in summary["statistic"].to_list()
    pair = ag.table("pairwise", "polars").row(0, named=True)
    assert pair["krippendorff_alpha_interval"] == pytest.approx(ag.krippendorff_alpha)
    with pytest.raises(ValueError, match=r"score must be in \[0, 1\]"):
        judge_agreement(pl.DataFrame([dict(rows[0], score=1.5), rows[6]]))


def test_a_score_out_of_range_names_its_judge() -> None:
    # Judges' verdicts on one question: the error names the run, the question and the judge whose score is bad
    # (the verdict rule's message lost the judge when agreement stopped checking scores itself).
    rows = [
        {"run_id": "r", "question_id": "q1", "judge": "contains", "score": 1.0},
        {"run_id": "r", "question_id": "q1", "judge": "rubric:gpt-4o", "score": 1.5},
    ]
    with pytest.raises(ValueError, match=r"run 'r', question 'q1', judge 'rubric:gpt-4o': score 1.5"):
        judge_agreement(pl.DataFrame(rows))


def test_graded_accuracy_per_judge_is_the_mean_score_not_the_share_of_perfect_scores() -> None:
    # issue 27, item 9: on graded scores `.accuracy` was the share of scores equal to 1 (here 2/5 = 0.4)
    scores = {"rubric": [1.0, 0.5, 0.25, 1.0, 0.75, None], "rubric:gpt-4o": [0.5, 0.5, 0.5, 0.0, 1.0, 1.0]}
    rows = [
        {"run_id": "r", "question_id": f"q{i}", "judge": j, "score": v}
        for j, vs in scores.items()
        for i, v in enumerate(vs)
    ]
    ag = judge_agreement(pl.DataFrame(rows), backend="polars")
    acc = {r["judge"]: r for r in ag.accuracy.iter_rows(named=True)}
    rubric = [1.0, 0.5, 0.25, 1.0, 0.75]
    assert acc["rubric"]["accuracy"] == pytest.approx(np.mean(rubric))  # 0.7, not 0.4
    assert (acc["rubric"]["scored"], acc["rubric"]["correct"], acc["rubric"]["unscored"]) == (5, 2, 1)
    half = 1.959963984540054 * np.std(rubric, ddof=1) / math.sqrt(5)
    assert (acc["rubric"]["ci_low"], acc["rubric"]["ci_high"]) == pytest.approx(
        (np.mean(rubric) - half, min(1.0, np.mean(rubric) + half))
    )
    assert acc["rubric:gpt-4o"]["accuracy"] == pytest.approx(3.5 / 6)
    by_run = ag.accuracy_by_run.filter(pl.col("judge") == "rubric").row(0, named=True)
    assert by_run["accuracy"] == pytest.approx(0.7)


def test_the_interval_alpha_is_the_same_bits_in_any_row_order_and_on_every_call() -> None:
    # Its sums ran over the items in the order of a polars group_by without maintain_order (another on every
    # call), so one frame gave alphas a few ulps apart from call to call; summed per item in sorted order, the
    # same verdicts give the same bits whatever their row order.
    rng = random.Random(3)
    rows = [
        {
            "run_id": run,
            "question_id": f"q{q}",
            "judge": judge,
            "score": rng.choice([0.0, 1 / 3, 0.5, 2 / 3, 1.0]),  # a rubric of three items: thirds
        }
        for run in ("r1", "r2", "r3")
        for q in range(40)
        for judge in ("rubric", "rubric:gpt-4o", "rubric:claude")
    ]
    first = judge_agreement(pl.DataFrame(rows), backend="polars")
    for seed in range(8):
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        again = judge_agreement(pl.DataFrame(shuffled), backend="polars")
        assert again.krippendorff_alpha.hex() == first.krippendorff_alpha.hex()
        assert _pair_alphas(again) == _pair_alphas(first)


def _pair_alphas(ag: Any) -> dict[frozenset[str], str]:
    """Each pair of judges' interval alpha, in hex (the pairs' order follows the judges' order in the rows)."""
    rows = ag.pairwise.iter_rows(named=True)
    return {frozenset((r["judge_a"], r["judge_b"])): r["krippendorff_alpha_interval"].hex() for r in rows}
