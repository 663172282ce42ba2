"""Task-averaged and question-averaged accuracy over benchmarks (issue 40), against a hand computation."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from bench_nb.metrics.accuracy import accuracy_across_benchmarks


def _frame(benchmarks: dict[str, list[int]], provider: str = "p") -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for bench, scores in benchmarks.items():
        for i, s in enumerate(scores):  # every question its own haystack: CR2 reduces to s²/n
            rows.append(
                {
                    "run_id": f"{provider}-{bench}",
                    "question_id": f"{bench}-{i}",
                    "provider": provider,
                    "benchmark": bench,
                    "haystack_id": f"{bench}-h{i}",
                    "status": "evaluated",
                    "unscored": False,
                    "score": float(s),
                    "correct": s == 1,
                }
            )
    return rows


def test_both_averages_and_their_intervals_match_a_hand_computation() -> None:
    rows = _frame({"a": [1, 1, 1, 0], "b": [1, 0, 0, 0, 0, 0, 1, 0, 1, 0]})
    rows.append({**rows[0], "question_id": "a-x", "unscored": True, "score": None})  # left out
    (r,) = accuracy_across_benchmarks(pl.DataFrame(rows)).to_dicts()
    # a: 3/4, s² = 0.75/3 = 0.25, V = 0.25/4; b: 3/10, s² = 2.1/9, V = (2.1/9)/10
    va, vb = 0.25 / 4, 2.1 / 9 / 10
    z = 1.959963984540054
    task, task_se = (0.75 + 0.3) / 2, math.sqrt(va + vb) / 2
    pooled, pooled_se = 6 / 14, math.sqrt(16 * va + 100 * vb) / 14
    assert (r["benchmarks"], r["questions"]) == (2, 14)
    assert r["task_averaged"] == pytest.approx(0.525)
    assert (r["task_ci_low"], r["task_ci_high"]) == pytest.approx((task - z * task_se, task + z * task_se))
    assert r["question_averaged"] == pytest.approx(pooled)
    assert (r["question_ci_low"], r["question_ci_high"]) == pytest.approx(
        (pooled - z * pooled_se, pooled + z * pooled_se)
    )


def test_a_large_benchmark_moves_only_the_question_average() -> None:
    small = {"a": [1] * 9 + [0], "b": [0] * 90 + [1] * 10}
    rows = _frame(small, "x") + _frame({"a": [1] * 9 + [0], "b": [0] * 80 + [1] * 20}, "y")
    out = {r["provider"]: r for r in accuracy_across_benchmarks(pl.DataFrame(rows)).to_dicts()}
    assert out["x"]["task_averaged"] == pytest.approx((0.9 + 0.1) / 2)
    assert out["x"]["question_averaged"] == pytest.approx(19 / 110)
    assert out["y"]["task_averaged"] - out["x"]["task_averaged"] == pytest.approx(0.05)
    assert out["y"]["question_averaged"] - out["x"]["question_averaged"] == pytest.approx(10 / 110)


def test_the_compare_report_table_shows_both_named_averages() -> None:
    from bench_nb.tables import table_across_benchmarks

    table = table_across_benchmarks(
        pl.DataFrame(_frame({"a": [1, 1, 1, 0], "b": [1, 0, 0, 0, 0, 0, 1, 0, 1, 0]}))
    )
    html = table._repr_html_()
    assert "task-averaged" in html and "question-averaged" in html and "52.5%" in html and "42.9%" in html


def test_the_compare_report_has_the_section_only_when_runs_span_benchmarks(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from bench_nb.reports.build import build_report
    from bench_nb.runner import run_benchmark

    doc = {
        "name": "team-bench",
        "conversations": [
            {
                "id": "c1",
                "sessions": [
                    {
                        "id": "s1",
                        "date": "2024-03-04",
                        "messages": [{"role": "user", "content": "Rex is my dog."}],
                    }
                ],
            }
        ],
        "questions": [
            {"id": "q1", "conversation": "c1", "question": "My dog?", "answer": "Rex", "type": "fact"}
        ],
    }
    (tmp_path / "bench.json").write_text(json.dumps(doc))
    runs = tmp_path / "runs"
    one = run_benchmark("sqlite", "sample", limit=3, run_id="loc", runs_dir=runs, progress=False).run_dir
    two = run_benchmark(
        "sqlite", "custom", dataset=tmp_path / "bench.json", run_id="cus", runs_dir=runs, progress=False
    ).run_dir
    for paths, shown in (([one, two], 1), ([one], 0)):
        out = tmp_path / f"compare{len(paths)}.html"
        build_report("compare", {"runs": [str(p) for p in paths]}, out, index=False)
        assert out.read_text().count("<h2>Accuracy across benchmarks</h2>") == shown


def test_the_intervals_take_the_one_normal_quantile_without_importing_scipy_stats() -> None:
    """``accuracy_across_benchmarks`` (the compare report's section over several benchmarks) imported
    scipy.stats, about a second, for ``norm.ppf``: it now takes ``normal_z`` as every normal interval does."""
    import subprocess
    import sys

    code = (
        "import sys, polars as pl\n"
        "sys.path.insert(0, 'tests/metrics')\n"
        "from test_across_benchmarks import _frame\n"
        "from bench_nb.metrics.accuracy import accuracy_across_benchmarks\n"
        "from bench_nb.metrics.intervals import normal_z\n"
        "rows = _frame({'a': [1, 1, 1, 0], 'b': [1, 0, 0, 0, 0, 0, 1, 0, 1, 0]})\n"
        "(r,) = accuracy_across_benchmarks(pl.DataFrame(rows), confidence=0.9).to_dicts()\n"
        "half = (r['task_ci_high'] - r['task_ci_low']) / 2\n"
        "print('scipy.stats' in sys.modules, half / (((0.25 / 4 + 2.1 / 9 / 10) ** 0.5) / 2) / normal_z(0.9))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    imported, ratio = out.stdout.split()
    assert imported == "False"
    assert float(ratio) == pytest.approx(1, abs=1e-12)
