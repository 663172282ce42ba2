"""AMB's outputs (vectorize-io/agent-memory-benchmark: ``outputs/<dataset>/<run>/<mode>/<split>.json``, an
``EvalSummary`` of ``src/memory_bench/models.py``) load as runs on the benchmark's own question ids.

The fixture (tests/fixtures/harnesses/amb/...) is written by hand from ``models.py`` and ``runner.py``'s ``_save``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from bench_nb import load_runs, questions_df
from bench_nb.errors import RunFormatError
from bench_nb.metrics.paired import paired_comparison
from bench_nb.runformat.harnesses import find_importer
from stats_fixtures import write_run

FIXTURE = (
    Path(__file__).parents[1]
    / "fixtures"
    / "harnesses"
    / "amb"
    / "locomo"
    / "hybrid-search"
    / "rag"
    / "locomo10.json"
)
IDS = {"conv-26-q0": 1.0, "conv-26-q1": 0.0, "conv-30-q2": 1.0}


def test_amb_output_loads_on_locomos_ids_with_latency_tokens_and_judge() -> None:
    assert find_importer(FIXTURE)[0].name == "amb"
    runs = load_runs(FIXTURE)
    assert runs.all_problems == []
    (run,) = runs
    assert run.harness == "amb" and run.run_id == "hybrid-search-locomo10"
    assert run.imported is not None and run.imported.judge == "gemini:gemini-2.5-flash-lite"
    assert run.checkpoint is not None and run.checkpoint.benchmark == "locomo"
    assert run.checkpoint.provider == "hybrid-search"
    q = questions_df(runs, backend="polars").sort("question_id")
    assert dict(zip(q["question_id"], q["score"], strict=True)) == IDS
    assert q["search_ms"].to_list() == [120.0, 180.0, 150.0]
    assert q["question"][0] == "When did Caroline go to the LGBTQ support group?"


def test_amb_output_pairs_with_a_native_run(tmp_path: Path) -> None:
    questions = [{"id": qid, "q": f"q {qid}", "gt": "gold", "type": "temporal"} for qid in IDS]
    native = write_run(
        tmp_path / "runs",
        "native",
        answers=dict.fromkeys(IDS, "x"),
        primary_scores={"conv-26-q0": 1, "conv-26-q1": 1, "conv-30-q2": 0},
        bench_nb=None,
        questions=questions,
    )
    runs = load_runs([native, FIXTURE])
    cmp = paired_comparison(runs, "hybrid-search-locomo10", "native")
    assert cmp.n_pairs == 3 and (cmp.both_correct, cmp.a_only) == (1, 1)


def test_a_damaged_amb_file_names_file_field_and_question_and_keeps_the_rest(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text())
    data["results"][1]["correct"] = "yes"
    del data["results"][2]["query_id"]
    bad = tmp_path / "locomo10.json"
    bad.write_text(json.dumps(data))
    with pytest.warns(UserWarning):
        runs = load_runs(bad)
    problems = [str(p) for p in runs[0].problems]
    assert any(
        str(bad) in p and "(field results[1].correct)" in p and "[question conv-26-q1]" in p for p in problems
    )
    assert any("(field results[2].query_id)" in p for p in problems)
    assert sorted(runs[0].checkpoint.questions) == ["conv-26-q0", "conv-26-q1"]  # type: ignore[union-attr]
    with pytest.raises(RunFormatError, match=r"results\[1\]\.correct"):
        load_runs(bad, strict=True)


def test_a_gzipped_amb_output_loads_and_exports_to_the_run_store(tmp_path: Path) -> None:
    from bench_nb.frames.store import export_runs

    gz = tmp_path / "locomo10.json.gz"
    gz.write_bytes(gzip.compress(FIXTURE.read_bytes()))
    runs = load_runs(gz)
    assert runs.all_problems == [] and runs[0].harness == "amb"
    export_runs(gz, tmp_path / "store")
    q = questions_df(load_runs(tmp_path / "store"), backend="polars").sort("question_id")
    assert dict(zip(q["question_id"], q["score"], strict=True)) == IDS
