"""Result objects display as compact tables in Jupyter, rounded for reading, exact values one call away."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

import bench_nb
from bench_nb.runner.run import RunResult

RUNS = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")


def _cells(html: str) -> list[str]:
    return re.findall(r"<td[^>]*>(.*?)</td>", html)


def test_a_runset_has_a_short_repr_and_a_table() -> None:
    runs = bench_nb.load_runs(RUNS)
    text = repr(runs)
    assert len(text) < 300 and "msgspec" not in text and "0x" not in text
    assert text.startswith("RunSet(3 runs: ") and "synthetic-sqlite (sqlite)" in text
    assert len(repr(runs[0])) < 200
    html = runs._repr_html_()
    assert html.count("<tr>") == 4  # the header and one row per run
    cells = _cells(html)
    assert "synthetic-sqlite" in html and cells.count("50") == 3 and "bench_nb" in cells


def test_judge_agreement_and_paired_comparison_display_rounded_tables() -> None:
    runs = bench_nb.load_runs(RUNS)
    agreement = bench_nb.judge_agreement(bench_nb.judgments_df(runs))
    html = agreement._repr_html_()
    assert f"{agreement.fleiss_kappa:.3f}" in _cells(html) and f"{agreement.percent_agreement:.1%}" in _cells(
        html
    )
    assert str(agreement.fleiss_kappa) not in html  # rounded; the exact value is the attribute
    assert "Per pair" in html and ("f1 × contains" in html or "contains × f1" in html)
    pc = bench_nb.metrics.paired.paired_comparison(runs, "synthetic-sqlite", "synthetic-no-memory")
    html = pc._repr_html_()
    assert f"{pc.accuracy_a:.1%} / {pc.accuracy_b:.1%}" in html and f"{pc.difference * 100:+.1f} pts" in html
    assert html.count("<tr>") == 2 and "exact values: .as_dict()" in html
    assert "by_type" not in repr(pc)


def test_other_result_objects_display_their_fields() -> None:
    result = RunResult("r1", Path("/tmp/r1"), "done", 10, 9, 1, 0, None, scored=9, correct=7, unscored=0)
    html = result._repr_html_()
    cells = _cells(html)
    assert (
        cells[cells.index("correct") + 1] == "7"
        and "/tmp/r1" in cells
        and "<caption>RunResult</caption>" in html
    )


def _table_rows(html: str) -> list[list[str]]:
    return [
        re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        for row in re.findall(r"<tr>.*?</tr>", html, flags=re.S)
    ]


def test_compare_details_read_honestly() -> None:
    from bench_nb import tables
    from bench_nb.text import short_hashes

    runs = bench_nb.load_runs(RUNS)
    q = bench_nb.questions_df(runs, backend="polars")
    # The no-memory baseline retrieves nothing (the synthetic fixture's one returns a stray hit: made empty)
    # and its 0 ms search gets no "excellent" badge.
    q = q.with_columns(
        search_result_count=pl.when(pl.col("provider") == "no-memory")
        .then(0)
        .otherwise(pl.col("search_result_count"))
    )
    board = _table_rows(tables.table_memscore(q).html)
    by_run = {r[0].split(" <")[0]: r for r in board if r}
    assert "nothing retrieved" in by_run["no-memory"][3] and "excellent" not in by_run["no-memory"][3]
    assert "nothing retrieved" not in by_run["sqlite"][3]
    latency = tables.table_latency(q).html
    assert "nothing retrieved" in latency
    # k is the limit asked for; what each run returned is said beside it.
    settings = tables.table_settings(runs)
    q = bench_nb.questions_df(runs, backend="polars")
    counts = q.group_by("provider").agg(
        lo=pl.col("search_result_count").min(), hi=pl.col("search_result_count").max()
    )
    full = counts.filter(pl.col("provider") == "full-context").row(0, named=True)
    assert f"full-context {full['lo']}–{full['hi']}" in settings.html and "no-memory 0–1" in settings.html
    assert short_hashes("prompt " + "ab" * 32 + ".") == "prompt " + "ab" * 6 + "."


def test_each_disputed_row_shows_its_own_context() -> None:
    from bench_nb import tables

    runs = bench_nb.load_runs(RUNS)
    judgments = bench_nb.judgments_df(runs, backend="polars")
    rows = _table_rows(tables.table_disputed(judgments, limit=40, runs=runs).html)
    full = [r for r in rows if r and r[0] == "full-context"]
    assert len(full) >= 3
    contexts = {r[1]: r[5] for r in full}  # question id -> the context shown
    assert len(set(contexts.values())) == len(contexts)  # no two questions show the same items
