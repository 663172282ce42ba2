"""``bench-nb gate``, ``receipt`` and ``verify`` on other harnesses' result files (Zep's grades, Mem0's results),
which need LoCoMo's dataset file: ``--dataset`` (as ``bench-nb export --dataset``). The real CLI in
subprocesses, on the shared Zep and Mem0 files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
    )


@pytest.fixture(scope="module")
def files(harness_results: Path, locomo_path: Path) -> tuple[Path, Path, Path]:
    return (
        harness_results / "zep" / "zep_locomo_grades.json",
        harness_results / "mem0" / "results.json",
        locomo_path,
    )


def test_gate_reads_zep_and_mem0_files_with_dataset(files: tuple[Path, Path, Path]) -> None:
    zep, mem0, locomo = files
    same = cli("gate", zep, zep, "--dataset", locomo)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "| all | 1540 | 10 | 75.1% | 75.1% |" in same.stdout
    both = cli("gate", zep, mem0, "--dataset", locomo, "--json")
    assert both.returncode == 2, both.stdout + both.stderr  # loaded: graded by different judges
    out = json.loads(both.stdout)
    assert out["verdict"] == "incomparable"
    assert any(
        "different judges: BASE is graded by 'unknown (zep)', NEW by 'unknown (mem0)'" in r
        for r in out["reasons"]
    )
    # without it, the error says what to give
    bare = cli("gate", zep, mem0)
    assert bare.returncode == 2
    assert "expected one run, found 0" in bare.stderr and "--dataset on the command line" in bare.stderr


def test_receipt_and_verify_of_a_mem0_file_with_dataset(
    files: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, mem0, locomo = files
    receipt = tmp_path / "mem0.receipt.json"
    made = cli("receipt", mem0, "-o", receipt, "--dataset", locomo)
    assert made.returncode == 0, made.stderr
    body = json.loads(receipt.read_bytes())["receipt"]
    assert body["run"]["writtenBy"] and len(body["questions"]) > 1000
    ok = cli("verify", receipt, mem0, "--dataset", locomo)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"every number recomputed from {mem0}" in ok.stdout
    bare = cli("verify", receipt, mem0)
    assert bare.returncode == 1 and "--dataset on the command line" in bare.stderr
    assert cli("receipt", mem0, "-o", tmp_path / "x.json").returncode == 1
