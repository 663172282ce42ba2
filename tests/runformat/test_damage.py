"""Damage that decodes without an error is reported, never silently read: a garbage journal line, question
ids listed or stored twice, missing phase records. Lenient mode lists a problem and keeps what is good;
strict mode raises naming the file, the field and the question."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench_nb import load_runs, questions_df
from bench_nb.errors import RunFormatError, RunFormatWarning
from bench_nb.runformat.format import EvaluatePhase
from bench_nb.runformat.journal import make_record
from run_writers import question, write_run


def _edit(run: Path, change) -> None:  # type: ignore[no-untyped-def]
    ck = json.loads((run / "checkpoint.json").read_text())
    change(ck)
    (run / "checkpoint.json").write_text(json.dumps(ck, indent=2))


def _problems(run: Path) -> list:
    """The problems of loading a damaged run, which warns naming each of them."""
    with pytest.warns(RunFormatWarning) as caught:
        problems = load_runs(run).all_problems
    text = "\n".join(str(w.message) for w in caught)
    assert problems and all(p.message in text for p in problems), text
    return problems


def test_a_garbage_journal_line_is_a_problem_and_the_good_lines_still_apply(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2", "pending")])
    good = make_record(["q2"], "evaluate", EvaluatePhase(status="completed", score=1, label="correct"), None)
    (run / "journal.jsonl").write_bytes(b'{"q": ["q1"], "p": "evaluate", garbage\n' + good)
    with pytest.warns(RunFormatWarning, match="line 1 is not a journal record"):
        runs = load_runs(run)
    (problem,) = runs.all_problems
    assert problem.path == str(run / "journal.jsonl") and problem.field == "line 1"
    assert "line 1 is not a journal record" in problem.message and "skipped" in problem.message
    assert runs[0].checkpoint.questions["q2"].phases.evaluate.status == "completed"  # type: ignore[union-attr]
    with pytest.raises(RunFormatError, match="line 1 is not a journal record"):
        load_runs(run, strict=True)
    (run / "journal.jsonl").write_bytes(good + b'{"q": ["q1"], "p": "evalu')  # a torn last line: a kill
    assert load_runs(run).all_problems == []  # and no warning


def test_a_question_id_listed_twice_is_a_problem(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    _edit(run, lambda ck: ck["targetQuestionIds"].append("q1"))
    (problem,) = _problems(run)
    assert (problem.field, problem.question_id) == ("targetQuestionIds", "q1")
    assert "question id q1 is listed 2 times" in problem.message
    with pytest.raises(RunFormatError, match=r"\(field targetQuestionIds\).*listed 2 times"):
        questions_df(run, strict=True)


def test_a_question_stored_twice_under_one_key_is_a_problem(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2"), question("q3", "incorrect")])
    text = (run / "checkpoint.json").read_text()
    # A second "q1" entry (a JSON object may not hold a key twice, but a hand edit or a bad merge can).
    q3 = re.search(r'\n    "q3": \{.*?\n    \}', text, re.S)
    assert q3 is not None
    text = text.replace(q3.group(0), q3.group(0) + "," + q3.group(0).replace('"q3"', '"q1"'))
    (run / "checkpoint.json").write_text(text)
    problems = _problems(run)
    twice = [p for p in problems if "more than one entry" in p.message]
    assert len(twice) == 1 and twice[0].question_id == "q1" and twice[0].field == "questions.q1"
    for load in (lambda: load_runs(run, strict=True), lambda: questions_df(run, strict=True)):
        with pytest.raises(RunFormatError, match="q1"):
            load()


def test_two_entries_with_one_question_id_are_a_problem(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    _edit(run, lambda ck: ck["questions"]["q2"].update(questionId="q1"))
    (problem,) = [p for p in _problems(run) if "more than one entry" in p.message]
    assert problem.question_id == "q1" and "q1, q2" in problem.message


@pytest.mark.parametrize("strict_load", [load_runs, questions_df])
def test_missing_phases_are_a_problem_not_pending(tmp_path: Path, strict_load) -> None:  # type: ignore[no-untyped-def]
    run = write_run(tmp_path / "r", [question("q1"), question("q2"), question("q3")])
    _edit(run, lambda ck: ck["questions"]["q2"]["phases"].pop("evaluate"))
    (problem,) = _problems(run)
    assert problem.question_id == "q2" and problem.field == "questions.q2.phases.evaluate"
    assert "no evaluate (read as pending)" in problem.message
    with pytest.raises(RunFormatError, match=r"questions.q2.phases.evaluate"):
        strict_load(run, strict=True)
    _edit(run, lambda ck: ck["questions"]["q3"].pop("phases"))
    # Every damaged question is named, each in a problem of its own.
    first, second = _problems(run)
    assert (first.question_id, first.field) == ("q2", "questions.q2.phases.evaluate")
    assert (second.question_id, second.field) == ("q3", "questions.q3.phases.ingest")
    assert "no ingest, indexing, search, answer, evaluate (read as pending)" in second.message


def test_every_question_stored_or_listed_twice_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2"), question("q3")])
    _edit(run, lambda ck: ck["targetQuestionIds"].extend(["q1", "q3"]))
    assert [(p.question_id, p.field) for p in _problems(run)] == [
        ("q1", "targetQuestionIds"),
        ("q3", "targetQuestionIds"),
    ]


def test_an_undamaged_run_has_no_problem(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2", "pending"), question("q3", "failed")])
    assert load_runs(run).all_problems == []  # and no warning


def test_a_checkpoint_that_is_not_a_run_says_what_to_do(tmp_path: Path) -> None:
    # said only msgspec's "Input data was truncated" / "Expected `object`, got `array`" after the file's name
    run = write_run(tmp_path / "r", [question("q1")])
    data = (run / "checkpoint.json").read_bytes()
    for content, says in (
        (
            data[: len(data) // 2],
            r"not valid JSON \(Input data was truncated\): the file is cut short or damaged",
        ),
        (b"not json", r"not valid JSON \(JSON is malformed.*\): .*copy the run again"),
        (b"[]", r"not a run's checkpoint \(Expected `object`, got `array`\): give a run directory"),
        (b"{}", r"not a run's checkpoint \(Object missing required field `runId`\): give a run directory"),
    ):
        (run / "checkpoint.json").write_bytes(content)
        with pytest.raises(RunFormatError, match=re.escape(str(run / "checkpoint.json")) + ".*" + says):
            load_runs(run, strict=True)
        (problem,) = _problems(run)
        assert re.search(says, problem.message), problem.message


def test_a_checkpoint_holding_half_a_surrogate_pair_is_not_called_damaged(tmp_path: Path) -> None:
    # JSON.stringify writes a string cut inside an emoji as "\ud83d": valid JSON (Python's json and node read
    # it) that msgspec refuses ("unexpected end of escaped utf-16 surrogate pair"), which was reported as "not
    # valid JSON: the file is cut short or damaged; copy the run again", advice that cannot help
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    _edit(run, lambda ck: ck["questions"]["q2"]["phases"]["answer"].update(hypothesis="a cut emoji \ud83d"))
    assert "\\ud83d" in (run / "checkpoint.json").read_text()
    with pytest.raises(RunFormatError) as raised:
        load_runs(run, strict=True)
    err = raised.value
    assert err.field == "questions.q2.phases.answer.hypothesis"
    assert "half of a UTF-16 surrogate pair" in err.message and "\\ud83d" in err.message
    assert "cut short or damaged" not in err.message
    (problem,) = _problems(run)
    assert (problem.field, problem.message) == (err.field, err.message)
    # a file that is cut short is still called so
    (run / "checkpoint.json").write_text((run / "checkpoint.json").read_text()[:-40])
    with pytest.raises(RunFormatError, match="cut short or damaged"):
        load_runs(run, strict=True)
