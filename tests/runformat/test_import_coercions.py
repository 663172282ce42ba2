"""Importers never coerce a field silently (issue 38): a value that is not what its field holds is dropped or read
another way with a problem naming the file, the field and the question, the rest of the row and the other rows
still load, and what the run reports is not spoiled by it. Real files, and the CLI as a real process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import bench_nb as bn
from bench_nb.errors import Problem
from bench_nb.runformat.load import load_runs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LMEV2 = FIXTURES / "lmev2_runs" / "no_retrieval_web_small"
AMB = FIXTURES / "harnesses" / "amb" / "locomo" / "hybrid-search" / "rag" / "locomo10.json"
MEM0_BENCHMARKS = FIXTURES / "harnesses" / "mem0-benchmarks" / "locomo_results_20260101_000000.json"
SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PYTHONPATH": str(SRC), "BENCH_NB_QUIET": "1"}
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", *args], capture_output=True, text=True, timeout=300, env=env
    )


def _quiet(*args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_runs(*args, **kwargs)


def _lmev2(tmp_path: Path, edits: dict[int, dict[str, Any]]) -> Path:
    """A copy of the LME-V2 fixture run with fields of some rows (by line number, from 1) replaced."""
    folder = tmp_path / "lme_small"
    shutil.copytree(LMEV2, folder)
    file = folder / "per_question.jsonl"
    lines = file.read_text().splitlines()
    for n, fields in edits.items():
        lines[n - 1] = json.dumps({**json.loads(lines[n - 1]), **fields})
    file.write_text("\n".join(lines) + "\n")
    return folder


def _amb(tmp_path: Path, **fields: Any) -> Path:
    data = json.loads(AMB.read_text())
    data["results"][1].update(fields)
    path = tmp_path / "amb" / "locomo10.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    return path


def _mem0_benchmarks(tmp_path: Path, latency: Any) -> Path:
    data = json.loads(MEM0_BENCHMARKS.read_text())
    data["evaluations"][1]["retrieval"]["search_latency_ms"] = latency
    path = tmp_path / "mem0b" / MEM0_BENCHMARKS.name
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    return path


def _named(problems: list[Problem], path: Path, field: str) -> Problem:
    (found,) = [p for p in problems if p.path == str(path) and p.field == field]
    return found


@pytest.mark.parametrize("bad", [float("inf"), 1e308])
def test_infinite_and_absurd_latencies_are_dropped_naming_file_field_and_question(
    tmp_path: Path, bad: float
) -> None:
    lme = _lmev2(
        tmp_path, {1: {"memory_query_duration_seconds": bad}, 3: {"memory_context_token_count": bad}}
    )
    amb = _amb(tmp_path, retrieve_time_ms=bad)
    mem0b = _mem0_benchmarks(tmp_path, bad)
    runs = _quiet([lme, amb, mem0b])
    problems = runs.all_problems
    shown = "Infinity" if bad == float("inf") else "1e+308"
    file = lme / "per_question.jsonl"
    p = _named(problems, file, "line 1: memory_query_duration_seconds")
    assert p.question_id == "web_static_001" and f"memory_query_duration_seconds {shown} is not" in p.message
    assert _named(problems, file, "line 3: memory_context_token_count").question_id == "web_procedure_003"
    assert _named(problems, amb, "results[1].retrieve_time_ms").question_id == "conv-26-q1"
    p = _named(problems, mem0b, "evaluations[1].retrieval.search_latency_ms")  # once, not once per depth
    assert p.question_id == "conv-26-q1"
    q = bn.questions_df(runs, backend="polars")
    dropped = q.filter(
        ((pl.col("run_id") == "lme_small") & (pl.col("question_id") == "web_static_001"))
        | (
            pl.col("run_id").is_in(["hybrid-search-locomo10", "oss-top_10"])
            & (pl.col("question_id") == "conv-26-q1")
        )
    )
    assert len(dropped) == 3 and dropped["search_ms"].null_count() == 3  # null: not recorded, never a number
    assert q["search_ms"].drop_nulls().max() < 1e6  # every other duration still loads
    assert len(q.filter(pl.col("run_id") == "lme_small")) == 6

    # What crashed with OverflowError reads the runs: each an exit 0 and its numbers.
    for source in (lme, amb, mem0b):
        summary = _cli("summary", str(source))
        assert summary.returncode == 0 and "Traceback" not in summary.stderr, summary.stderr
        if source != mem0b:  # one receipt per run: the mem0 file holds two (one per retrieval depth)
            receipt = _cli("receipt", str(source), "-o", str(tmp_path / f"{source.name}.receipt.json"))
            assert receipt.returncode == 0 and "Traceback" not in receipt.stderr, receipt.stderr
    lme_summary = _cli("summary", str(lme)).stdout
    assert "67% / " in lme_summary


def test_amb_retrieve_time_ms_that_is_not_a_number_is_named_not_dropped_silently(tmp_path: Path) -> None:
    amb = _amb(tmp_path, retrieve_time_ms="fast", context_tokens=12.5)
    (run,) = _quiet(amb)
    p = _named(run.problems, amb, "results[1].retrieve_time_ms")
    assert p.question_id == "conv-26-q1" and 'retrieve_time_ms "fast" is not a duration in ms' in p.message
    assert "12.5 is not a token count" in _named(run.problems, amb, "results[1].context_tokens").message
    q = run.checkpoint.questions
    assert q["conv-26-q1"].phases.search.durationMs is None
    assert q["conv-26-q0"].phases.search.durationMs == 120.0  # the other rows keep theirs


def test_lmev2_usage_that_is_not_an_object_on_one_row_keeps_the_runs_tokens(tmp_path: Path) -> None:
    whole = bn.memscore(_quiet(LMEV2), backend="polars")["context_tokens"].item()
    assert whole is not None
    lme = _lmev2(tmp_path, {2: {"usage": "lots"}})
    (run,) = _quiet(lme)
    p = _named(run.problems, lme / "per_question.jsonl", "line 2: usage")
    assert p.question_id == "web_dynamic_002" and 'usage "lots" is not an object' in p.message
    assert run.checkpoint.questions["web_dynamic_002"].phases.answer.promptTokens is None
    # the context tokens are the harness's own figure, still there for every row: the same MemScore tokens
    assert bn.memscore(run, backend="polars")["context_tokens"].item() == whole
    summary = _cli("summary", str(lme))
    assert summary.returncode == 0 and f"/ {whole}tok" in summary.stdout, summary.stdout


def test_lmev2_haystack_ids_given_as_a_string_keep_the_clusters(tmp_path: Path) -> None:
    def clusters(source: Path) -> dict[str, str]:
        q = bn.questions_df(_quiet(source), backend="polars")
        return dict(zip(q["question_id"], q["haystack_id"], strict=True))

    before = clusters(LMEV2)
    assert before["sn_abs_006"] == before["sn_procedure_005"]  # both on ["sn-1"]
    lme = _lmev2(tmp_path, {6: {"haystack_ids": "sn-1"}})
    assert clusters(lme) == before
    (run,) = _quiet(lme)
    p = _named(run.problems, lme / "per_question.jsonl", "line 6: haystack_ids")
    assert p.question_id == "sn_abs_006" and "is a string, not a list" in p.message


def test_a_deleted_zep_or_mem0_row_is_named(tmp_path: Path, harness_results: Path, locomo_path: Path) -> None:
    for source, first in (
        (harness_results / "zep" / "zep_locomo_grades.json", "locomo_experiment_user_2"),
        (harness_results / "mem0" / "results.json", "2"),
    ):
        data = json.loads(source.read_text())
        del data[first][5]
        path = tmp_path / source.parent.name / source.name
        path.parent.mkdir()
        path.write_text(json.dumps(data))
        runs = _quiet(path, dataset=locomo_path)
        assert len(bn.questions_df(runs, backend="polars")) == 1539
        (p,) = runs.all_problems
        assert p.path == str(path) and p.question_id == "conv-41-q5"
        assert (
            "no row for 1 of the 1540 scored questions" in p.message
            and "the run has 1539 of them" in p.message
        )


def test_fields_read_another_way_than_written_are_named_and_the_rows_still_load(
    tmp_path: Path,
) -> None:
    """Text that is not text, a category that is not a number, a flag that is not true/false, an object that is
    not one: each read as the problem says, never silently, and never a crash (mem0's cutoff_results as a list
    raised AttributeError)."""
    amb = _amb(
        tmp_path, query={"text": "When?"}, gold_answers=[7, "May"], category_axes={"question_type": [5]}
    )
    lme = _lmev2(tmp_path, {2: {"response_raw": ["a", "b"], "is_unknown": "no"}})
    data = json.loads(MEM0_BENCHMARKS.read_text())
    data["evaluations"][0]["cutoff_results"] = ["not", "an", "object"]
    data["evaluations"][1]["retrieval"] = "fast"
    mem0b = tmp_path / "mem0b.json"
    mem0b.write_text(json.dumps(data))
    runs = _quiet([amb, lme, mem0b])
    problems = runs.all_problems
    p = _named(problems, amb, "results[1].query")
    assert p.question_id == "conv-26-q1" and 'is not text: read as {"text": "When?"}' in p.message
    assert not [p for p in problems if p.field == "results[1].gold_answers"]  # a number is a fine gold answer
    assert "5 is not text" in _named(problems, amb, "results[1].category_axes.question_type[0]").message
    file = lme / "per_question.jsonl"
    assert _named(problems, file, "line 2: response_raw").question_id == "web_dynamic_002"
    assert "is not true/false" in _named(problems, file, "line 2: is_unknown").message
    assert _named(problems, mem0b, "evaluations[1].retrieval").question_id == "conv-26-q1"
    for depth in ("top_10", "top_50"):  # no result at either depth: said for each run it is left out of
        assert _named(problems, mem0b, f"evaluations[0].cutoff_results.{depth}").question_id == "conv-26-q0"
    by_run = {r.run_id: r.checkpoint.questions for r in runs}
    assert by_run["hybrid-search-locomo10"]["conv-26-q1"].groundTruth == "7 | May"
    assert by_run["lme_small"]["web_dynamic_002"].phases.answer.hypothesis == '["a", "b"]'
    assert len(by_run["lme_small"]) == 6 and sorted(by_run["oss-top_10"]) == ["conv-26-q1", "conv-30-q2"]


def test_a_zep_category_that_is_not_a_number_is_named(tmp_path: Path, locomo_path: Path) -> None:
    data = json.loads(locomo_path.read_text())
    first = next(item for item in data[0]["qa"] if item["category"] != 5)
    grades = [
        {"question": first["question"], "answer": "x", "golden_answer": 3, "grade": True, "category": "two"}
    ]
    path = tmp_path / "grades.json"
    path.write_text(json.dumps({"locomo_experiment_user_0": grades}))
    runs = _quiet(path, dataset=locomo_path, format="zep")
    p = _named(runs.all_problems, path, "locomo_experiment_user_0[0].category")
    assert '"two" is not a LoCoMo category number' in p.message
    q = runs[0].checkpoint.questions["conv-26-q0"]
    assert q.groundTruth == "3" and q.questionType  # the dataset's category still types it


def test_report_compare_of_a_run_with_an_absurd_latency_builds(tmp_path: Path) -> None:
    """The compare report died with OverflowError on an LME-V2 run holding a 1e308 s memory query."""
    lme = _lmev2(tmp_path, {1: {"memory_query_duration_seconds": 1e308}})
    out = tmp_path / "compare.html"
    done = _cli("report", "compare", "-p", "runs", str(lme), "-o", str(out))
    assert done.returncode == 0 and "OverflowError" not in done.stderr, done.stderr
    assert out.is_file() and "lme_small" in out.read_text()
