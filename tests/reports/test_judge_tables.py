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


def test_judge_report_tables_name_runs_by_their_one_label() -> None:
    # Two runs of one provider read "sqlite" and "sqlite" before: each table now shows the report's label
    # (charts.labels.run_labels, unique among the runs) with the full run id as the tooltip.
    import html
    import re
    from pathlib import Path

    import bench_nb
    from bench_nb.charts.labels import run_labels
    from bench_nb.metrics import judge_quality

    q = bench_nb.questions_df(str(Path(__file__).parents[1] / "fixtures" / "runs" / "*"), backend="polars")
    q = pl.concat(
        [q, q.filter(pl.col("run_id") == "synthetic-sqlite").with_columns(run_id=pl.lit("sqlite-2"))]
    )
    labels = run_labels(q)
    ids = ["synthetic-sqlite", "sqlite-2"]
    assert labels[ids[0]] != labels[ids[1]]
    base = {"run_id": ids, "provider": ["sqlite", "sqlite"], "ci_low": [40.0, 50.0], "ci_high": [60.0, 70.0]}
    base |= {"accuracy": [50.0, 60.0], "scored": [10, 10]}
    corrected = pl.DataFrame(
        base
        | {"judge": ["f1", "f1"], "corrected": [45.0, 58.0], "corrected_low": [30.0, 40.0]}
        | {"corrected_high": [60.0, 70.0], "source": ["human labels", "human labels"]}
    )
    sweep = pl.DataFrame(
        base | {"model": ["m", "m"], "judge_prompt": ["standard"] * 2, "change": [0.0, 0.0], "rank": [2, 1]}
    )
    lengths = judge_quality.answer_lengths(q.filter(pl.col("run_id").is_in(ids)), backend="polars")
    bias = pl.DataFrame(
        {"judge": ["f1"], "n": [20], "mean_words": [5.0], "slope": [0.1], "ci_low": [-1.0], "ci_high": [1.0]}
    )
    for table in (
        tables.table_corrected(corrected),
        tables.table_prompt_sweep(sweep),
        tables.table_length_bias(bias, lengths),
    ):
        cells = re.findall(r'<td class="run" title="([^"]+)">(.*?)</td>', table.html)
        assert sorted(cells) == sorted((rid, html.escape(labels[rid])) for rid in ids), table.html[-400:]
    verdict = tables.judge_verdict(corrected=corrected).html
    assert all(html.escape(f"{labels[rid]} ") in verdict for rid in ids)
