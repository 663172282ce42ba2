"""Latency statistics: MemoryBench's nearest-rank definitions, interpolated percentiles against numpy."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from metric_frames import frame, row

from bench_nb.frames.questions import questions_frame
from bench_nb.metrics import latency_stats, memorybench_stats
from bench_nb.metrics.latency import LATENCY_PHASES


def _definition(values: list[float]) -> dict[str, float]:
    """memorybench-format.md, written out again: ascending, zeros/missing skipped, JS rounding."""
    xs = sorted(v for v in values if v)
    n = len(xs)
    if n == 0:
        return dict.fromkeys(("min", "max", "mean", "median", "p95", "p99", "stdDev", "count"), 0)
    mean = sum(xs) / n
    return {
        "min": xs[0],
        "max": xs[-1],
        "mean": math.floor(mean + 0.5),
        "median": xs[n // 2],
        "p95": xs[min(math.floor(0.95 * n), n - 1)],
        "p99": xs[min(math.floor(0.99 * n), n - 1)],
        "stdDev": math.floor(math.sqrt(sum((x - mean) ** 2 for x in xs) / n) + 0.5),
        "count": n,
    }


def test_ties() -> None:
    s = memorybench_stats([5, 5, 5, 9])
    assert (s["median"], s["p95"], s["p99"], s["min"], s["max"]) == (5, 9, 9, 5, 9)
    assert (s["mean"], s["stdDev"]) == (6, 2)  # 6; sqrt(3) = 1.73 -> 2
    same = memorybench_stats([7] * 20)
    assert (same["median"], same["p95"], same["p99"], same["stdDev"]) == (7, 7, 7, 0)


def test_upper_median_and_index_rules() -> None:
    s = memorybench_stats([4, 1, 3, 2])  # sorted 1 2 3 4: sorted[2] = 3, not 2.5
    assert (s["median"], s["p95"], s["p99"]) == (3, 4, 4)
    hundred = memorybench_stats(range(1, 101))  # sorted[95] = 96, sorted[99] = 100
    assert (hundred["median"], hundred["p95"], hundred["p99"]) == (51, 96, 100)


def test_half_rounding_of_mean_and_std() -> None:
    assert memorybench_stats([1, 2])["mean"] == 2  # 1.5 rounds up, not to even
    assert memorybench_stats([1, 2, 3, 4])["mean"] == 3  # 2.5 -> 3
    assert memorybench_stats([1, 2])["stdDev"] == 1  # 0.5 -> 1


def test_zero_and_missing_are_skipped_and_empty_is_zeros() -> None:
    assert memorybench_stats([0, None, 10])["count"] == 1
    assert memorybench_stats([]) == dict.fromkeys(
        ("min", "max", "mean", "median", "p95", "p99", "stdDev", "count"), 0
    )


def test_one_value() -> None:
    assert memorybench_stats([123]) == {
        "min": 123,
        "max": 123,
        "mean": 123,
        "median": 123,
        "p95": 123,
        "p99": 123,
        "stdDev": 0,
        "count": 1,
    }


def test_matches_the_definition_on_random_samples() -> None:
    rng = random.Random(7)
    for n in (1, 2, 3, 19, 20, 21, 99, 100, 101, 1000):
        values = [rng.choice([0, rng.randint(1, 5000)]) for _ in range(n)]
        assert memorybench_stats(values) == _definition(values), n


def test_example_latency_equals_memorybench_report(mb_example: Path) -> None:
    report = json.loads((mb_example / "expected" / "report.json").read_text())
    df = questions_frame(mb_example / "data" / "runs" / "fx-compare-supermemory")
    evaluated = df.filter(pl.col("status") == "evaluated")
    for phase in LATENCY_PHASES:
        assert memorybench_stats(evaluated[f"{phase}_ms"].to_list()) == report["latency"][phase], phase
    table = latency_stats(df, backend="polars")
    for r in table.iter_rows(named=True):
        expected = report["latency"][r["phase"]]
        assert (r["count"], r["mean"], r["median_memorybench"], r["p95_memorybench"], r["std_dev"]) == (
            expected["count"],
            expected["mean"],
            expected["median"],
            expected["p95"],
            expected["stdDev"],
        )
    for qtype, block in report["byQuestionType"].items():
        group = evaluated.filter(pl.col("question_type") == qtype)
        for phase in ("search", "answer", "total"):
            assert memorybench_stats(group[f"{phase}_ms"].to_list()) == block["latency"][phase], (
                qtype,
                phase,
            )


def test_interpolated_percentiles_equal_numpy() -> None:
    rng = random.Random(3)
    search = [float(rng.randint(1, 900)) for _ in range(37)] + [500.0] * 5  # ties included
    df = frame(
        *[row(True, search_ms=v, answer_ms=2 * v) for v in search], row(None, status="failed", search_ms=1.0)
    )
    table = latency_stats(df, backend="polars").filter(pl.col("phase") == "search").row(0, named=True)
    assert table["p50_linear"] == pytest.approx(np.percentile(search, 50), rel=1e-12)
    assert table["p95_linear"] == pytest.approx(np.percentile(search, 95), rel=1e-12)
    assert table["count"] == 42  # the failed question is not counted
    one = latency_stats(frame(row(True, search_ms=250.0)), backend="polars")
    s = one.filter(pl.col("phase") == "search").row(0, named=True)
    assert (s["p50_linear"], s["p95_linear"], s["median_memorybench"]) == (250.0, 250.0, 250.0)
    empty_phase = one.filter(pl.col("phase") == "ingest").row(0, named=True)
    assert (empty_phase["count"], empty_phase["p50_linear"]) == (0, None)


def test_no_evaluated_question_gives_an_empty_table() -> None:
    df = frame(row(None, status="failed", search_ms=5.0))
    out = latency_stats(df, backend="polars")
    assert out.is_empty() and "p95_linear" in out.columns


def test_the_exact_mean_sits_beside_memorybenchs_rounded_one() -> None:
    import polars as pl

    from bench_nb.metrics import latency_stats

    frame = pl.DataFrame(
        {
            "run_id": ["r"] * 3,
            "status": ["evaluated"] * 3,
            **{
                f"{p}_ms": [0.039, 0.17, 0.1]
                for p in ("ingest", "indexing", "search", "answer", "evaluate", "total")
            },
        }
    )
    row = latency_stats(frame, backend="polars").filter(pl.col("phase") == "search").row(0, named=True)
    assert row["mean"] == 0.0 and row["min"] == 0.039 and row["max"] == 0.17  # MemoryBench's numbers
    assert abs(row["mean_exact"] - (0.039 + 0.17 + 0.1) / 3) < 1e-12
