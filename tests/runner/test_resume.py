"""Resume: results files a kill lost are rewritten from the checkpoint; a finished run is left as it is."""

from __future__ import annotations

import json
from pathlib import Path

from runner_fakes import CountingProvider, make_benchmark, pet_question

from bench_nb.errors import ProviderError
from bench_nb.runner import RetryPolicy, run_benchmark

FAST_RETRY = RetryPolicy(max_attempts=2, initial_s=0.001, max_s=0.002, jitter_s=0.001)


def _run(tmp_path: Path, provider: CountingProvider):  # type: ignore[no-untyped-def]
    return run_benchmark(
        provider,
        make_benchmark(2, 4),
        judges="contains,f1",
        runs_dir=tmp_path / "runs",
        run_id="r1",
        retry=FAST_RETRY,
        progress=False,
    )


def _stamps(run_dir: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(run_dir)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def test_a_no_op_resume_of_a_finished_run_rebuilds_nothing(tmp_path: Path) -> None:
    first = _run(tmp_path, CountingProvider())
    before = _stamps(first.run_dir)
    assert {"checkpoint.json", "report.json"} <= set(before)
    again = CountingProvider()
    result = _run(tmp_path, again)
    assert (result.status, result.evaluated, result.failed, result.report_path) == (
        "completed",
        8,
        0,
        first.report_path,
    )
    assert not again.calls
    assert _stamps(first.run_dir) == before  # not one file rewritten, not even with the same bytes


def test_a_finished_run_without_its_report_gets_it_back(tmp_path: Path) -> None:
    first = _run(tmp_path, CountingProvider())
    report = json.loads((first.run_dir / "report.json").read_text())
    (first.run_dir / "report.json").unlink()
    _run(tmp_path, CountingProvider())
    rebuilt = json.loads((first.run_dir / "report.json").read_text())
    assert rebuilt["summary"] == report["summary"] and rebuilt["evaluations"] == report["evaluations"]


def test_missing_results_files_are_rewritten_from_the_checkpoint(tmp_path: Path) -> None:
    bad = pet_question(1, 2)
    failing = CountingProvider(fail={"search": lambda q: ProviderError("boom") if q == bad else None})
    first = _run(tmp_path, failing)
    assert first.failed == 1
    results = first.run_dir / "results"
    files = {p.name: p.read_bytes() for p in results.iterdir()}
    assert len(files) == 7
    lost = sorted(files)[:3]  # a kill after the search was journaled, before its file was written
    for name in lost:
        (results / name).unlink()
    second = _run(tmp_path, CountingProvider())
    assert (second.evaluated, second.failed) == (8, 0)
    now = {p.name: p.read_bytes() for p in results.iterdir()}
    assert len(now) == 8
    assert {name: now[name] for name in files} == files  # byte for byte what the search phase wrote


def test_missing_results_files_of_a_finished_run_are_rewritten(tmp_path: Path) -> None:
    first = _run(tmp_path, CountingProvider())
    results = first.run_dir / "results"
    files = {p.name: p.read_bytes() for p in results.iterdir()}
    for name in list(files)[::2]:
        (results / name).unlink()
    _run(tmp_path, CountingProvider())
    assert {p.name: p.read_bytes() for p in results.iterdir()} == files


def test_temporary_files_a_killed_writer_left_are_removed_on_the_next_start(tmp_path: Path) -> None:
    first = _run(tmp_path, CountingProvider())
    left = [
        first.run_dir / ".checkpoint.json.4242.140.tmp",
        first.run_dir / ".report.json.4242.140.tmp",
        first.run_dir / "results" / ".h0-q0.json.4242.141.tmp",
    ]
    for path in left:
        path.write_bytes(b"x" * 1000)
    _run(tmp_path, CountingProvider())
    assert not [p for p in left if p.exists()]
