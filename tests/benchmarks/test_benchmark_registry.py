from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

import bench_nb
from bench_nb.benchmarks import (
    DatasetWarning,
    detect_benchmark,
    get_benchmark_spec,
    list_benchmarks,
    load_benchmark,
    read_custom,
    register_benchmark,
    unregister_benchmark,
    write_custom,
)
from bench_nb.errors import DatasetError


def test_builtin_names_and_aliases() -> None:
    assert list_benchmarks()[:6] == [
        "locomo",
        "longmemeval",
        "longmemeval-s",
        "longmemeval-m",
        "custom",
        "sample",
    ]
    assert bench_nb.list_benchmarks is list_benchmarks and bench_nb.load_benchmark is load_benchmark
    assert get_benchmark_spec("LongMemEval-Oracle").name == "longmemeval"
    locomo = get_benchmark_spec("locomo")
    assert locomo.url == "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json"
    assert locomo.sha256 == "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
    assert locomo.cache_path("data/benchmarks") == Path("data/benchmarks/locomo/locomo10.json")
    for name, file in (
        ("longmemeval", "longmemeval_oracle.json"),
        ("longmemeval-s", "longmemeval_s_cleaned.json"),
        ("longmemeval-m", "longmemeval_m_cleaned.json"),
    ):
        spec = get_benchmark_spec(name)
        assert (
            spec.url == f"https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/{file}"
        )
        assert spec.sha256 is None  # unpinned: the hash read is recorded in Benchmark.sha256


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(
        DatasetError,
        match=r"unknown benchmark 'locomo2' \(did you mean 'locomo'\?\); known: .*locomo, longmemeval",
    ):
        load_benchmark("locomo2")


def test_custom_needs_a_path() -> None:
    with pytest.raises(DatasetError, match=r"'custom' has no download URL: pass the file"):
        load_benchmark("custom")


def test_register_refuses_taken_names_unless_replacing(scratch_registry: None, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="'locomo' is already registered"):
        register_benchmark("locomo", read_custom)
    with pytest.raises(DatasetError, match="'longmemeval-oracle' is already registered"):
        register_benchmark("mine", read_custom, aliases=("longmemeval-oracle",))
    path = write_custom(load_benchmark("sample"), tmp_path / "mine.json")
    register_benchmark("mine", read_custom, aliases=("my-bench",))
    assert load_benchmark("my-bench", path).questions == load_benchmark("sample").questions
    register_benchmark("mine", read_custom, replace=True)
    with pytest.raises(DatasetError, match="unknown benchmark 'my-bench'"):
        get_benchmark_spec("my-bench")  # the replaced entry's aliases are gone
    unregister_benchmark("mine")
    assert "mine" not in list_benchmarks()


def test_detect_benchmark(tmp_path: Path, locomo_path: Path, longmemeval_path: Path) -> None:
    assert detect_benchmark(locomo_path) == "locomo"  # by its pinned hash
    assert detect_benchmark(longmemeval_path) == "longmemeval"  # by shape
    sample = load_benchmark("sample")
    assert detect_benchmark(write_custom(sample, tmp_path / "a.jsonl")) == "custom"
    assert detect_benchmark(write_custom(sample, tmp_path / "a.json")) == "custom"
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"x": 1}]), encoding="utf-8")
    with pytest.raises(DatasetError, match="not LoCoMo, LongMemEval or the custom format"):
        detect_benchmark(other)


def test_lenient_loading_through_the_registry(tmp_path: Path) -> None:
    doc = json.loads(write_custom(load_benchmark("sample"), tmp_path / "s.json").read_text(encoding="utf-8"))
    doc["questions"][3]["evidence"] = ["nope"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"questions\[3\]\) \[question conv-1-q4\] \(field evidence\)"):
        load_benchmark("custom", bad)
    problems: list = []
    bench = load_benchmark("custom", bad, problems=problems)
    assert len(bench.questions) == len(doc["questions"]) - 1
    assert [p.question_id for p in problems] == ["conv-1-q4"]


def test_a_file_of_another_benchmark_is_named_as_such(tmp_path: Path) -> None:
    # A LongMemEval file read as LoCoMo said only "sample 0 has no sample_id": which benchmark the file is,
    # and how to read it as that, is what a newcomer who picked the wrong -b needs.
    custom = write_custom(load_benchmark("sample"), tmp_path / "mine.json")
    longmemeval = tmp_path / "lme.json"
    longmemeval.write_text(json.dumps([{"question_id": "q1", "question": "?", "answer": "a"}]), "utf-8")
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([{"qa": [], "conversation": {}}]), "utf-8")
    for name, path, found in (
        ("locomo", longmemeval, "longmemeval"),
        ("locomo", custom, "custom"),
        ("longmemeval-s", locomo, "locomo"),
        ("custom", locomo, "locomo"),
        ("beam", custom, "custom"),  # a file where a folder benchmark wants a folder
        ("locomo", tmp_path, None),  # a folder where a file benchmark wants a file
    ):
        # only locomo has a pin here: a file with another hash is warned about first
        pinned = name == "locomo" and path.is_file()
        warned = pytest.warns(DatasetWarning) if pinned else contextlib.nullcontext()
        with warned, pytest.raises(DatasetError) as raised:
            load_benchmark(name, path)
        message = str(raised.value)
        assert str(path) in message
        if found is None:
            assert "a folder, not a dataset file" in message
        else:
            assert f"it looks like a {found} dataset, not" in message and f"-b {found}" in message
    # a file of the right benchmark with a bad record names the record, and no other benchmark
    bad = tmp_path / "bad_lme.json"
    bad.write_text(json.dumps([{"question_id": "q1"}]), "utf-8")
    with pytest.raises(DatasetError) as raised:
        load_benchmark("longmemeval", bad)
    assert "looks like" not in str(raised.value)
    # leniently (bench-nb datasets verify -b NAME FILE), said first, before each record's problem
    problems: list = []
    with pytest.warns(DatasetWarning):
        assert not load_benchmark("locomo", longmemeval, problems=problems).questions
    assert "looks like a longmemeval dataset" in problems[0].message
    assert "no sample_id" in problems[1].message


def test_a_file_too_large_to_read_twice_is_not_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # naming another benchmark reads the file again: not a file of several GB (LongMemEval M) only for that
    from bench_nb.benchmarks import registry

    custom = write_custom(load_benchmark("sample"), tmp_path / "mine.json")
    monkeypatch.setattr(registry, "SNIFF_LIMIT", custom.stat().st_size - 1)
    with pytest.raises(DatasetError) as raised:
        load_benchmark("longmemeval", custom)
    assert "looks like" not in str(raised.value)
    monkeypatch.setattr(registry, "SNIFF_LIMIT", custom.stat().st_size)
    with pytest.raises(DatasetError, match="it looks like a custom dataset"):
        load_benchmark("longmemeval", custom)
