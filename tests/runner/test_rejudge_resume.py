"""``bench-nb rejudge --primary`` then ``bench-nb run -r``: the questions still pending are graded by the new
primary judge, the one the checkpoint names; resuming with the old judge order is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_nb.cli import cli
from bench_nb.errors import ComparisonError
from bench_nb.runformat.verdicts import read_verdicts

FAILING = ["conv-1-q1", "conv-1-q2", "conv-1-q3", "conv-1-q5"]


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _questions(run_dir: Path) -> dict[str, dict]:
    return json.loads((run_dir / "checkpoint.json").read_text())["questions"]  # type: ignore[no-any-return]


def test_resume_after_rejudge_primary_grades_pending_questions_with_the_new_primary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench_nb.benchmarks import load_benchmark

    text = {q.question_id: q.question for q in load_benchmark("sample", None).questions}
    monkeypatch.setenv("BENCH_NB_TEST_FAIL_SEARCH", "|".join(text[q] for q in FAILING))
    runs, run_dir = str(tmp_path), tmp_path / "r"
    base = ["--limit", "10", "-r", "r", "--runs-dir", runs, "--no-progress"]
    _invoke("run", "-p", "runner_fakes:LoggedProvider", "-b", "sample", "-j", "contains,f1", *base)
    assert sorted(
        q for q, r in _questions(run_dir).items() if r["phases"]["search"]["status"] == "failed"
    ) == (FAILING)
    _invoke("rejudge", str(run_dir), "-j", "f1", "--primary", "f1")
    monkeypatch.delenv("BENCH_NB_TEST_FAIL_SEARCH")
    with pytest.raises(ComparisonError, match="primary judge: 'f1' in the run, 'contains' now"):
        _invoke("run", "-p", "runner_fakes:LoggedProvider", "-b", "sample", "-j", "contains,f1", *base)
    out = _invoke("run", "-r", "r", "--runs-dir", runs, "--no-progress")
    assert "10 evaluated, 0 failed" in out
    checkpoint = json.loads((run_dir / "checkpoint.json").read_text())
    assert checkpoint["judge"] == "f1" and checkpoint["benchNb"]["primaryJudge"] == "f1"
    assert checkpoint["benchNb"]["judges"] == ["f1", "contains"]
    verdicts, _ = read_verdicts(run_dir)
    for qid, q in checkpoint["questions"].items():
        evaluate = q["phases"]["evaluate"]
        assert (evaluate.get("score"), evaluate["label"]) == (
            verdicts[(qid, "f1")]["score"],
            verdicts[(qid, "f1")]["label"],
        ), qid
    # The test means something: on the resumed questions the two judges disagree.
    assert any(verdicts[(q, "f1")]["score"] != verdicts[(q, "contains")]["score"] for q in FAILING)
