"""Result objects display as compact tables in Jupyter, rounded for reading, exact values one call away."""

from __future__ import annotations

import re
from pathlib import Path

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
    pc = bench_nb.paired_comparison(runs, "synthetic-sqlite", "synthetic-no-memory")
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
