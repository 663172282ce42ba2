"""Every published number is the same bits on every call and in every process (issue: a receipt written a
moment before failed to verify, its temporal ci_low differing in the last bits, because polars' group_by added
a group's floats in an order that changed between calls)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from bench_nb.metrics.clustered import accuracy_intervals_frame, grouped_cluster_sums
from bench_nb.metrics.clustered_paired import clustered_paired_comparisons_frame
from bench_nb.metrics.gate import gate_values, non_inferiority
from bench_nb.metrics.ordered import sums_by

TYPES = ["temporal", "single-hop", "multi-hop", "open-domain", "adversarial"]


def _frame(n: int = 1986, haystacks: int = 10) -> pl.DataFrame:
    """Two runs shaped like the failing one (LoCoMo: a few conversations holding many questions of several
    types), with 0/1 answers, fractional scores and search milliseconds."""
    rng = np.random.default_rng(7)
    parts = []
    for run in ("ref1", "ref2"):
        correct = rng.random(n) < 0.62
        parts.append(
            pl.DataFrame(
                {
                    "run_id": run,
                    "question_id": [f"conv-{i % haystacks}-q{i}" for i in range(n)],
                    "haystack_id": [f"conv-{i % haystacks}" for i in range(n)],
                    "question_type": [TYPES[(i * 7) % 5] for i in range(n)],
                    "question_type_norm": [TYPES[(i * 7) % 5] for i in range(n)],
                    "status": "evaluated",
                    "correct": correct,
                    "score": np.where(correct, rng.choice([1.0, 2 / 3, 0.9], n), rng.choice([0.0, 1 / 3], n)),
                    "search_ms": rng.gamma(2.0, 170.3, n),
                }
            )
        )
    return pl.concat(parts)


def _bits(frame: pl.DataFrame) -> tuple[Any, ...]:
    """Every float of ``frame`` as its exact hex form (NaN compares equal to NaN), with everything else."""
    out = []
    for row in frame.iter_rows():
        out.append(tuple(v.hex() if isinstance(v, float) else v for v in row))
    return tuple(out)


def _numbers(q: pl.DataFrame) -> tuple[Any, ...]:
    """The numbers a receipt, a compare report and a gate publish from ``q``."""
    both = q.drop("score")
    return (
        _bits(
            accuracy_intervals_frame(q.filter(pl.col("run_id") == "ref1").drop("score"), by="question_type")
        ),
        _bits(accuracy_intervals_frame(q, by="question_type")),  # fractional scores
        _bits(clustered_paired_comparisons_frame(both, by="question_type")),
        _bits(clustered_paired_comparisons_frame(q)),
        _bits(non_inferiority(gate_values(q, "latency_ms"), "ref1", "ref2", metric="latency_ms", by="type")),
        _bits(non_inferiority(gate_values(q, "quality"), "ref1", "ref2", metric="quality")),
    )


def test_fifty_calls_give_the_same_bits() -> None:
    q = _frame()
    first = _numbers(q)
    for _ in range(49):
        assert _numbers(q) == first


def test_many_haystacks_fifty_calls_give_the_same_bits() -> None:
    q = _frame(n=6000, haystacks=1500)
    first = _bits(accuracy_intervals_frame(q.drop("score"), by="question_type"))
    for _ in range(49):
        assert _bits(accuracy_intervals_frame(q.drop("score"), by="question_type")) == first


def test_row_order_does_not_change_a_bit() -> None:
    q = _frame()
    shuffled = q.sample(fraction=1.0, shuffle=True, seed=3)
    assert _bits(
        accuracy_intervals_frame(shuffled, by="question_type").sort("run_id", "question_type")
    ) == _bits(accuracy_intervals_frame(q, by="question_type").sort("run_id", "question_type"))
    values = q.filter(pl.col("run_id") == "ref1").select("question_id", "haystack_id", value="search_ms")
    (_, a), (_, b) = grouped_cluster_sums(values, []) + grouped_cluster_sums(values.reverse(), [])
    assert a.sums.tobytes() == b.sums.tobytes() and a.squares.hex() == b.squares.hex()


def test_sums_by_adds_in_question_order() -> None:
    frame = pl.DataFrame(
        {"h": ["b", "a", "b", "a"], "question_id": ["4", "3", "2", "1"], "x": [1e16, 1.0, 1.0, -1e16]}
    )
    got = sums_by(frame, ["h"], ["x"])
    # a: 1 then 3 (-1e16 + 1.0); b: 2 then 4 (1.0 + 1e16): each in the questions' order
    assert got.to_dict(as_series=False) == {"h": ["a", "b"], "x": [-1e16 + 1.0, 1.0 + 1e16], "c": [4 // 2, 2]}


_CHILD = """
import sys
import polars as pl
sys.path.insert(0, {tests!r})
from test_deterministic_sums import _numbers
print(repr(_numbers(pl.read_parquet({path!r}))))
"""


def test_processes_with_different_polars_threads_agree(tmp_path: Path) -> None:
    q = _frame()
    path = tmp_path / "q.parquet"
    q.write_parquet(path)
    code = _CHILD.format(tests=str(Path(__file__).parent), path=str(path))
    outputs = set()
    for threads in ("1", "2", "4"):
        env = os.environ | {"POLARS_MAX_THREADS": threads}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=120
        )
        outputs.add(done.stdout)
    assert outputs == {repr(_numbers(q)) + "\n"}


def test_lafs_operating_points_are_the_same_bits_in_any_row_order() -> None:
    from bench_nb.metrics.budget import run_points
    from bench_nb.metrics.ordered import means_by

    q = _frame(n=3000, haystacks=40).with_columns(provider=pl.lit("sqlite"))
    # latencies of very different sizes, whose float sum depends on the order they are added in
    wild = np.r_[1e16, -1e16, 3.3, 1e8, -1e8, np.zeros(len(q) - 5)]
    q = q.with_columns(search_ms=pl.col("search_ms") * 1e-3 + pl.Series(wild))
    first = _bits(run_points(q))
    for seed in range(20):
        shuffled = q.sample(fraction=1.0, shuffle=True, seed=seed)
        assert _bits(run_points(shuffled).sort("run_id")) == first
    # a mean of values whose naive sum rounds: fsum's correctly rounded sum
    tenths = pl.DataFrame({"run_id": ["a"] * 10, "question_id": [str(i) for i in range(10)], "x": [0.1] * 10})
    assert means_by(tenths, ["run_id"], ["x"])["x"][0] == 0.1
