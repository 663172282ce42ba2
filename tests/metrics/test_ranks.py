"""rank_intervals' contract: issue 17's columns and ``accuracy``, what the runs are ranked by."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import bench_nb as bn

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


def test_rank_intervals_columns_are_the_contract_and_accuracy_is_what_ranks_the_runs() -> None:
    q = bn.questions_df(sorted(RUNS.iterdir()), backend="polars")
    ranks = bn.rank_intervals(q, backend="polars")
    assert ranks.columns == ["run_id", "accuracy", "rank", "rank_low", "rank_high", "group"]
    by_hand = (
        q.filter(pl.col("status") == "evaluated", pl.col("correct").is_not_null())
        .group_by("run_id")
        .agg(by_hand=pl.col("correct").cast(pl.Float64).mean())
    )
    intervals = bn.accuracy_intervals(q, backend="polars").select("run_id", intervals="accuracy")
    both = ranks.join(by_hand, on="run_id").join(intervals, on="run_id")
    assert len(both) == 3
    assert (both["accuracy"] - both["by_hand"]).abs().max() < 1e-12
    assert (both["accuracy"] - both["intervals"]).abs().max() < 1e-12
    # rank 1 is the best accuracy; ties share the better rank
    for r in both.iter_rows(named=True):
        assert r["rank"] == 1 + int((both["accuracy"] > r["accuracy"]).sum())
        assert r["rank_low"] <= r["rank"] <= r["rank_high"]
