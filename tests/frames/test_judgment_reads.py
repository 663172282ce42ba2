"""Reading verdicts: judgments.jsonl line by line, the loaded runs a judgments frame came from, and
JudgeAgreement's tables in either library."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from bench_nb import disputed_questions, judge_agreement, judgments_df, load_runs
from bench_nb.errors import Problem, RunFormatWarning
from bench_nb.records import Verdict
from bench_nb.runformat.verdicts import (
    FILENAME,
    append_verdicts,
    read_plain_verdicts,
    read_replicates,
    read_verdicts,
)
from bench_nb.tables import table_disputed

ANSWERS = {"q1": "Biscuit", "q2": "London", "q3": "in March 2024", "q4": "cello", "q6": "I do not know"}


@pytest.fixture
def two_judges(make_run) -> Path:
    return make_run(
        "run-a",
        answers=ANSWERS,
        primary="contains",
        bench_nb={"k": 10},
        primary_scores={"q1": 1, "q2": 0, "q3": 1, "q4": 1, "q6": 1},
        verdicts={"f1": {"q1": 1, "q2": 0, "q3": 0, "q4": 1, "q6": 0}},
    )


# ---- judgments.jsonl -------------------------------------------------------------------------------------------


def _line(qid: str, judge: str, score: int | None, label: str = "x") -> str:
    return json.dumps({"questionId": qid, "judge": judge, "score": score, "label": label}) + "\n"


def test_last_line_per_question_and_judge_wins(tmp_path: Path) -> None:
    (tmp_path / FILENAME).write_text(
        _line("q1", "f1", 0, "first") + "\n   \n" + _line("q2", "f1", 1) + _line("q1", "f1", 1, "regraded"),
        encoding="utf-8",
    )
    verdicts, problems = read_verdicts(tmp_path)
    assert problems == []
    assert list(verdicts) == [("q1", "f1"), ("q2", "f1")]  # a re-grade keeps the key's first position
    assert verdicts[("q1", "f1")]["label"] == "regraded" and verdicts[("q1", "f1")]["score"] == 1


def test_bad_lines_are_problems_naming_the_line_and_the_rest_loads(tmp_path: Path) -> None:
    lines = [
        _line("q1", "f1", 1),  # 1
        "[1, 2]\n",  # 2: not an object
        '{"judge": "f1", "score": 1}\n',  # 3: no questionId
        b"\xff\xfe not utf-8\n",  # 4
        _line("q2", "f1", 0),  # 5
        '{"questionId": "q3", "judge": "f1", "score": 1',  # 6: torn (the run was killed mid-write)
    ]
    (tmp_path / FILENAME).write_bytes(b"".join(x if isinstance(x, bytes) else x.encode() for x in lines))
    verdicts, problems = read_verdicts(tmp_path)
    assert sorted(verdicts) == [("q1", "f1"), ("q2", "f1")]
    assert [p.field for p in problems] == ["line 2", "line 3", "line 4", "line 6"]
    assert all(p.path == str(tmp_path / FILENAME) and "skipped" in p.message for p in problems)
    assert "questionId" in problems[1].message


def test_windows_line_endings_and_keys_read_as_text(tmp_path: Path) -> None:
    body = (
        '{"questionId": 7, "judge": "f1", "score": 1}\r\n{"questionId": "q8", "judge": "f1", "score": 0}\r\n'
    )
    (tmp_path / FILENAME).write_bytes(body.encode())
    verdicts, problems = read_verdicts(tmp_path)
    assert problems == [] and sorted(verdicts) == [("7", "f1"), ("q8", "f1")]


def test_written_verdicts_read_back(tmp_path: Path) -> None:
    from bench_nb.runformat.verdicts import append_verdicts

    text = 'say "hi" — ünïcode\nnew line'
    append_verdicts(tmp_path, [("q1", Verdict(1, "correct", text, judge="f1"))])
    append_verdicts(tmp_path, [("q1", Verdict(None, "unscored", "?", judge="llm"))])
    verdicts, problems = read_verdicts(tmp_path)
    assert problems == []
    assert verdicts[("q1", "f1")]["explanation"] == text
    assert verdicts[("q1", "llm")]["unscored"] is True and verdicts[("q1", "llm")]["score"] is None


def test_no_file_no_verdicts(tmp_path: Path) -> None:
    assert read_verdicts(tmp_path) == ({}, [])


# ---- judgments.jsonl read at once, else line by line -------------------------------------------------------------


@pytest.fixture
def audit_run(mb_example: Path, locomo_audit: Path, tmp_path: Path) -> Path:
    """A copy of the real MemoryBench run with the LoCoMo audit's real verdicts (gpt-4o-mini, three
    replicates of 1,540 answers) in judgments.jsonl, as ``append_verdicts`` writes them."""
    run = tmp_path / "fx-compare-supermemory"
    shutil.copytree(mb_example / "data" / "runs" / "fx-compare-supermemory", run)
    (audit,) = load_runs(locomo_audit / "fc-baseline" / "gpt-4o-mini-cot")
    assert audit.imported is not None
    for replicate in (1, 2, 3):
        lines = []
        for qid, verdicts in audit.imported.verdicts.items():
            v = verdicts[replicate - 1] if len(verdicts) >= replicate else None
            verdict = (
                Verdict(None, "unscored", "no verdict", judge="gpt-4o-mini")
                if v is None
                else Verdict(
                    int(v), "correct" if v else "incorrect", f"judgment_{replicate}", judge="gpt-4o-mini"
                )
            )
            lines.append((qid, verdict))
        append_verdicts(run, lines, replicate=replicate)
    return run


def _frame(run: Path) -> tuple[pl.DataFrame, list[Problem]]:
    problems: list[Problem] = []
    return judgments_df(run, backend="polars", problems=problems), problems


def test_real_verdicts_read_at_once_give_the_frame_line_by_line_gives(audit_run: Path) -> None:
    at_once = read_plain_verdicts(audit_run)
    assert at_once is not None and len(at_once) == 3 * 1540  # every line plain: read at once
    fast, problems = _frame(audit_run)
    assert problems == [] and fast.filter(pl.col("source") == "judgments").height == 3 * 1540
    # One bad line at the end: the whole file is read line by line, and only that line is lost.
    _torn_line_added(audit_run)
    assert read_plain_verdicts(audit_run) is None
    with pytest.warns(RunFormatWarning, match="line 4621 skipped"):
        slow, problems = _frame(audit_run)
    assert [(p.path, p.field) for p in problems] == [(str(audit_run / FILENAME), "line 4621")]
    assert_frame_equal(slow, fast)
    lines = read_replicates(audit_run)[0]
    assert list(lines) == list(at_once)  # same keys, in the same order
    assert all(lines[k]["score"] == v.score and lines[k]["label"] == v.label for k, v in at_once.items())


def _torn_line_added(run: Path) -> None:
    with (run / FILENAME).open("ab") as fh:
        fh.write(b'{"questionId": "q9", "judge": "f1", "score": 1\n')


PLAIN = [
    {"questionId": "q2", "judge": "f1", "score": None, "label": "unscored", "unscored": True},
    {"questionId": "q3", "judge": "f1", "score": 1, "label": "unscored"},  # the label says unscored
    {"questionId": "q4", "judge": "f1"},  # no score: unscored
    {
        "questionId": "q2",
        "judge": "beam",
        "score": 0.5,
        "label": "partial",
        "publishedScore": 0,
        "items": [0.5, 1],
    },
    {"questionId": "q3", "judge": "f2", "score": 1, "label": None, "explanation": None, "unscored": None},
    {"questionId": "q3", "judge": "f2", "score": 0, "label": "incorrect", "replicate": 2, "at": "x"},
    {"questionId": "q4", "judge": "f1", "score": 1, "label": "correct", "unscored": False},  # a re-grade
    {"questionId": "q6", "judge": "f2", "score": 0.0, "label": "incorrect", "explanation": 'ünï "x"'},
]


def test_plain_lines_of_every_kind_read_at_once_as_line_by_line(make_run) -> None:
    run = make_run(
        "run-a", answers=ANSWERS, primary="f1", primary_scores={"q1": 1, "q2": 0, "q3": 1, "q4": 1, "q6": 0}
    )
    (run / FILENAME).write_text("".join(json.dumps(line) + "\n" for line in PLAIN), encoding="utf-8")
    assert read_plain_verdicts(run) is not None
    fast, problems = _frame(run)
    assert problems == []
    _torn_line_added(run)
    assert read_plain_verdicts(run) is None
    with pytest.warns(RunFormatWarning):
        slow, problems = _frame(run)
    assert [p.field for p in problems] == ["line 9"]
    assert_frame_equal(fast, slow)
    rows = {(r["question_id"], r["judge"], r["replicate"]): r for r in fast.iter_rows(named=True)}
    assert rows[("q3", "f1", 1)]["score"] is None and rows[("q3", "f1", 1)]["unscored"]
    assert rows[("q4", "f1", 1)]["label"] == "correct" and rows[("q4", "f1", 1)]["source"] == "judgments"
    assert rows[("q1", "f1", 1)]["source"] == "checkpoint" and rows[("q2", "beam", 1)]["score"] == 0.5


# Lines that are not plain verdicts, read line by line: the bad ones are problems naming the line, the
# unusual ones load as they always did.
NOT_PLAIN = [
    (b'{"questionId": "q2", "judge": "f1", "score": 1', "line 2", None),  # torn
    (b"[1, 2]", "line 2", None),  # not an object
    (b'{"judge": "f1", "score": 1}', "line 2", None),  # no questionId
    (b'{"questionId": "q2", "judge": "f1", "at": "\xff"}', "line 2", None),  # not UTF-8 (in a field not read)
    (b'{"questionId": "q2", "judge": "f1", "replicate": true}', "line 2", None),  # replicate not a number
    (b'{"questionId": "q2", "judge": "f1", "replicate": 0}', "line 2", None),  # replicate below 1
    (b'{"questionId": "q2", "judge": "f1", "score": 7}', "score", None),  # score outside [0, 1]
    (b'{"questionId": 2, "judge": "f1", "score": 1}', None, ("2", 1.0, False)),  # a number as question id
    (b'{"questionId": "q2", "judge": "f1", "score": 1, "unscored": 1}', None, ("q2", None, True)),
    (b'{"questionId": "q2", "judge": "f1", "score": 7, "unscored": true}', None, ("q2", None, True)),
    # a field nobody writes: its value checked as a line-by-line read checks it, the same row when good
    (b'{"questionId": "q2", "judge": "f1", "note": "\xff"}', "line 2", None),
    (b'{"questionId": "q2", "judge": "f1", "score": 1, "note": 1e999}', "line 2", None),
    (b'{"questionId": "q2", "judge": "f1", "score": 1, "note": [1]}', None, ("q2", 1.0, False)),
]


@pytest.mark.parametrize(("line", "field", "row"), NOT_PLAIN)
def test_a_line_that_is_not_a_plain_verdict_is_read_line_by_line(
    make_run, line: bytes, field: str | None, row: tuple[Any, ...] | None
) -> None:
    run = make_run("run-a", answers={"q1": "Biscuit", "q2": "London"}, primary="f1", primary_scores={"q1": 1})
    good = json.dumps({"questionId": "q3", "judge": "f1", "score": 0, "label": "incorrect"}).encode()
    (run / FILENAME).write_bytes(good + b"\n" + line + b"\n" + good.replace(b"q3", b"q4") + b"\n")
    assert read_plain_verdicts(run) is None
    if field is None:
        frame, problems = _frame(run)
        assert problems == []
    else:
        with pytest.warns(RunFormatWarning):
            frame, problems = _frame(run)
        where = run if field == "score" else run / FILENAME  # a bad score is the run's, a bad line the file's
        assert [(p.path, p.field) for p in problems] == [(str(where), field)]
    from_file = frame.filter(pl.col("source") == "judgments")
    got = from_file.select("question_id", "score", "unscored").rows()
    assert got == [("q3", 0.0, False), *([row] if row else []), ("q4", 0.0, False)]
    # the other questions' rows are the ones the file gives without that line (all plain: read at once)
    (run / FILENAME).write_bytes(good + b"\n" + good.replace(b"q3", b"q4") + b"\n")
    assert read_plain_verdicts(run) is not None
    others = ~pl.col("question_id").is_in(["q2", "2"])
    assert_frame_equal(frame.filter(others), _frame(run)[0].filter(others))


def test_plain_verdicts_keep_read_replicates_last_line_rule(tmp_path: Path) -> None:
    lines = [_line("q1", "f1", 0, "first"), "\n  \n", _line("q2", "f1", 1), _line("q1", "f1", 1, "regraded")]
    (tmp_path / FILENAME).write_text("".join(lines), encoding="utf-8")
    plain = read_plain_verdicts(tmp_path)
    assert plain is not None and list(plain) == [("q1", "f1", 1), ("q2", "f1", 1)]
    assert plain[("q1", "f1", 1)].label == "regraded" and plain[("q1", "f1", 1)].score == 1.0
    assert read_plain_verdicts(tmp_path / "absent") == {}


# ---- the runs behind a judgments frame --------------------------------------------------------------------------


def test_disputes_of_a_judgments_frame_reuse_the_loaded_runs_given(two_judges: Path) -> None:
    runs = load_runs(two_judges)
    frame = judgments_df(runs, backend="polars")
    assert runs[0].checkpoint is not None  # decoded completely (search results) while the file is there
    shutil.rmtree(two_judges)  # nothing can be read from disk any more
    disputed = disputed_questions(frame, runs=runs, backend="polars")
    assert disputed["question_id"].to_list() == ["q3", "q6"]
    row = disputed.row(0, named=True)
    assert row["question"] == "When did Tomas start cello?" and row["hypothesis"] == "in March 2024"
    assert row["context"].startswith("1. memory about March 2024 for q3")
    table = table_disputed(frame, runs=runs)
    assert "memory about March 2024 for q3" in table.html
    assert runs.questions_frame_cache is not None  # the questions were built once, on the loaded runs
    # Without the runs, they are read from disk again: gone, so no question text or context.
    with pytest.warns(RunFormatWarning, match="no runs loaded from .*: no such file or directory"):
        reread = disputed_questions(frame, backend="polars")
    assert reread["question_id"].to_list() == ["q3", "q6"]
    assert reread["question"].to_list() == [None, None] and reread["context"].to_list() == [None, None]


def test_the_judgments_of_loaded_runs_are_read_once_until_a_verdict_is_written(two_judges: Path) -> None:
    # A report's failures and judges sections both ask for the judgments of its loaded runs.
    runs = load_runs(two_judges)
    first = judgments_df(runs, backend="polars")
    found: list[Problem] = []
    assert judgments_df(runs, backend="polars", problems=found) is first
    assert found == runs.all_problems
    assert judgments_df(runs, backend="polars", strict=True) is not first  # another key: read again
    append_verdicts(two_judges, [("q2", Verdict(1, "correct", "late", judge="late-judge"))])
    again = judgments_df(runs, backend="polars")
    assert again.filter(pl.col("judge") == "late-judge")["question_id"].to_list() == ["q2"]
    assert_frame_equal(again.filter(pl.col("judge") != "late-judge"), first)
    assert judgments_df(load_runs(two_judges), backend="polars").equals(again)


def test_a_pandas_frame_reads_its_runs_from_disk(two_judges: Path) -> None:
    runs = load_runs(two_judges)
    frame = judgments_df(runs)
    assert isinstance(frame, pd.DataFrame)
    disputed = disputed_questions(frame, backend="polars")
    assert disputed["context"][0].startswith("1. memory about March 2024 for q3")
    explicit = disputed_questions(frame, runs=runs, backend="polars")
    assert_frame_equal(disputed, explicit)


# ---- JudgeAgreement's tables ------------------------------------------------------------------------------------


def test_agreement_tables_in_the_backend_asked_for(two_judges: Path) -> None:
    frame = judgments_df(two_judges, backend="polars")
    default = judge_agreement(frame)
    polars_ = judge_agreement(frame, backend="polars")
    names = ("pairwise", "by_type", "confusion", "accuracy", "accuracy_by_run")
    for name in names:
        as_pandas, as_polars = getattr(default, name), getattr(polars_, name)
        assert isinstance(as_pandas, pd.DataFrame) and isinstance(as_polars, pl.DataFrame), name
        assert getattr(default, name) is as_pandas  # converted once
        assert_frame_equal(pl.from_pandas(as_pandas, nan_to_null=False), as_polars, check_dtypes=False)
        assert_frame_equal(default.table(name, "polars"), as_polars)
    pair = polars_.pairwise.row(0, named=True)
    assert (pair["judge_a"], pair["judge_b"], pair["n"]) == ("f1", "contains", 5)
    assert pair["percent_agreement"] == pytest.approx(3 / 5)
    with pytest.raises(KeyError, match="pairwise"):
        default.table("kappas")
