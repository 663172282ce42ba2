from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import bench_nb
from bench_nb.demo_runs import write_synthetic_runs

FIXTURE_RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


@pytest.fixture(scope="session")
def fixture_runs() -> list[str]:
    return sorted(str(p) for p in FIXTURE_RUNS.iterdir() if p.is_dir())


@pytest.fixture(scope="session")
def questions(fixture_runs: list[str]) -> pl.DataFrame:
    q = bench_nb.questions_df(fixture_runs, backend="polars")
    assert isinstance(q, pl.DataFrame)
    return q


@pytest.fixture(scope="session")
def large_questions(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """3 runs x 2,000 questions = 6,000 rows, above altair's 5,000-row limit."""
    runs = write_synthetic_runs(tmp_path_factory.mktemp("large"), n_questions=2000)
    q = bench_nb.questions_df(runs, backend="polars")
    assert isinstance(q, pl.DataFrame)
    return q
