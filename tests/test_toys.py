"""A benchmark and a harness added from outside bench_nb, one file each (tests/toy_benchmark.py, tests/toy_importer.py), run end to end: the toy
benchmark with the offline sqlite provider and its default judge (a trait of its registration), the toy
harness's file imported into the usual frames."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import bench_nb as bn
import toy_benchmark
import toy_importer
from bench_nb.benchmarks import unregister_benchmark
from bench_nb.errors import RunFormatWarning
from bench_nb.runformat.harnesses import unregister_importer
from bench_nb.runner.run import run_benchmark

TOY = """# kitchen
alice: My cat is called Tom.
bob: The kettle is blue.
? What is the cat called? => Tom
? What colour is the kettle? => blue

# garden
carol: The roses bloom in June.
? When do the roses bloom? => June
"""


@pytest.fixture
def toy() -> Iterator[None]:
    toy_benchmark.register()
    yield
    unregister_benchmark(toy_benchmark.NAME)


@pytest.fixture
def toy_harness() -> Iterator[None]:
    toy_importer.register()
    yield
    unregister_importer(toy_importer.NAME)


def test_a_toy_benchmark_runs_end_to_end_with_its_default_judge(tmp_path: Path, toy: None) -> None:
    data = tmp_path / "kitchen.toy"
    data.write_text(TOY, encoding="utf-8")
    result = run_benchmark("sqlite", "toy", dataset=data, runs_dir=tmp_path / "runs", progress=False)
    assert (result.status, result.benchmark, result.evaluated) == ("completed", "toy", 3)
    q = bn.questions_df(result.run_dir, backend="polars").sort("question_id")
    assert q["question_id"].to_list() == ["garden-q0", "kitchen-q0", "kitchen-q1"]
    assert q["haystack_id"].to_list() == ["garden", "kitchen", "kitchen"]
    assert set(q["benchmark"]) == {"toy"} and set(q["judge"]) == {"contains"}  # the trait, not f1
    assert q["correct"].to_list() == [True, True, True]


def test_a_toy_benchmark_is_gone_when_unregistered(tmp_path: Path) -> None:
    toy_benchmark.register()
    unregister_benchmark("toy")
    with pytest.raises(bn.BenchNbError, match="unknown benchmark 'toy'"):
        run_benchmark("sqlite", "toy", dataset=tmp_path / "x.toy", runs_dir=tmp_path / "runs", progress=False)


def test_a_toy_harness_file_imports_into_the_usual_frames(tmp_path: Path, toy_harness: None) -> None:
    rows = [
        {"id": "t1", "question": "Who?", "gold": "Ann", "answer": "Ann", "correct": True},
        {"id": "t2", "question": "When?", "gold": "May", "answer": "June", "correct": False},
        {"id": "", "question": "bad row", "correct": "yes"},
    ]
    file = tmp_path / "toy-run.json"
    file.write_text(json.dumps({"toy_harness": 1, "system": "memo", "model": "m1", "rows": rows}), "utf-8")
    with pytest.warns(RunFormatWarning, match=r"field rows\[2\]\): no id"):
        runs = bn.load_runs(file)  # found by its content, no format named
    assert [r.run_id for r in runs] == ["toy-run"] and runs[0].imported.harness == "toy-harness"
    q = bn.questions_df(runs, backend="polars").sort("question_id")
    assert q["question_id"].to_list() == ["t1", "t2"] and q["correct"].to_list() == [True, False]
    assert set(q["provider"]) == {"memo"} and set(q["benchmark"]) == {"toy"}
    with pytest.warns(RunFormatWarning):
        named = bn.load_runs(file, format="toy-harness")  # type: ignore[arg-type]
    assert bn.questions_df(named, backend="polars").sort("question_id")["correct"].to_list() == [True, False]
