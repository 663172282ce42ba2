"""The judge report warns only about judges the runs were graded by: the audit may test a lenient one on
purpose (the demo's audits ``overlap``, which no run uses)."""

from __future__ import annotations

import polars as pl

from bench_nb import tables


def _rates() -> pl.DataFrame:
    rows = [
        ("overlap", "wrong", "specific", 90.0),
        ("contains", "wrong", "specific", 30.0),
        ("f1", "wrong", "specific", 5.0),
        ("overlap", "correct", "reworded", 99.0),
        ("contains", "correct", "reworded", 80.0),
        ("f1", "correct", "reworded", 60.0),
    ]
    return pl.DataFrame(
        [
            {"judge": j, "kind": k, "generator": g, "accept_rate": a, "ci_low": a - 5, "ci_high": a + 5}
            for j, k, g, a in rows
        ]
    )


def test_a_lenient_judge_the_runs_do_not_use_gets_no_warning() -> None:
    html = tables.judge_verdict(rates=_rates(), used=["contains", "f1"]).html
    assert "Do not believe overlap" not in html
    assert "Do not believe contains on its own: it accepts 30.0%" in html


def test_without_the_runs_judges_every_audited_judge_counts() -> None:
    assert "Do not believe overlap on its own" in tables.judge_verdict(rates=_rates()).html


def _versus(n_correct: int, n_incorrect: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "judge": ["f1"],
            "n": [n_correct + n_incorrect],
            "n_correct": [n_correct],
            "n_incorrect": [n_incorrect],
            "sensitivity": [0.9],
            "specificity": [0.5],
            "cohen_kappa": [0.4],
            "gwet_ac1": [0.5],
        }
    )


def _corrected() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_id": ["sqlite"],
            "provider": ["sqlite"],
            "judge": ["f1"],
            "scored": [186],
            "accuracy": [72.0],
            "ci_low": [65.0],
            "ci_high": [78.0],
            "corrected": [42.6],
            "corrected_low": [0.0],
            "corrected_high": [100.0],
            "source": ["human labels"],
        }
    )


def test_a_judge_verdict_from_3_labels_says_cannot_tell() -> None:
    # issue 37: "sqlite 72.0% -> 42.6% [0.0-100.0] (-29.4 pts)" was the headline from 3 human labels while a
    # 186-answer leniency audit sat below it.
    html = tables.judge_verdict(
        versus=_versus(2, 1), rates=_rates(), corrected=_corrected(), used=["f1"]
    ).html
    assert (
        "Cannot tell which judge to trust from the human labels: f1 has 3 human labels (2 right, 1 wrong"
        in html
    )
    assert "The leniency audit below is the better guide" in html
    assert "Trust f1:" not in html and "42.6" not in html
    assert "Corrected for f1&#x27;s errors: cannot tell from 3 human labels" in html
    assert "Trust f1 most (too few human labels yet: from the leniency audit)" in html
    # with enough labels on both sides the labels decide, and the corrected score is stated
    html = tables.judge_verdict(versus=_versus(12, 10), corrected=_corrected()).html
    assert "Trust f1: against 22 human labels" in html and "42.6%" in html and "cannot tell" not in html
