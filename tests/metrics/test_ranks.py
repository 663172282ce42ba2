"""rank_intervals' contract: issue 17's columns and ``accuracy``, what the runs are ranked by."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import bench_nb as bn
from bench_nb.metrics import ranks as ranks_module
from bench_nb.metrics.ranks import rank_intervals_frame, rank_resamples
from clustered_sim import LOCOMO_SIZES

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


def _runs(haystacks: int, accuracy: dict[str, float], per_haystack: int = 4) -> pl.DataFrame:
    """Each run right on the first ``accuracy * per_haystack`` questions of every haystack."""
    rows = []
    for run, acc in accuracy.items():
        for h in range(haystacks):
            for k in range(per_haystack):
                rows.append(
                    {
                        "run_id": run,
                        "question_id": f"h{h}-q{k}",
                        "haystack_id": f"h{h}",
                        "correct": k < round(acc * per_haystack),
                    }
                )
    return pl.DataFrame(rows)


def test_below_ten_haystacks_a_rank_interval_spans_the_runs_no_paired_test_separates() -> None:
    """Four haystacks, one run right everywhere, one wrong everywhere: no spread, so the paired test's p is the
    sign test of four agreeing haystacks, 2/2^4 = 0.125, and the two cannot be told apart and either could rank first (a bootstrap of 4 haystacks
    ranks the first run first in every resample: "1 [1–1]")."""
    ranks = bn.rank_intervals(_runs(4, {"a": 1.0, "b": 0.0}), backend="polars")
    assert ranks.select("run_id", "rank", "rank_low", "rank_high", "group").rows() == [
        ("a", 1, 1, 2, 1),
        ("b", 2, 1, 2, 1),
    ]


def test_below_ten_haystacks_runs_each_paired_test_separates_keep_their_rank() -> None:
    """Six haystacks, each run half a haystack apart from the next: every pair's p is the sign test of six
    agreeing haystacks, 2/2^6 = 0.031 < 0.05, so each rank is shown as certain; the group of each is its own."""
    ranks = bn.rank_intervals(_runs(6, {"a": 1.0, "b": 0.5, "c": 0.0}), backend="polars")
    assert ranks.select("run_id", "rank_low", "rank_high", "group").rows() == [
        ("a", 1, 1, 1),
        ("b", 2, 2, 2),
        ("c", 3, 3, 3),
    ]


def test_from_ten_haystacks_the_rank_interval_is_the_bootstraps() -> None:
    ranks = bn.rank_intervals(_runs(12, {"a": 1.0, "b": 0.0}), backend="polars")
    assert ranks.select("run_id", "rank_low", "rank_high").rows() == [("a", 1, 1), ("b", 2, 2)]


def _close_runs(runs: int = 6) -> pl.DataFrame:
    """``runs`` runs of LoCoMo's shape (10 conversations, 1,540 questions, four types), each five points
    better than the last (bench/clustered.py's frame)."""
    rng = np.random.default_rng(0)
    hay = np.repeat(np.arange(10), LOCOMO_SIZES).astype(str)
    n = len(hay)
    types = np.array(["single-hop", "multi-hop", "temporal", "open-domain"])[rng.integers(0, 4, n)]
    return pl.concat(
        pl.DataFrame(
            {
                "run_id": f"run-{r}",
                "question_id": [f"q{i}" for i in range(n)],
                "haystack_id": hay,
                "question_type": types,
                "correct": rng.random(n) < 0.6 + 0.05 * r,
            }
        )
        for r in range(runs)
    )


def test_rank_intervals_do_not_move_with_the_seed() -> None:
    # With 2,000 resamples 2 of these 24 rows changed rank_low or rank_high between seeds (a percentile at a
    # rank boundary); the default is now 20,000 resamples (rank_resamples: fewer with many haystacks).
    q = _close_runs()
    assert rank_resamples(10) == 20_000 and rank_resamples(500) == 8_000 and rank_resamples(5000) == 2_000
    tables = {
        tuple(
            rank_intervals_frame(q, seed, by="question_type")
            .sort("question_type", "run_id")
            .select("rank_low", "rank_high")
            .rows()
        )
        for seed in range(20)
    }
    assert len(tables) == 1


def test_types_with_as_many_haystacks_share_one_weights_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rank bootstrap's weights depend on the number of haystacks alone: two types over 12 haystacks
    each are resampled in one draw between them (a report's 4 million draws each), and every type's ranks are
    those of its questions ranked alone."""
    rng = np.random.default_rng(3)
    sizes = {"x": 12, "y": 12, "z": 15}
    q = pl.concat(
        pl.DataFrame(
            {
                "run_id": run,
                "question_id": [f"{t}{h}-{i}" for t, k in sizes.items() for h in range(k) for i in range(3)],
                "haystack_id": [f"{t}{h}" for t, k in sizes.items() for h in range(k) for _ in range(3)],
                "question_type": [t for t, k in sizes.items() for _ in range(3 * k)],
                "score": rng.integers(0, 5, 3 * sum(sizes.values())) / 4 + shift,
            }
        ).with_columns(pl.col("score").clip(0, 1))
        for run, shift in (("a", 0.0), ("b", 0.1), ("c", -0.1))
    )
    drawn, draw = [], ranks_module.resampled_sums

    def counted(x: np.ndarray, seed: int, resamples: int) -> np.ndarray:
        drawn.append(len(x))
        return draw(x, seed, resamples)

    monkeypatch.setattr(ranks_module, "resampled_sums", counted)
    by_type = rank_intervals_frame(q, by="question_type")
    assert sorted(drawn) == [12, 15]
    columns = ["run_id", "accuracy", "rank", "rank_low", "rank_high", "group"]
    assert by_type["question_type"].to_list() == ["x"] * 3 + ["y"] * 3 + ["z"] * 3
    for t in sizes:
        alone = rank_intervals_frame(q.filter(pl.col("question_type") == t))
        assert by_type.filter(pl.col("question_type") == t).select(columns).equals(alone.select(columns))
