"""Question ids to results file names: safe, unique, length-bounded, the id kept inside; older names still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bench_nb as bn
from bench_nb.frames.judgments import search_hits
from bench_nb.runformat.format import result_file_name
from bench_nb.runner import run_benchmark

LONG = "q" * 300
IDS = ["a/b", "a_b", "a b", LONG, "café-ü", ".hidden", "conv-26-q0"]


def _benchmark(path: Path) -> Path:
    body = {
        "format": "bench_nb.custom/1",
        "name": "ids",
        "types": {"single-hop": {}},
        "conversations": [
            {
                "id": "c1",
                "sessions": [{"id": "s1", "messages": [{"role": "user", "content": "My plan is Basic."}]}],
            }
        ],
        "questions": [
            {
                "id": qid,
                "conversation": "c1",
                "question": f"Which plan ({i})?",
                "answer": "Basic",
                "type": "single-hop",
            }
            for i, qid in enumerate(IDS)
        ],
    }
    path.write_text(json.dumps(body))
    return path


def test_names_are_safe_unique_and_bounded() -> None:
    names = [result_file_name(qid) for qid in IDS]
    assert len(set(names)) == len(IDS)
    assert result_file_name("conv-26-q0") == "conv-26-q0.json"  # MemoryBench's own name for plain ids
    for name in names:
        assert len(name.encode()) <= 122 and "/" not in name and not name.startswith(".")
        assert name.isascii() and " " not in name


def test_a_run_with_awkward_question_ids_completes_resumes_and_loads(tmp_path: Path) -> None:
    dataset = _benchmark(tmp_path / "ids.json")
    result = run_benchmark("sqlite", "custom", dataset=dataset, run_id="ids", runs_dir=tmp_path / "runs")
    assert result.status == "completed"
    files = sorted((tmp_path / "runs" / "ids" / "results").glob("*.json"))
    assert len(files) == len(IDS)
    assert sorted(json.loads(f.read_text())["questionId"] for f in files) == sorted(IDS)
    again = run_benchmark(run_id="ids", runs_dir=tmp_path / "runs")  # a resume: no traceback, nothing to do
    assert again.status == "completed"
    runs = bn.load_runs(tmp_path / "runs" / "ids")
    assert runs.all_problems == []
    (run,) = runs
    for qid in IDS:
        assert search_hits(run, qid)
        assert search_hits(run, qid, 1) == search_hits(run, qid)[:1]  # from the results file, the first only


def test_a_run_with_an_older_results_file_name_still_loads_and_resumes(tmp_path: Path) -> None:
    dataset = _benchmark(tmp_path / "ids.json")
    run_benchmark("sqlite", "custom", dataset=dataset, run_id="old", runs_dir=tmp_path / "runs")
    run_dir = tmp_path / "runs" / "old"
    # What the previous release wrote for "a b": a_b.json (shared with "a_b" and "a/b"), recorded in the checkpoint.
    new = run_dir / "results" / result_file_name("a b")
    old = run_dir / "results" / "a_b-old.json"
    new.rename(old)
    ck_path = run_dir / "checkpoint.json"
    ck = json.loads(ck_path.read_text())
    ck["questions"]["a b"]["phases"]["search"]["resultFile"] = str(old)
    ck_path.write_text(json.dumps(ck))
    assert bn.load_runs(run_dir).all_problems == []
    assert run_benchmark(run_id="old", runs_dir=tmp_path / "runs").status == "completed"
    assert old.is_file() and not new.exists()  # kept under its recorded name


@pytest.mark.parametrize("run_id", ["é" * 100, "r" * 200])
def test_a_long_run_id_exports(tmp_path: Path, run_id: str) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "synthetic-no-memory"
    run_dir = tmp_path / "runs" / run_id
    run_dir.mkdir(parents=True)
    ck = json.loads((fixture / "checkpoint.json").read_text())
    (run_dir / "checkpoint.json").write_text(json.dumps(dict(ck, runId=run_id, dataSourceRunId=run_id)))
    result = bn.export_runs(run_dir, tmp_path / "store")
    assert result.written == [run_id], result.problems
    stored = bn.load_runs(tmp_path / "store")
    assert stored.run_ids == [run_id]
    assert bn.questions_df(stored, backend="polars")["run_id"].unique().to_list() == [run_id]
    (key,) = stored.runs["partition"].to_list()
    assert len(key) <= 129
