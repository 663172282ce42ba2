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
