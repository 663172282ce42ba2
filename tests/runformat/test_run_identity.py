"""Two runs with one run id (the same ``-r`` in two ``--runs-dir``) are refused in one set, both paths named,
instead of being merged into one row by MemScore and ``bench-nb summary``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench_nb import load_runs, memscore, questions_df
from bench_nb.errors import RunFormatError
from run_writers import question, write_run


def _two_runs_one_id(tmp_path: Path) -> tuple[Path, Path]:
    a = write_run(tmp_path / "a" / "shared", [question(f"q{i}") for i in range(4)], run_id="shared")
    b = write_run(
        tmp_path / "b" / "shared", [question(f"q{i}", "incorrect") for i in range(4)], run_id="shared"
    )
    return a, b


def test_a_set_refuses_two_runs_with_one_id_naming_both(tmp_path: Path) -> None:
    a, b = _two_runs_one_id(tmp_path)
    for load in (
        lambda: load_runs([a, b]),
        lambda: questions_df([a, b]),
        lambda: memscore(questions_df([tmp_path / "a" / "*", tmp_path / "b" / "*"])),
    ):
        with pytest.raises(RunFormatError, match="run id 'shared' is also the id of") as err:
            load()
        assert str(a) in str(err.value) and str(b) in str(err.value)
    # Each loads on its own, and one path given twice is one run.
    assert len(load_runs([a, a])) == 1 and len(questions_df(b)) == 4


def test_bench_nb_summary_refuses_them(tmp_path: Path) -> None:
    a, b = _two_runs_one_id(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "bench_nb", "summary", str(a), str(b)], capture_output=True, text=True
    )
    assert out.returncode == 1
    assert "run id 'shared' is also the id of" in out.stderr and str(a) in out.stderr and str(b) in out.stderr
