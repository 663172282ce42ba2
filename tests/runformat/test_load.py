"""Finding and reading runs: sources (dirs, globs, runs folders, manifests), strict and lenient modes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench_nb import load_runs, questions_df
from bench_nb.errors import RunFormatError, RunFormatWarning
from bench_nb.frames.questions import questions_frame, runs_frame
from bench_nb.runformat.load import read_run, read_run_deferred
from run_writers import question, write_run


def _bad_promptTokens(run_dir: Path, qid: str) -> None:
    ck = json.loads((run_dir / "checkpoint.json").read_text())
    ck["questions"][qid]["phases"]["answer"]["promptTokens"] = "many"
    (run_dir / "checkpoint.json").write_text(json.dumps(ck, indent=2))


def test_strict_error_names_file_question_and_field(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2"), question("q3")])
    _bad_promptTokens(run, "q2")
    for load in (lambda: load_runs(run, strict=True), lambda: questions_df(run, strict=True)):
        with pytest.raises(RunFormatError) as info:
            load()
        err = info.value
        assert err.path == str(run / "checkpoint.json")
        assert err.field == "questions.q2.phases.answer.promptTokens"
        assert str(err).startswith(
            f"{run / 'checkpoint.json'} (field questions.q2.phases.answer.promptTokens):"
        )
        assert "question q2" in str(err) and "Expected `int | null`, got `str`" in str(err)


def test_lenient_returns_the_good_questions_and_the_problems(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2"), question("q3", "incorrect")])
    _bad_promptTokens(run, "q2")
    with pytest.warns(RunFormatWarning, match="1 target question\\(s\\) have no entry, e.g. q2"):
        runs = load_runs(run)
    assert len(runs) == 1 and list(runs[0].checkpoint.questions) == ["q1", "q3"]  # type: ignore[union-attr]
    (missing,) = [p for p in runs.all_problems if p.field == "questions"]
    assert "1 target question(s) have no entry, e.g. q2" in missing.message
    (bad,) = [p for p in runs.all_problems if p.question_id == "q2"]
    assert bad.field == "questions.q2.phases.answer.promptTokens" and "question skipped" in bad.message
    with pytest.warns(RunFormatWarning, match="1 target question\\(s\\) have no entry, e.g. q2"):
        df = questions_df(run, backend="polars")
    assert df["question_id"].to_list() == ["q1", "q3"] and df["correct"].to_list() == [True, False]


def test_a_field_the_frames_do_not_read_is_checked_by_load_runs_only(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    ck = json.loads((run / "checkpoint.json").read_text())
    ck["questions"]["q1"]["phases"]["ingest"]["completedSessions"] = "s1"  # should be a list
    (run / "checkpoint.json").write_text(json.dumps(ck))
    with pytest.raises(RunFormatError, match="completedSessions"):
        load_runs(run, strict=True)
    assert questions_df(run, strict=True, backend="polars")["question_id"].to_list() == ["q1", "q2"]


def test_run_level_errors_raise_in_both_modes(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1")])
    ck = json.loads((run / "checkpoint.json").read_text())
    ck["status"] = "exploded"
    (run / "checkpoint.json").write_text(json.dumps(ck))
    with pytest.raises(RunFormatError, match="status") as info:
        read_run(run)
    assert info.value.path == str(run / "checkpoint.json")
    (run / "checkpoint.json").write_text("{not json")
    with pytest.raises(RunFormatError):
        read_run_deferred(run)
    with pytest.warns(RunFormatWarning, match="checkpoint.json"):
        runs = load_runs(run)  # lenient load_runs lists the run that could not be read
    assert len(runs) == 0 and runs.problems[0].path == str(run / "checkpoint.json")


def test_missing_results_files_are_problems_not_errors_while_the_checkpoint_has_the_results(
    tmp_path: Path,
) -> None:
    run = write_run(
        tmp_path / "r", [question("q1"), question("q2"), question("q3", "failed", failed_phase="search")]
    )
    (run / "results" / "q2.json").unlink()
    for read in (read_run, read_run_deferred):
        loaded = read(run, strict=True)
        (p,) = loaded.problems
        assert (
            p.question_id == "q2" and p.field == "phases.search.resultFile" and p.path == str(run / "results")
        )
        assert p.message.startswith("1 completed search(es) have no results file")
    shutil.rmtree(run / "results")
    (p,) = read_run(run).problems
    assert p.message.startswith("2 completed search(es)")  # q3's search failed: it has no file to miss
    with pytest.warns(RunFormatWarning, match="2 completed search\\(es\\) have no results file"):
        counts = questions_df(run, backend="polars")["search_result_count"].to_list()
    assert counts == [1, 1, None]


def test_a_search_lost_from_both_results_and_checkpoint_is_an_error_in_strict_mode(tmp_path: Path) -> None:
    q = question("q1")
    q.phases.search.results = None
    run = write_run(tmp_path / "r", [q, question("q2")], results_files=False)
    with pytest.raises(RunFormatError, match="search results are lost") as info:
        read_run(run, strict=True)
    assert info.value.field == "phases.search.resultFile"
    lenient = read_run(run)
    assert [p.question_id for p in lenient.problems] == ["q1", "q2"]


def test_runs_without_result_file_names_report_nothing(tmp_path: Path) -> None:
    q = question("q1")
    q.phases.search.resultFile = None  # bench_nb's fixture runs and old runs name no file
    run = write_run(tmp_path / "r", [q], results_files=False)
    assert read_run(run, strict=True).problems == []


def _three_runs(root: Path) -> list[Path]:
    return [
        write_run(root / name, [question(f"{name}-q1")], provider=name)
        for name in ("c-run", "a-run", "b-run")
    ]


def test_runs_folder_globs_and_files(tmp_path: Path) -> None:
    runs_dir = tmp_path / "data" / "runs"
    _three_runs(runs_dir)
    (runs_dir / "not-a-run").mkdir()
    by_folder = load_runs(runs_dir)
    assert [r.run_id for r in by_folder] == ["a-run", "b-run", "c-run"] and not by_folder.all_problems
    assert [r.run_id for r in load_runs(str(runs_dir / "[ab]-run"))] == ["a-run", "b-run"]
    assert [r.run_id for r in load_runs(str(runs_dir / "*" / "checkpoint.json"))] == [
        "a-run",
        "b-run",
        "c-run",
    ]
    # a run given twice (directory and its checkpoint file) loads once
    both = load_runs([runs_dir / "a-run", runs_dir / "a-run" / "checkpoint.json"])
    assert [r.run_id for r in both] == ["a-run"]
    with pytest.warns(RunFormatWarning, match="the pattern matched no run directory"):
        nothing = load_runs(str(tmp_path / "nope-*"))
    assert len(nothing) == 0 and "matched no run directory" in nothing.problems[0].message
    with pytest.raises(RunFormatError, match="no such file"):
        load_runs(tmp_path / "missing", strict=True)
    assert questions_frame(str(runs_dir / "*"))["provider"].to_list() == ["a-run", "b-run", "c-run"]


def test_compare_manifest_lists_its_runs_in_order_and_reports_missing_ones(tmp_path: Path) -> None:
    _three_runs(tmp_path / "data" / "runs")
    manifest = tmp_path / "data" / "compare" / "cmp-1" / "manifest.json"
    manifest.parent.mkdir(parents=True)
    entries = [{"provider": "c", "runId": "c-run"}, {"provider": "a", "runId": "a-run"}]
    body = {"compareId": "cmp-1", "benchmark": "locomo", "targetQuestionIds": [], "runs": entries}
    manifest.write_text(json.dumps(body))
    assert [r.run_id for r in load_runs(manifest)] == ["c-run", "a-run"]
    assert [r.run_id for r in load_runs(manifest.parent)] == [
        "c-run",
        "a-run",
    ]  # the compare folder works too
    body["runs"] = [*entries, {"provider": "zep", "runId": "gone"}]
    manifest.write_text(json.dumps(body))
    with pytest.warns(RunFormatWarning, match=r"run gone \(zep\) not found"):
        runs = load_runs(manifest)
    assert [r.run_id for r in runs] == ["c-run", "a-run"]
    assert runs.problems[0].field == "runs" and "run gone (zep) not found" in runs.problems[0].message
    with pytest.raises(RunFormatError, match="gone"):
        load_runs(manifest, strict=True)


def test_frames_read_views_and_take_loaded_runs_as_they_are(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2", "incorrect")])
    assert read_run_deferred(run)._checkpoint is None and read_run(run)._checkpoint is not None
    from_path = questions_frame(run)
    from_runset = questions_frame(load_runs(run))
    from_view = questions_frame(read_run_deferred(run))
    assert from_path.equals(from_runset) and from_path.equals(from_view)
    assert runs_frame(run).equals(runs_frame(load_runs(run)))


def test_journal_runs_are_read_completely_so_the_journal_replays(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1")])
    (run / "journal.jsonl").write_text("")
    assert read_run_deferred(run)._checkpoint is not None


def test_report_json_only_run(tmp_path: Path, mb_example: Path) -> None:
    run = tmp_path / "shared-run"
    run.mkdir()
    shutil.copy(mb_example / "expected" / "report.json", run / "report.json")
    loaded = read_run(run, strict=True)
    assert (
        loaded.source == "report" and loaded.checkpoint is None and loaded.run_id == "fx-compare-supermemory"
    )
    (run / "report.json").write_text('{"evaluations": 3}')
    with pytest.raises(RunFormatError, match="evaluations") as info:
        read_run(run)
    assert info.value.path == str(run / "report.json")


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(RunFormatError, match="not a run directory"):
        read_run(tmp_path)


def test_a_run_path_with_a_typo_names_the_nearest_run_beside_it() -> None:
    """``questions_df("runs/synthetic-sqlit")`` warned "no such file or directory", not which run was meant."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
    with pytest.warns(RunFormatWarning) as caught:
        runs = load_runs(fixtures / "synthetic-sqlit")
    assert len(runs) == 0
    assert runs.problems[0].message == "no such file or directory (did you mean 'synthetic-sqlite'?)"
    assert "(did you mean 'synthetic-sqlite'?)" in str(caught[0].message)
