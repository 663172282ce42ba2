"""``bench-nb export`` and ``bench-nb report`` exit non-zero with one ``error:`` line when nothing they were
asked to do succeeded, as ``sweep``, ``roi run`` and ``rejudge`` do; run as real processes on real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "synthetic-sqlite"
SRC = Path(__file__).resolve().parents[2] / "src"


def _bench_nb(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PYTHONPATH": str(SRC), "BENCH_NB_QUIET": "1"}
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    )


def _errors(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("error:")]


def test_export_fails_with_one_error_line_when_no_run_is_exported(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "checkpoint.json").write_text("{")
    for source in ("bad", "nothing/*"):
        done = _bench_nb(tmp_path, "export", source, "--to", "store")
        assert done.returncode == 1, done.stderr
        assert _errors(done) == ["error: no run exported"]
        assert f"problem: {source}" in done.stderr
        assert not (tmp_path / "store").exists()  # a refused first export leaves nothing
    done = _bench_nb(tmp_path, "export", "bad", str(RUN), "--to", "store")  # one run exported: success
    assert done.returncode == 0 and _errors(done) == [], done.stderr
    assert "1 run(s) written, 0 unchanged, 1 problem(s)" in done.stdout


def test_report_all_fails_with_one_error_line_when_no_report_is_built(tmp_path: Path) -> None:
    (tmp_path / "reports.toml").write_text(
        '[[report]]\nname = "compare"\n[report.parameters]\ntitel = "Weekly"\n[[report]]\nname = "nope"\n'
    )
    done = _bench_nb(tmp_path, "report", "--all")
    assert done.returncode == 1
    assert "0 built, 2 failed" in done.stdout
    assert _errors(done) == ["error: no report was built (see FAILED above)"]
    assert done.stderr.count("FAILED  ") == 2 and not (tmp_path / "reports").exists()


def test_report_fails_with_one_error_line_when_its_runs_are_not_found(tmp_path: Path) -> None:
    done = _bench_nb(tmp_path, "report", "compare", "-p", "runs", "nothing/*", "-o", "out/compare.html")
    assert done.returncode == 1
    [error] = _errors(done)
    assert error.startswith("error: no runs at 'nothing/*'")
    assert not (tmp_path / "out").exists()
