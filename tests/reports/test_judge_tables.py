"""The leniency-audit tables (tables.judges): one cell per judge and set, a badge by false-positive rate, a
dash where a judge has no row, and every text escaped."""

from __future__ import annotations

import polars as pl

from bench_nb import tables
from bench_nb.tables.judges import FPR_ADEQUATE, FPR_INVESTIGATE


def _rates(**columns: list[object]) -> pl.DataFrame:
    base: dict[str, list[object]] = {
        "judge": ["<b>j1</b>", "<b>j1</b>", "j2"],
        "generator": ["vague", "paraphrase", "vague"],
        "kind": ["wrong", "correct", "wrong"],
        "runs": [1, 1, 1],
        "n": [10, 10, 5],
        "accept_rate": [FPR_INVESTIGATE + 1, 95.0, FPR_ADEQUATE / 2],
        "ci_low": [5.0, 80.0, 0.0],
        "ci_high": [40.0, 99.0, 30.0],
    }
    return pl.DataFrame(base | columns)


def test_audit_table_badges_the_wrong_sets_only_and_escapes_judge_names() -> None:
    html = tables.table_judge_audit(_rates()).html
    assert "<b>j1</b>" not in html and "&lt;b&gt;j1&lt;/b&gt;" in html
    assert html.count(">lenient</span>") == 1  # j1 on the vague set; the paraphrase cell has no badge
    assert html.count(">sound</span>") == 1  # j2: below the adequate threshold
    assert html.count("—") == 1  # j2 has no paraphrase row
    assert 'title="10 answers"' in html and 'title="5 answers"' in html


def test_audit_by_type_table_has_a_cell_per_type_and_a_dash_where_none() -> None:
    by = _rates(question_type=["temporal", "temporal", "single-hop"]).filter(pl.col("kind") == "wrong")
    html = tables.table_judge_audit_by_type(by).html
    assert "<th>single-hop</th>" in html and "<th>temporal</th>" in html
    assert html.count("—") == 2  # j1 has no single-hop row, j2 no temporal one
    assert 'title="10 questions"' in html and html.count(">lenient</span>") == 1
