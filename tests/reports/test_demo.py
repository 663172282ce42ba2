from __future__ import annotations

from pathlib import Path

import pytest

import bench_nb
from bench_nb.demo import PROVIDERS, run_demo
from bench_nb.reports import read_index


@pytest.mark.slow
@pytest.mark.notebook
def test_demo_runs_the_sample_and_builds_every_report(tmp_path: Path) -> None:
    result = run_demo(tmp_path / "reports", tmp_path / "runs")
    assert result.errors == []
    assert [p.name for p in result.reports] == [
        "explore.html",  # first: compare.html links to its questions' details there
        "compare.html",
        "judge_disagreement.html",
        "run_benchmark.html",
        "roi.html",
    ]
    assert [r.name for r in result.runs] == [f"demo-{p}" for p in PROVIDERS]
    q = bench_nb.questions_df(result.runs, backend="polars")
    assert q.height == 150 and set(q["status"].to_list()) == {"evaluated"}
    assert set(bench_nb.judgments_df(result.runs)["judge"]) == {"f1", "contains"}
    index = read_index(tmp_path / "reports")
    compare = next(r for r in index.reports if r.name == "compare")
    assert {r.memscore for r in compare.runs} == set(bench_nb.memscore(result.runs)["memscore"])
    html = (tmp_path / "reports" / "compare.html").read_text()
    assert "Judge agreement" in html and html.count("<svg") >= 6
    assert 'href="explore.html#q=' in html and "No explore report" not in html
    assert {r.name for r in index.reports} == {p.stem for p in result.reports}
    assert (tmp_path / "reports" / "index.html").is_file()
    for report in result.reports:  # every chart rendered in every report
        page = report.read_text()
        assert "bnb-chart-pending" not in page and "Traceback" not in page, report.name
    assert (tmp_path / "reports" / "run_benchmark.html").read_text().count("<svg") >= 2
    assert (tmp_path / "reports" / "judge_disagreement.html").read_text().count("<svg") >= 1
