"""When contains and f1 both grade, the agreement table says which to read."""

from __future__ import annotations

from pathlib import Path

import bench_nb
from bench_nb import tables
from bench_nb.runner.run import run_benchmark


def test_the_agreement_table_says_which_of_contains_and_f1_to_read(tmp_path: Path) -> None:
    run = run_benchmark("sqlite", "sample", judges="contains,f1", limit=20, runs_dir=tmp_path, progress=False)
    judgments = bench_nb.judgments_df(run.run_dir, backend="polars")
    html = tables.table_agreement(bench_nb.judge_agreement(judgments)).html
    assert "contains " in html and "% against f1 " in html
    assert (
        "Read contains for such answers (the default primary judge), f1 for short model-written ones." in html
    )
