"""A comparison's runs resume and re-answer from their own directories, as a run of ``bench-nb run`` does:
each records the benchmark's name, its file and the question selection (the runs share one loaded copy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import exit_code

from bench_nb.runformat.reanswer import REANSWER_FILE


def _invocation(run_dir: Path) -> dict:
    return json.loads((run_dir / "checkpoint.json").read_text())["benchNb"]["invocation"]


def test_a_compare_run_resumes_and_reanswers_with_its_id_alone(
    tmp_path: Path, locomo_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the benchmark cache (data/benchmarks) is here: a download would show
    compare = ["compare", "-p", "sqlite,no-memory", "-b", "locomo", "--dataset", locomo_path]
    selection = ["--limit", "12", "--exclude-types", "adversarial", "--no-progress"]
    assert exit_code([*compare, *selection, "--compare-id", "c1"]) == 0
    runs = tmp_path / "data" / "runs"
    for run in ("c1-sqlite", "c1-no-memory"):
        inv = _invocation(runs / run)
        assert (inv["benchmark"], inv["dataset"], inv["excludeTypes"]) == (
            "locomo",
            str(locomo_path),
            ["adversarial"],
        )
    # A question left unanswered (as a killed run leaves it): `run -r` alone finishes it.
    ck_path = runs / "c1-sqlite" / "checkpoint.json"
    ck = json.loads(ck_path.read_text())
    qid = ck["targetQuestionIds"][0]
    for phase in ("answer", "evaluate"):
        ck["questions"][qid]["phases"][phase] = {"status": "pending"}
    ck["status"] = "running"
    ck_path.write_text(json.dumps(ck))
    capsys.readouterr()
    assert exit_code(["run", "-r", "c1-sqlite", "--no-progress"]) == 0
    out = capsys.readouterr()
    assert "c1-sqlite: completed, 12 evaluated, 0 failed" in out.out, out.err
    assert json.loads(ck_path.read_text())["questions"][qid]["phases"]["evaluate"]["status"] == "completed"
    # reanswer reads the run's own file: nothing downloaded
    assert exit_code(["reanswer", runs / "c1-sqlite"]) == 0
    assert (runs / "c1-sqlite" / REANSWER_FILE).is_file()
    assert not (tmp_path / "data" / "benchmarks").exists()


def test_a_compare_run_records_its_limit(tmp_path: Path, locomo_path: Path) -> None:
    args = ["compare", "-p", "sqlite,no-memory", "-b", "locomo", "--dataset", locomo_path, "--limit", "5"]
    assert exit_code([*args, "--compare-id", "c2", "--runs-dir", tmp_path / "runs", "--no-progress"]) == 0
    inv = _invocation(tmp_path / "runs" / "c2-no-memory")
    assert (inv["benchmark"], inv["dataset"], inv["limit"]) == ("locomo", str(locomo_path), 5)
