"""Retrieval metrics per run: MemoryBench's plain means, the level each run was scored at, and the table that
puts them side by side (with its warnings), on hand-made frames and on the real MemoryBench run."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from metric_frames import frame, row

from bench_nb import retrieval_summary
from bench_nb.tables import table_retrieval


def _metrics(hit: float, recall: float, level: str | None, k: int = 10, **values: object) -> dict:
    return row(
        hit_at_k=hit,
        precision_at_k=hit / k,
        recall_at_k=recall,
        f1_at_k=0.5 * hit,
        mrr=hit / 2,
        ndcg=hit / 3,
        k=k,
        retrieval_level=level,
        **values,
    )


def _summary(df: pl.DataFrame) -> dict[str, dict]:
    out = retrieval_summary(df, backend="polars")
    assert isinstance(out, pl.DataFrame)
    return {r["run_id"]: r for r in out.iter_rows(named=True)}


def test_means_are_over_the_evaluated_questions_that_have_metrics() -> None:
    df = frame(
        _metrics(1.0, 0.5, "message", question_id="q1"),
        _metrics(0.0, 0.0, "message", question_id="q2", k=12),
        _metrics(1.0, 1.0, "message", question_id="q3"),
        row(question_id="q4"),  # evaluated, no metrics (no evidence in the haystack)
        _metrics(1.0, 1.0, "message", question_id="q5", status="failed", correct=None),  # not evaluated
    )
    r = _summary(df)["run-a"]
    assert (r["evaluated"], r["with_metrics"], r["level"]) == (4, 3, "message")
    assert r["hit_at_k"] == 2 / 3 and r["recall_at_k"] == 0.5
    assert r["precision_at_k"] == (0.1 + 0.0 + 0.1) / 3
    assert (r["k_min"], r["k_max"]) == (10, 12)


def test_levels_per_run_and_a_run_without_metrics() -> None:
    df = frame(
        _metrics(1.0, 1.0, "session", run_id="sessions"),
        _metrics(1.0, 1.0, "message", run_id="mixed", question_id="q1"),
        _metrics(0.0, 0.0, "session", run_id="mixed", question_id="q2"),
        _metrics(1.0, 0.5, None, run_id="memorybench-made"),
        row(run_id="no-memory"),
    )
    s = _summary(df)
    assert [s[r]["level"] for r in ("sessions", "mixed", "memorybench-made", "no-memory")] == [
        "session",
        "mixed",
        "unrecorded",
        None,
    ]
    assert s["no-memory"]["with_metrics"] == 0 and s["no-memory"]["hit_at_k"] is None


def test_a_memorybench_runs_means_equal_its_report(mb_example: Path) -> None:
    report = json.loads((mb_example / "expected" / "report.json").read_text())
    out = retrieval_summary(mb_example / "data" / "runs" / "fx-compare-supermemory", backend="polars")
    r = out.row(0, named=True)
    expected = report["retrieval"]
    assert r["level"] == "unrecorded" and r["with_metrics"] == 19
    for ours, theirs in [
        ("hit_at_k", "hitAtK"),
        ("precision_at_k", "precisionAtK"),
        ("recall_at_k", "recallAtK"),
        ("f1_at_k", "f1AtK"),
        ("mrr", "mrr"),
        ("ndcg", "ndcg"),
    ]:
        assert r[ours] == expected[theirs], ours  # bit for bit: the same left-to-right sum
    assert r["k_min"] <= expected["k"] <= r["k_max"]  # MemoryBench reports the last question's k


def test_table_warns_when_levels_differ_and_names_memorybench_runs() -> None:
    df = frame(
        _metrics(1.0, 0.9, "message", run_id="a", provider="sqlite"),
        _metrics(1.0, 1.0, "session", run_id="b", provider="supermemory"),
        _metrics(0.0, 0.0, None, run_id="c", provider="mem0"),
        row(run_id="d", provider="no-memory"),
    )
    t = table_retrieval(df)
    assert len(t.warnings) == 2
    assert "different levels (message: sqlite; session: supermemory)" in t.warnings[0]
    assert "ground truth" not in t.warnings[0] and "without ground truth" in t.warnings[1]
    assert t.warnings[1].endswith(": mem0.")
    assert "No retrieval metrics (" in t.html and "no-memory." in t.html
    assert t.html.count("<tr>") == 1 + 4
    assert "90.0%" in t.html and "100.0%" in t.html


def test_table_of_runs_at_one_level_has_no_warning() -> None:
    df = frame(
        _metrics(1.0, 0.9, "message", run_id="a", provider="sqlite"),
        _metrics(0.0, 0.0, "message", run_id="b", provider="hybrid"),
    )
    assert table_retrieval(df).warnings == ()
