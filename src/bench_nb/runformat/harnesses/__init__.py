"""Importers for other harnesses' result files: EverMemOS's eval_results.json, Zep's grades, Mem0's results,
LongMemEval's judged answers (``*.eval-results-*``, JSON lines).

Each importer turns one file into a checkpoint of the run format held in memory, plus an ``ImportInfo`` (the
harness, its judge as named or ``unknown``, the judge's verdicts by replicate, what the file does not record).
``runformat.load.load_runs`` calls ``detect_format`` on every JSON file it is given and ``read_harness_file`` to
read it; LoCoMo questions get LoCoMo's canonical ids (``locomo_ids``), LongMemEval's keep their own, so runs
of different harnesses pair up.
docs/loading.md documents each format's mapping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from bench_nb.errors import Problem, RunFormatError
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.harnesses import amb, evermemos, lmev2, longmemeval, mem0, mem0_benchmarks, zep
from bench_nb.runformat.harnesses.common import ImportInfo, is_json_file, read_json
from bench_nb.runformat.harnesses.locomo_ids import LocomoIndex, load_locomo_index

__all__ = [
    "HARNESS_FORMATS",
    "ImportInfo",
    "LocomoIndex",
    "detect_format",
    "is_json_file",
    "load_locomo_index",
    "needs_locomo",
    "read_harness_file",
    "read_harness_runs",
]

HarnessFormat = Literal["evermemos", "zep", "mem0", "longmemeval-v2", "longmemeval", "amb", "mem0-benchmarks"]
HARNESS_FORMATS: tuple[HarnessFormat, ...] = (
    "evermemos",
    "zep",
    "mem0",
    "longmemeval-v2",
    "longmemeval",
    "amb",
    "mem0-benchmarks",
)
_LINES = ("longmemeval",)  # JSON-lines formats: read line by line, detected by name or first line
_OWN_IDS = ("longmemeval-v2", "longmemeval")  # formats on their benchmark's own ids: no LoCoMo dataset
_READERS = {"evermemos": evermemos, "zep": zep, "mem0": mem0, "amb": amb}


def detect_format(path: Path, data: Any = None) -> HarnessFormat | None:
    """Which harness wrote this file (None: none of them). ``data``: the file already decoded (JSON files)."""
    if data is None and _is_judged_lines(path):
        return "longmemeval"
    if data is None:
        try:
            data = read_json(path)
        except RunFormatError:
            return None
    if mem0_benchmarks.looks_like(data):
        return "mem0-benchmarks"
    for name, reader in _READERS.items():
        if reader.looks_like(data):
            return name  # type: ignore[return-value]
    return None


def _is_judged_lines(path: Path) -> bool:
    """LongMemEval's judged answers: named ``*.eval-results-*``, or a ``.jsonl`` file whose first line is one."""
    return longmemeval.has_name(path) or (
        path.name.endswith((".jsonl", ".jsonl.gz")) and longmemeval.first_line_looks_like(path)
    )


def needs_locomo(path: Path, fmt: str | None) -> bool:
    """Whether reading this file may need LoCoMo's dataset (the LongMemEval formats never do)."""
    if fmt is not None:
        return fmt not in _OWN_IDS
    if path.is_dir():
        return lmev2.run_file(path) is None
    return not (lmev2.is_run_file(path) or path.name == lmev2.AGGREGATED or _is_judged_lines(path))


def read_harness_file(
    path: Path, fmt: HarnessFormat | None, index: LocomoIndex | None
) -> tuple[Checkpoint, ImportInfo, list[Problem]]:
    """Read one harness file (``fmt`` None: detect it). Rows that cannot be read or matched become problems.

    Raises:
        RunFormatError: the file is not JSON, not in the format asked for, or (Zep, Mem0) no LoCoMo dataset.
    """
    problems: list[Problem] = []
    if path.is_dir() and (found := lmev2.run_file(path)) is not None:
        path = found
    elif path.name == lmev2.AGGREGATED and (found := lmev2.run_file(path.parent)) is not None:
        path = found  # the summary names the run beside it
    if fmt == "longmemeval-v2" or (fmt is None and lmev2.is_run_file(path)):
        # JSON lines, ids of its own: no LoCoMo matching (LongMemEval-V2's question ids are the benchmark's).
        checkpoint, info = lmev2.read(path, problems)
        return checkpoint, info, problems
    if path.is_dir():
        path = path / evermemos.FILENAME
    if fmt in _LINES or (fmt is None and _is_judged_lines(path)):
        checkpoint, info = longmemeval.read(path, problems)
        return checkpoint, info, problems
    data = read_json(path)
    fmt = fmt or detect_format(path, data)
    if fmt == "mem0-benchmarks":  # one run per retrieval depth: the first here (read_harness_runs: all)
        runs = mem0_benchmarks.read_all(path, problems, data)
        if not runs:
            raise RunFormatError(path, "no retrieval depth in metadata.top_k_cutoffs or metrics_by_cutoff")
        return runs[0][0], runs[0][1], problems
    if fmt is None:
        raise RunFormatError(
            path,
            "not a run format bench_nb reads: not a checkpoint/report.json, nor an EverMemOS eval_results.json, "
            "Zep grades, Mem0 results, LongMemEval judged file, AMB output or mem0 memory-benchmarks results "
            "(pass format= to force one)",
        )
    if fmt not in _READERS:
        raise RunFormatError(path, f"format must be one of {', '.join(HARNESS_FORMATS)} here, not {fmt!r}")
    if not _READERS[fmt].looks_like(data):
        raise RunFormatError(path, f"not a {fmt} file: {(_READERS[fmt].__doc__ or fmt).splitlines()[0]}")
    checkpoint, info = _READERS[fmt].read(path, index, problems, data)
    return checkpoint, info, problems


def read_harness_runs(
    path: Path, fmt: HarnessFormat | None, index: LocomoIndex | None
) -> list[tuple[Checkpoint, ImportInfo, list[Problem]]]:
    """Every run of one harness file: mem0's memory-benchmarks file holds one per retrieval depth (its
    problems go with the first); any other file, one (``read_harness_file``)."""
    if not path.is_dir() and fmt in (None, "mem0-benchmarks") and is_json_file(path):
        data = read_json(path)
        if fmt == "mem0-benchmarks" or mem0_benchmarks.looks_like(data):
            problems: list[Problem] = []
            runs = mem0_benchmarks.read_all(path, problems, data)
            if not runs:
                raise RunFormatError(
                    path, "no retrieval depth in metadata.top_k_cutoffs or metrics_by_cutoff"
                )
            return [(ck, info, problems if i == 0 else []) for i, (ck, info) in enumerate(runs)]
    return [read_harness_file(path, fmt, index)]
