"""JSON nested deeper than the decoder goes (msgspec raises RecursionError) is a problem naming the file in a
lenient load, and the other runs load (issue 31: it raised RecursionError even from lenient ``load_runs``)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from bench_nb.errors import RunFormatError
from bench_nb.frames.judgments import judgments_frame
from bench_nb.frames.questions import questions_frame
from bench_nb.runformat.load import load_runs
from bench_nb.runner.run import run_benchmark

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    run_benchmark("sqlite", "sample", limit=2, run_id="good", runs_dir=tmp_path / "runs", progress=False)
    shutil.copytree(tmp_path / "runs" / "good", tmp_path / "runs" / "deep")
    checkpoint = tmp_path / "runs" / "deep" / "checkpoint.json"
    checkpoint.write_text(checkpoint.read_text().replace('"runId"', f'"nested": {DEEP}, "runId"', 1))
    return tmp_path / "runs"


def test_a_deeply_nested_checkpoint_is_a_problem_and_the_rest_loads(runs: Path) -> None:
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        loaded = load_runs(runs)
        frame = questions_frame(runs)
    assert [r.path.name for r in loaded] == ["good"]
    [problem] = loaded.all_problems
    assert problem.path == str(runs / "deep" / "checkpoint.json") and "nested too deeply" in problem.message
    assert frame["run_id"].unique().to_list() == ["good"]
    with pytest.raises(RunFormatError, match="nested too deeply"):
        load_runs(runs / "deep", strict=True)


def test_a_deeply_nested_judgments_line_is_a_problem(runs: Path) -> None:
    with (runs / "good" / "judgments.jsonl").open("a") as fh:
        fh.write(DEEP + "\n")
    found: list = []
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        frame = judgments_frame(runs / "good", problems=found)
    assert len(frame) > 0
    assert [(p.path.endswith("judgments.jsonl"), "recursion" in p.message) for p in found] == [(True, True)]
