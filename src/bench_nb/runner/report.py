"""The report.json of a bench_nb run: MemoryBench's report, built from the benchmark the run asked.

``build_memorybench_report`` takes question text, type and ground truth from a ``MemoryBenchDataset``;
``benchmark_dataset`` makes one from a loaded ``records.Benchmark``. For bench_nb's runs the types are the
benchmark's TRUE labels (LoCoMo's real categories), not MemoryBench's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench_nb.records import Benchmark
from bench_nb.runformat.dataset import DatasetQuestion, MemoryBenchDataset
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.journal import write_atomic
from bench_nb.runformat.jsjson import dumps_js
from bench_nb.runformat.report import build_memorybench_report

REPORT = "report.json"


def type_registry(benchmark: Benchmark) -> dict[str, dict[str, str]]:
    """The benchmark's ``questionTypeRegistry``: its own when it has one, else its types in order of appearance."""
    if benchmark.type_registry:
        return benchmark.type_registry
    registry: dict[str, dict[str, str]] = {}
    for q in benchmark.questions:
        if q.question_type not in registry:
            registry[q.question_type] = {
                "id": q.question_type,
                "alias": q.question_type,
                "description": q.question_type,
            }
    return registry


def benchmark_dataset(benchmark: Benchmark) -> MemoryBenchDataset:
    """A loaded benchmark as the ``MemoryBenchDataset`` the report builder reads (true labels)."""
    questions = [
        DatasetQuestion(
            question_id=q.question_id,
            question_type=q.question_type,
            question=q.question,
            ground_truth=q.answer,
            norm_type=q.norm_type,  # type: ignore[arg-type]
            category=q.category,
        )
        for q in benchmark.questions
    ]
    return MemoryBenchDataset(benchmark.name, questions, type_registry(benchmark))


def write_report(run_dir: Path, checkpoint: Checkpoint, benchmark: Benchmark) -> tuple[Path, dict[str, Any]]:
    """Build and atomically write ``report.json`` (as MemoryBench prints it); returns its path and content."""
    report = build_memorybench_report(checkpoint, benchmark_dataset(benchmark))
    path = run_dir / REPORT
    write_atomic(path, (dumps_js(report) + "\n").encode("utf-8"))
    return path, report
