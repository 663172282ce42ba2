"""``compare_runs``, the one comparison function: each method gives the numbers of the function it replaces
(the same rows, to the bit), one result type (``.frame`` in the backend asked for, an HTML view), and bad
arguments are refused naming what to do."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import bench_nb as bn
from bench_nb.metrics.clustered_paired import clustered_paired_comparisons_frame, tell_apart_frame
from bench_nb.metrics.paired import paired_comparison, paired_comparisons_frame
from bench_nb.metrics.repeats import pooled_paired_comparisons_frame
from synthetic_runs import write_synthetic_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_synthetic_runs(tmp_path_factory.mktemp("runs"), n_questions=60)


def test_each_method_gives_the_rows_of_the_function_it_replaces(runs: list[Path]) -> None:
    q = bn.questions_df(runs, backend="polars")
    cases = {
        ("clustered", None): clustered_paired_comparisons_frame(q),
        ("clustered", "question_type"): clustered_paired_comparisons_frame(q, by="question_type"),
        ("independent", None): paired_comparisons_frame(runs, method="independent"),
        ("signed-rank", "question_type"): paired_comparisons_frame(runs, method="signed-rank", by_type=True),
        ("tell-apart", None): tell_apart_frame(q),
        ("pooled", None): pooled_paired_comparisons_frame(q),
    }
    for (method, by), want in cases.items():
        source = runs if method in ("independent", "signed-rank") else q
        got = bn.compare_runs(source, method=method, by=by, backend="polars")  # type: ignore[arg-type]
        assert got.method == method
        assert_frame_equal(got.frame, want)
        assert "<table" in got._repr_html_()
    assert isinstance(bn.compare_runs(q).frame, pd.DataFrame)  # pandas by default, as every frame function


def test_one_pair_is_the_paired_comparison(runs: list[Path]) -> None:
    ids = [r.name for r in runs]
    got = bn.compare_runs(runs, ids[0], ids[1], method="independent", backend="polars")
    want = paired_comparison(runs, ids[0], ids[1], method="independent", backend="polars")
    assert got.pair is not None and got.pair.as_dict() == want.as_dict()
    assert_frame_equal(got.pair.by_type, want.by_type)
    assert got.frame.to_dicts() == [want.as_dict()]
    assert isinstance(got.frame, pl.DataFrame)
    assert got._repr_html_() == want._repr_html_()


def test_bad_arguments_say_what_to_do(runs: list[Path]) -> None:
    with pytest.raises(ValueError, match="unknown method 'bootstrap'"):
        bn.compare_runs(runs, method="bootstrap")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="both a and b"):
        bn.compare_runs(runs, "a")
    with pytest.raises(ValueError, match="compares every pair: leave out a and b"):
        bn.compare_runs(runs, "a", "b", method="pooled")


@pytest.mark.parametrize("method", ["clustered", "independent"])
def test_a_run_id_with_a_typo_names_the_nearest_run(method: str) -> None:
    """``compare_runs(q, "synthetic-sqlit", ...)`` listed the runs but not the one meant."""
    from bench_nb.errors import ComparisonError

    runs = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "runs").iterdir())
    with pytest.raises(
        ComparisonError, match=r"'synthetic-sqlit' is not in the data \(did you mean 'synthetic-sqlite'\?\)"
    ):
        bn.compare_runs(runs, "synthetic-sqlit", "synthetic-no-memory", method=method)
