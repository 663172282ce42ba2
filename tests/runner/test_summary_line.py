"""The last line of ``bench-nb run``: bench_nb's own accuracy (unscored answers left out, n/a when none was
scored), with MemoryBench's report.json figure named beside it where they differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_nb.cli import cli
from bench_nb.frames.questions import questions_df


def _run(tmp_path: Path, *extra: str) -> str:
    args = ["run", "-p", "sqlite", "-b", "sample", "--limit", "20", "-r", "r", "--runs-dir", str(tmp_path)]
    result = CliRunner().invoke(cli, [*args, "--no-progress", *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()[0]


def test_every_answer_unscored_reads_n_a_not_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_NB_TEST_UNSURE", "*")
    line = _run(tmp_path, "-j", "runner_fakes:UnsureJudge,f1")
    assert "accuracy n/a (no answer scored), 20 unscored" in line
    assert "MemoryBench's report.json: 0.0% (0/20, unscored counted as wrong)" in line
    assert "; accuracy 0.0%" not in line


def test_one_unscored_answer_is_left_out_of_the_accuracy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_NB_TEST_UNSURE", "conv-1-q2")
    line = _run(tmp_path, "-j", "runner_fakes:UnsureJudge,f1")
    q = questions_df(tmp_path / "r", backend="polars")
    scored = q.filter(~q["unscored"])
    correct = int(scored["correct"].sum())
    assert len(scored) == 19
    assert f"; accuracy {correct / 19:.1%} ({correct}/19 scored), 1 unscored;" in line
    report = json.loads((tmp_path / "r" / "report.json").read_text())["summary"]
    assert (report["correctCount"], report["totalQuestions"]) == (correct, 20)
    assert f"MemoryBench's report.json: {correct / 20:.1%} ({correct}/20, unscored counted as wrong)" in line


def test_without_unscored_answers_one_figure(tmp_path: Path) -> None:
    line = _run(tmp_path)
    report = json.loads((tmp_path / "r" / "report.json").read_text())["summary"]
    assert line.endswith(f"; accuracy {report['accuracy']:.1%} ({report['correctCount']}/20 scored)")
    assert "MemoryBench" not in line
