"""bench/load.py's generated run is a valid MemoryBench run of the advertised shape, and its measurement runs."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from bench_nb import memscore, questions_df
from bench_nb.runformat.load import read_run

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "load.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_load", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_run_has_memorybench_shape_and_loads(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _bench().generate(run, 400)
    ck = json.loads((run / "checkpoint.json").read_text())  # valid JSON, pretty-printed
    assert len(ck["questions"]) == 400 and len(list((run / "results").iterdir())) == 400
    q = ck["questions"]["conv-1-q7"]
    assert {p["status"] for p in q["phases"].values()} == {"completed"}
    hits = q["phases"]["search"]["results"]
    assert len(hits) == 5 and all(
        200 <= len(h["memory"]) + len(h["chunks"][0]["content"]) <= 330 for h in hits
    )
    assert json.loads((run / "results" / "conv-1-q7.json").read_text())["results"] == hits
    per_question = (run / "checkpoint.json").stat().st_size / 400
    per_file = sum(f.stat().st_size for f in (run / "results").iterdir()) / 400
    assert 7_000 < per_question < 10_000 and 3_500 < per_file < 5_000  # ~0.8 GB + ~0.4 GB at 100,000
    assert read_run(run, strict=True).problems == []
    df = questions_df(run, backend="polars")
    assert len(df) == 400 and set(df["status"]) == {"evaluated"} and set(df["search_result_count"]) == {5}
    ms = memscore(df, backend="polars").row(0, named=True)
    assert ms["evaluated"] == 400 and ms["context_tokens"] is not None
    assert ms["accuracy"] == df["correct"].sum() / 400


def test_measurements_run_in_child_processes(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--questions", "200", "--dir", str(tmp_path / "run"), "--clean"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "200 rows, MemScore" in out and "200 questions, 200 results files" in out
    assert "deleted" in out and not (tmp_path / "run").exists()
