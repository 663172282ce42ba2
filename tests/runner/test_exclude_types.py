"""``--exclude-types``: LoCoMo's scored set as the literature reports it (categories 1-4, 1,540 questions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_nb.benchmarks import load_benchmark
from bench_nb.cli import cli
from bench_nb.errors import BenchNbError
from bench_nb.runner.selection import exclude_types


def test_excluding_adversarial_leaves_the_literatures_1540(locomo_path: Path) -> None:
    bench = load_benchmark("locomo", locomo_path)
    kept = exclude_types(bench, "adversarial")
    assert len(bench.questions) == 1986 and len(kept.questions) == 1540
    assert {q.category for q in kept.questions} == {1, 2, 3, 4}
    assert exclude_types(bench, ["Abstention"]).questions == kept.questions  # the normalised name, any case
    with pytest.raises(
        BenchNbError, match=r"no question type 'adversarail' \(did you mean 'adversarial'\?\)"
    ):
        exclude_types(bench, "adversarail")


def test_a_run_excluding_a_type_records_and_resumes_its_questions(tmp_path: Path, locomo_path: Path) -> None:
    args = ["run", "-p", "no-memory", "-b", "locomo", "--dataset", str(locomo_path), "--no-progress"]
    args += ["--exclude-types", "adversarial", "--limit", "60", "-r", "loc", "--runs-dir", str(tmp_path)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "loc: completed, 60 evaluated" in result.output
    checkpoint = json.loads((tmp_path / "loc" / "checkpoint.json").read_text())
    types = {q["questionType"] for q in checkpoint["questions"].values()}
    assert len(checkpoint["targetQuestionIds"]) == 60 and "adversarial" not in types
    assert checkpoint["benchNb"]["invocation"]["excludeTypes"] == ["adversarial"]
    # the first 60 of the benchmark include adversarial questions: these are the first 60 of the rest
    rest = exclude_types(load_benchmark("locomo", locomo_path), "adversarial").questions[:60]
    assert checkpoint["targetQuestionIds"] == [q.question_id for q in rest]
    again = CliRunner().invoke(cli, ["run", "-r", "loc", "--runs-dir", str(tmp_path)], catch_exceptions=False)
    assert again.exit_code == 0 and "loc: completed, 60 evaluated" in again.output
