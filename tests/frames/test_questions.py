"""questions_df / runs_df on hand-made edge cases and on MemoryBench's shared example run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import polars as pl

from bench_nb import questions_df, runs_df
from bench_nb.frames.questions import QUESTION_SCHEMA, questions_frame, runs_frame
from bench_nb.runformat.format import PHASES
from run_writers import question, write_run


def test_empty_run_gives_an_empty_frame_with_every_column(tmp_path: Path) -> None:
    run = write_run(tmp_path / "empty", [])
    df = questions_frame(run)
    assert df.is_empty() and df.schema == pl.Schema(QUESTION_SCHEMA)
    assert list(questions_df(run).columns) == list(QUESTION_SCHEMA)
    runs = runs_frame(run).row(0, named=True)
    assert runs["questions"] == 0 and runs["target_questions"] == 0 and runs["evaluate_completed"] == 0


def test_statuses_of_failed_pending_and_unfinished_questions(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "r",
        [
            question("ok"),
            question("bad", "incorrect"),
            question("idx", "failed", failed_phase="indexing", error="indexing timed out after 600 s"),
            question("ev", "failed", failed_phase="evaluate", error=""),
            question("wait", "pending"),
            question("busy", "in_progress"),
        ],
    )
    df = questions_frame(run)
    rows = {r["question_id"]: r for r in df.iter_rows(named=True)}
    assert {q: r["status"] for q, r in rows.items()} == {
        "ok": "evaluated",
        "bad": "evaluated",
        "idx": "failed",
        "ev": "failed",
        "wait": "pending",
        "busy": "in_progress",
    }
    idx = rows["idx"]
    assert (idx["failed_phase"], idx["error"]) == ("indexing", "indexing timed out after 600 s")
    assert [idx[f"{p}_status"] for p in PHASES] == ["completed", "failed", "pending", "pending", "pending"]
    assert idx["ingest_ms"] == 1000 and idx["indexing_ms"] is None and idx["total_ms"] == 1000
    assert rows["ev"]["error"] == "(no error message recorded)"
    for qid in ("idx", "ev", "wait", "busy"):
        assert rows[qid]["score"] is None and rows[qid]["correct"] is None and not rows[qid]["unscored"]
    assert (rows["ok"]["correct"], rows["bad"]["correct"]) == (True, False)
    assert rows["ok"]["total_ms"] == 1000 * 3 + 400 + 3000
    counts = runs_frame(run).row(0, named=True)
    assert (counts["ingest_completed"], counts["ingest_pending"], counts["ingest_in_progress"]) == (5, 1, 0)
    assert (counts["indexing_failed"], counts["indexing_in_progress"]) == (1, 1)
    assert (counts["evaluate_completed"], counts["evaluate_failed"], counts["evaluate_pending"]) == (2, 1, 3)


def test_missing_token_fields_are_null_not_zero(tmp_path: Path) -> None:
    run = write_run(tmp_path / "old", [question("q1", tokens=None), question("q2", tokens=(900, 600, 300))])
    df = questions_frame(run)
    assert df["prompt_tokens"].to_list() == [None, 900]
    assert df["context_tokens"].to_list() == [None, 300]
    assert df["base_prompt_tokens"].to_list() == [None, 600]


def test_unicode_and_html_are_kept_verbatim(tmp_path: Path) -> None:
    nasty = "<script>alert('x')</script> &amp; \"quoted\" café 🍰 日本語 \u2028 line\nbreak"
    run = write_run(
        tmp_path / "r",
        [question("q-é", text=f"Qué? {nasty}", ground_truth=nasty, hypothesis=f"Answer: {nasty}")],
    )
    for df in (questions_df(run), questions_df(run, backend="polars")):
        row = df.iloc[0] if isinstance(df, pd.DataFrame) else df.row(0, named=True)
        assert row["question_id"] == "q-é"
        assert row["question"] == f"Qué? {nasty}"
        assert row["ground_truth"] == nasty
        assert row["hypothesis"] == f"Answer: {nasty}"


def test_unknown_question_types_are_kept_raw_and_normalised_to_other(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "r",
        [
            question("q1", qtype="banana-reasoning"),
            question("q2", qtype=""),
            question("q3_abs", qtype="banana"),
        ],
        benchmark="custom",
    )
    df = questions_frame(run)
    assert df["question_type"].to_list() == ["banana-reasoning", "", "banana"]
    assert df["question_type_norm"].to_list() == ["other", "other", "abstention"]  # LongMemEval's _abs rule
    assert df["true_category"].to_list() == [None, None, None]
    assert df["type_source"].to_list() == ["run", "run", "run"]


def test_memorybench_locomo_labels_without_the_dataset(tmp_path: Path) -> None:
    labels = ["single-hop", "multi-hop", "temporal", "world-knowledge", "adversarial"]
    run = write_run(tmp_path / "r", [question(f"conv-1-q{i}", qtype=t) for i, t in enumerate(labels)])
    df = questions_frame(run)
    assert df["question_type"].to_list() == labels  # MemoryBench's label is kept
    # MemoryBench labels category c with its c-th name; the true names of 1..5 are these:
    assert df["true_category"].to_list() == [1, 2, 3, 4, 5]
    assert df["question_type_norm"].to_list() == [
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "abstention",
    ]
    assert set(df["type_source"]) == {"memorybench-label"}


def test_bench_nb_runs_use_true_locomo_labels(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "r",
        [question("conv-1-q0", qtype="single-hop"), question("conv-1-q1", qtype="open-domain")],
        bench_nb={"k": 10},
    )
    df = questions_frame(run)
    assert df["true_category"].to_list() == [4, 3]
    assert df["question_type_norm"].to_list() == ["single-hop", "open-domain"]
    assert set(df["type_source"]) == {"run"}
    assert runs_frame(run)["written_by"].to_list() == ["bench_nb"] and runs_frame(run)["k"].to_list() == [10]


def _true_categories(dataset: Path) -> dict[str, int]:
    """Question id -> category, read straight from the LoCoMo file (MemoryBench ids: <sample_id>-q<i>)."""
    return {
        f"{s['sample_id']}-q{i}": qa["category"]
        for s in json.loads(dataset.read_text())
        for i, qa in enumerate(s["qa"])
    }


def test_example_run_gets_its_true_categories_from_the_dataset(mb_example: Path) -> None:
    run = mb_example / "data" / "runs" / "fx-compare-supermemory"
    dataset = mb_example / "data" / "benchmarks" / "locomo" / "locomo10.json"
    truth = _true_categories(dataset)
    checkpoint = json.loads((run / "checkpoint.json").read_text())["questions"]
    df = questions_frame(run, dataset=dataset)
    assert len(df) == 20
    names = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "abstention"}
    for row in df.iter_rows(named=True):
        qid = row["question_id"]
        assert row["question_type"] == checkpoint[qid]["questionType"]  # MemoryBench's (wrong) label kept
        assert row["true_category"] == truth[qid]
        assert row["question_type_norm"] == names[truth[qid]]
        assert row["type_source"] == "dataset"
    # e.g. MemoryBench calls conv-fx1-q0 (category 4, single-hop) "world-knowledge"
    q0 = df.filter(pl.col("question_id") == "conv-fx1-q0").row(0, named=True)
    assert (q0["question_type"], q0["question_type_norm"], q0["true_category"]) == (
        "world-knowledge",
        "single-hop",
        4,
    )
    without = questions_frame(run)
    assert without["true_category"].to_list() == df["true_category"].to_list()


def test_example_run_frame_matches_its_checkpoint(mb_example: Path) -> None:
    run = mb_example / "data" / "runs" / "fx-compare-supermemory"
    checkpoint = json.loads((run / "checkpoint.json").read_text())
    df = questions_frame(run)
    assert df["question_id"].to_list() == list(checkpoint["questions"])
    for row in df.iter_rows(named=True):
        q = checkpoint["questions"][row["question_id"]]
        for p in PHASES:
            assert row[f"{p}_status"] == q["phases"][p]["status"]
            assert row[f"{p}_ms"] == q["phases"][p].get("durationMs")
        assert row["prompt_tokens"] == q["phases"]["answer"].get("promptTokens")
        assert row["search_result_count"] == len(q["phases"]["search"]["results"])
        assert row["score"] == q["phases"]["evaluate"].get("score")
    assert df.filter(pl.col("status") == "failed")["question_id"].to_list() == ["conv-fx1-q9"]
    summary = runs_frame(run).row(0, named=True)
    assert (summary["status"], summary["evaluate_completed"], summary["evaluate_failed"]) == ("failed", 19, 1)
    assert summary["written_by"] == "memorybench" and summary["problems"] == 0


def test_report_json_only_run_gives_one_row_per_evaluation(tmp_path: Path, mb_example: Path) -> None:
    run = tmp_path / "shared"
    run.mkdir()
    shutil.copy(mb_example / "expected" / "report.json", run / "report.json")
    report = json.loads((run / "report.json").read_text())
    df = questions_frame(run, dataset=mb_example / "data" / "benchmarks" / "locomo" / "locomo10.json")
    assert len(df) == len(report["evaluations"]) == 19
    assert set(df["source"]) == {"report"} and set(df["status"]) == {"evaluated"}
    ev = report["evaluations"][0]
    row = df.row(0, named=True)
    assert (row["question_id"], row["hypothesis"], row["search_ms"]) == (
        ev["questionId"],
        ev["hypothesis"],
        ev["searchDurationMs"],
    )
    assert row["prompt_tokens"] is None  # a report has no per-question tokens
    assert int(df["correct"].sum()) == report["summary"]["correctCount"]
    assert df["true_category"].null_count() == 0
    meta = runs_df(run, backend="polars").row(0, named=True)
    assert (meta["source"], meta["questions"], meta["provider"]) == ("report", 19, "supermemory")
