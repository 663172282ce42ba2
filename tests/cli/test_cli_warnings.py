"""bench_nb's warnings on the command line: one ``warning:`` line each, not a Python source location, and a
problem a command prints itself is not printed twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from run_writers import question, write_run


def _bench_nb(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from bench_nb.cli import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


def _damaged_run(tmp_path: Path) -> Path:
    run = write_run(tmp_path / "r", [question("q1"), question("q2"), question("q3")])
    ck = json.loads((run / "checkpoint.json").read_text())
    ck["questions"]["q2"]["phases"]["evaluate"]["score"] = "high"
    (run / "checkpoint.json").write_text(json.dumps(ck))
    return run


def test_a_command_that_prints_its_problems_prints_each_once(tmp_path: Path) -> None:
    run = _damaged_run(tmp_path)
    result = _bench_nb("summary", str(run))
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("[question q2] (field questions.q2.phases.evaluate.score)") == 1
    assert "problem: " in result.stderr and "RunFormatWarning" not in result.stderr


def test_a_warning_is_one_line_of_its_own(tmp_path: Path) -> None:
    run = _damaged_run(tmp_path)
    result = _bench_nb("plan", "--runs", str(run), "--questions", "300", "--haystacks", "3")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("warning: 2 problems loading runs")
    assert lines[1] == (
        f"  - {run / 'checkpoint.json'} [question q2] (field questions.q2.phases.evaluate.score): "
        "Expected `float | null`, got `str`; question skipped"
    )
    assert "RunFormatWarning" not in result.stderr and ".py:" not in result.stderr  # no source location


def test_other_warnings_keep_pythons_form() -> None:
    code = (
        "import warnings; from bench_nb.cli import _show_warning; warnings.showwarning = _show_warning;"
        "warnings.warn('not ours')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "<string>:1: UserWarning: not ours" in out.stderr


def test_a_user_warning_from_bench_nb_is_a_clean_line_too(tmp_path: Path, locomo_path: Path) -> None:
    copy = tmp_path / "locomo10.json"
    copy.write_bytes(locomo_path.read_bytes() + b"\n")  # valid, but not the pinned file
    result = _bench_nb(
        "run", "--dry-run", "-p", "no-memory", "-b", "locomo", "--dataset", str(copy), "--limit", "5"
    )
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stderr.splitlines() if "differs from the pinned locomo dataset" in x)
    assert line.startswith(f"warning: {copy}: sha256 ")
    assert "DatasetWarning" not in result.stderr and "registry.py" not in result.stderr


def test_a_warning_on_the_command_line_does_not_speak_python(tmp_path: Path) -> None:
    # "(strict=True raises instead)" and "(all of them are in this warning's .problems)" are for Python code:
    # no command takes strict=True, and a terminal has no warning object to look into
    for i in range(12):  # more problems than a warning lists
        run = write_run(tmp_path / f"r{i}", [question("q1"), question("q2")], run_id=f"r{i}")
        ck = json.loads((run / "checkpoint.json").read_text())
        ck["questions"]["q2"]["phases"]["evaluate"]["score"] = "high"
        (run / "checkpoint.json").write_text(json.dumps(ck))
    result = _bench_nb("plan", "--runs", str(tmp_path / "r*"), "--questions", "300", "--haystacks", "3")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(
        "warning: 24 problems loading runs; what they name was skipped or read as noted:"
    )
    assert "  ... and 14 more\n" in result.stderr
    assert "strict=True" not in result.stderr and ".problems" not in result.stderr


def test_export_prints_each_problem_once(tmp_path: Path) -> None:
    # export prints every problem itself ("problem: ..."): the lenient load's warning listed them all again
    run = _damaged_run(tmp_path)
    result = _bench_nb("export", str(run), "--to", str(tmp_path / "store"))
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("[question q2] (field questions.q2.phases.evaluate.score)") == 1, result.stderr
    assert "problem: " in result.stderr and "warning: " not in result.stderr
    assert "written: r" in result.stdout
