"""Honest lenient loading: what a lenient load skips is warned of (``RunFormatWarning``, naming file, question
and field) and handed back as structured ``Problem`` objects beside the frame; strict mode raises instead."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from bench_nb import load_runs, questions_df
from bench_nb.errors import Problem, RunFormatError, RunFormatWarning, warn_problems
from bench_nb.frames.judgments import judgments_df
from bench_nb.frames.questions import questions_frame
from run_writers import question, write_run


def _run_with_a_corrupt_score(tmp_path: Path) -> tuple[Path, Path]:
    run = write_run(
        tmp_path / "r", [question(f"q{i}", "correct" if i % 2 else "incorrect") for i in range(50)]
    )
    checkpoint = run / "checkpoint.json"
    ck = json.loads(checkpoint.read_text())
    ck["questions"]["q7"]["phases"]["evaluate"]["score"] = "high"
    checkpoint.write_text(json.dumps(ck, indent=2))
    return run, checkpoint


SKIPPED = "Expected `float | null`, got `str`; question skipped"


def test_a_corrupt_question_is_skipped_warned_of_and_handed_back(tmp_path: Path) -> None:
    run, checkpoint = _run_with_a_corrupt_score(tmp_path)
    found: list[Problem] = []
    with pytest.warns(RunFormatWarning) as caught:
        df = questions_df(run, backend="polars", problems=found)
    assert df.height == 49 and "q7" not in df["question_id"].to_list()
    bad = Problem(str(checkpoint), SKIPPED, "questions.q7.phases.evaluate.score", question_id="q7")
    # the skipped question, and the target list's consequence of it (q7 is listed but has no entry now)
    target = Problem(str(checkpoint), "1 target question(s) have no entry, e.g. q7", "questions")
    assert found == [bad, target]
    (warning,) = caught
    assert warning.message.problems == (bad, target)  # type: ignore[union-attr]
    text = str(warning.message)
    assert text.startswith("2 problems loading runs")
    assert f"  - {checkpoint} [question q7] (field questions.q7.phases.evaluate.score): {SKIPPED}" in text
    assert warning.filename == __file__  # it points at the caller's line, not at bench_nb's


def test_strict_mode_raises_naming_the_file_question_and_field(tmp_path: Path) -> None:
    run, checkpoint = _run_with_a_corrupt_score(tmp_path)
    for load in (lambda: questions_df(run, strict=True), lambda: load_runs(run, strict=True)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # strict mode raises; it does not warn
            with pytest.raises(RunFormatError) as info:
                load()
        err = info.value
        assert (err.path, err.field, err.question_id) == (
            str(checkpoint),
            "questions.q7.phases.evaluate.score",
            "q7",
        )
        assert str(err) == (
            f"{checkpoint} (field questions.q7.phases.evaluate.score): "
            "question q7: Expected `float | null`, got `str`"
        )
        assert err.problem == Problem(str(checkpoint), err.message, err.field, "q7")


def test_a_loaded_run_set_keeps_its_problems_and_is_not_warned_of_twice(tmp_path: Path) -> None:
    run, _ = _run_with_a_corrupt_score(tmp_path)
    with pytest.warns(RunFormatWarning):
        runs = load_runs(run)
    found: list[Problem] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = questions_frame(runs, problems=found)
        again: list[Problem] = []
        questions_frame(runs, problems=again)  # the cached frame: the same problems beside it
    assert frame.height == 49 and found == again == runs.all_problems and len(found) == 2


def test_a_clean_run_loads_without_a_warning(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    found: list[Problem] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert questions_df(run, backend="polars", problems=found).height == 2
    assert found == []


def test_a_judgments_score_out_of_range_is_warned_of_and_handed_back(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    lines = [
        {"questionId": "q1", "judge": "gpt-4o", "score": 1, "label": "correct"},
        {"questionId": "q2", "judge": "gpt-4o", "score": 7, "label": "correct"},
    ]
    (run / "judgments.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    found: list[Problem] = []
    with pytest.warns(RunFormatWarning, match=r"\[question q2\] \(field score\): score 7 of judge") as caught:
        df = judgments_df(run, backend="polars", problems=found)
    assert [w.message.problems for w in caught] == [  # type: ignore[union-attr]
        (Problem(str(run), "score 7 of judge 'gpt-4o' is not in [0, 1]; verdict skipped", "score", "q2"),)
    ]
    assert found == list(caught[0].message.problems)  # type: ignore[union-attr]
    assert ("q2", "gpt-4o") not in set(zip(df["question_id"], df["judge"], strict=True))
    with pytest.raises(RunFormatError, match=r"\(field score\): score 7 of judge 'gpt-4o'") as info:
        judgments_df(run, strict=True)
    assert info.value.question_id == "q2"


def test_a_warning_lists_ten_problems_and_keeps_them_all() -> None:
    problems = [Problem(f"/runs/r{i}/checkpoint.json", "bad", f"questions.q{i}", f"q{i}") for i in range(12)]
    with pytest.warns(RunFormatWarning) as caught:
        warn_problems(problems)
    text = str(caught[0].message)
    assert text.count("\n  - ") == 10 and "/runs/r9/checkpoint.json [question q9]" in text
    assert "/runs/r10/" not in text and "... and 2 more" in text
    assert caught[0].message.problems == tuple(problems)  # type: ignore[union-attr]
