"""Runs written before a run's settings became one ``RunSpec`` (issue 30) load and resume unchanged.

``tests/fixtures/old_runs`` was made once, at commit f68832f, by ``tests/fixtures/make_old_runs.py``: ``finished``
(sqlite on the sample, ``--sample 1 -k 4 --isolate-per-question``) and ``killed`` (runner_fakes' plugins,
``--sample 2 -k 4 --judge-replicates 2``, SIGKILLed mid-run: a checkpoint and a journal). The fingerprints and
settings lines below are what that code read from them; ``old_runs_resumed.json`` is what it made of
``killed`` on a resume (the clock left out).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from runner_fakes import LoggedAnswerer, completed_phases
from test_resume import _stamps, _timeless

from bench_nb.cli import cli
from bench_nb.errors import BenchNbError
from bench_nb.frames.questions import questions_frame
from bench_nb.models.prompt import CONTEXT_FORMAT, answer_prompt_hash
from bench_nb.runformat.load import read_run
from bench_nb.runformat.spec import differences, read_spec
from bench_nb.runner import run_benchmark
from bench_nb.tables.settings import run_settings, settings_line

OLD = Path(__file__).parents[1] / "fixtures" / "old_runs"
GOLDEN = Path(__file__).parents[1] / "fixtures" / "old_runs_resumed.json"
FINGERPRINTS = {"finished": "f794deb601e1", "killed": "dc0914e17a90"}
LINES = {
    "finished": "The run (sqlite): k=4, answerer extractive, answer prompt b602a500ac7a, judge contains (no prompt), "
    "question set 27c050031ab9 (6 questions); settings fingerprint f794deb601e1",
    "killed": "The run (logged-sqlite): k=4, answerer extractive, answer prompt b602a500ac7a, judge contains "
    "(no prompt), question set 60efc60d2450 (12 questions); settings fingerprint dc0914e17a90",
}


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    shutil.copytree(OLD, tmp_path / "runs")
    return tmp_path / "runs"


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_an_old_run_loads_with_the_settings_it_was_made_with(name: str) -> None:
    q = questions_frame(OLD / name)
    assert q["settings_fingerprint"].unique().to_list() == [FINGERPRINTS[name]]
    assert settings_line(run_settings([OLD / name])) == LINES[name]


def _resumed(run_dir: Path) -> dict[str, Any]:
    ck = json.loads((run_dir / "checkpoint.json").read_text())
    report = json.loads((run_dir / "report.json").read_text())
    return {
        "benchNb": ck["benchNb"],
        "questions": {qid: _timeless(q, run_dir.parent) for qid, q in sorted(ck["questions"].items())},
        "summary": report["summary"],
    }


def test_a_killed_old_run_resumes_with_its_own_settings_into_the_same_run(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_NB_QUIET", "1")
    stored = json.loads((OLD / "killed" / "checkpoint.json").read_text())["benchNb"]
    done = completed_phases(runs / "killed")
    result = run_benchmark(run_id="killed", runs_dir=runs)
    assert (result.status, result.evaluated, result.failed, result.target) == ("completed", 12, 0, 12)
    assert completed_phases(runs / "killed") > done
    resumed = _resumed(runs / "killed")
    assert resumed["benchNb"] == stored  # the settings the run was made with, unchanged
    assert resumed == json.loads(GOLDEN.read_text())
    assert questions_frame(runs / "killed")["settings_fingerprint"].unique().to_list() == [
        FINGERPRINTS["killed"]
    ]


def test_a_finished_old_run_resumes_to_nothing_from_a_notebook_and_from_the_cli(runs: Path) -> None:
    before = _stamps(runs / "finished")
    result = run_benchmark(run_id="finished", runs_dir=runs, progress=False)
    assert (result.status, result.evaluated, result.target) == ("completed", 6, 6)
    out = CliRunner().invoke(
        cli, ["run", "-r", "finished", "--runs-dir", str(runs), "-k", "4", "--no-progress"]
    )
    assert out.exit_code == 0, out.output
    assert "finished: completed, 6 evaluated" in out.output
    assert _stamps(runs / "finished") == before  # not one file rewritten
    assert read_run(runs / "finished").checkpoint.benchNb == read_run(OLD / "finished").checkpoint.benchNb  # type: ignore[union-attr]


def test_an_old_run_resumed_with_an_answerer_object_keeps_its_context_format(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Runs made before context formats had versions record none: their remaining questions are answered in
    # format 1 (a hit's date twice), as their first ones were, by a copy of the answerer object given.
    monkeypatch.setenv("BENCH_NB_QUIET", "1")
    given = LoggedAnswerer()
    result = run_benchmark(run_id="killed", runs_dir=runs, answerer=given)
    assert (result.status, result.evaluated) == ("completed", 12)
    assert _resumed(runs / "killed") == json.loads(GOLDEN.read_text())
    assert given.context_format == CONTEXT_FORMAT  # the caller's object is not changed


def test_a_run_in_a_context_format_this_version_does_not_know_is_refused(runs: Path) -> None:
    path = runs / "killed" / "checkpoint.json"
    ck = json.loads(path.read_text())
    ck["benchNb"]["contextFormat"] = 7
    path.write_text(json.dumps(ck))
    with pytest.raises(BenchNbError, match=r"killed: unknown context format 7; known: 1, 2"):
        run_benchmark(run_id="killed", runs_dir=runs, progress=False)


def test_a_new_run_shows_each_date_once_and_is_not_like_for_like_with_an_old_one(runs: Path) -> None:
    result = run_benchmark(
        "sqlite",
        "sample",
        k=4,
        sample_per_type=1,
        isolate_per_question=True,
        run_id="new",
        runs_dir=runs,
        progress=False,
    )
    assert (result.status, result.evaluated) == ("completed", 6)
    new, old = read_run(runs / "new"), read_run(OLD / "finished")
    assert new.checkpoint.benchNb["contextFormat"] == CONTEXT_FORMAT  # type: ignore[union-attr]
    assert new.checkpoint.benchNb["promptHashes"] == {"answer": answer_prompt_hash()}  # type: ignore[union-attr]
    assert differences([read_spec(old), read_spec(new)]) == [
        f"answer prompt differs: finished=b602a500ac7aed79, new={answer_prompt_hash()}"
    ]
    context = {
        qid: (q.phases.answer.contextTokens, new.checkpoint.questions[qid].phases.answer.contextTokens)  # type: ignore[union-attr]
        for qid, q in old.checkpoint.questions.items()  # type: ignore[union-attr]
    }
    assert all(before > after for before, after in context.values()), context
    # and it resumes in its own format: a second resume finds nothing to do
    assert run_benchmark(run_id="new", runs_dir=runs, progress=False).evaluated == 6
