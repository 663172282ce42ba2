"""Reading verdicts: judgments.jsonl line by line, the loaded runs a judgments frame came from, and
JudgeAgreement's tables in either library."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from bench_nb import disputed_questions, judge_agreement, judgments_df, load_runs
from bench_nb.records import Verdict
from bench_nb.runformat.verdicts import FILENAME, read_verdicts
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


# ---- the runs behind a judgments frame --------------------------------------------------------------------------


def test_disputes_of_a_judgments_frame_reuse_the_loaded_runs_given(two_judges: Path) -> None:
    runs = load_runs(two_judges)
    frame = judgments_df(runs, backend="polars")
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
    reread = disputed_questions(frame, backend="polars")
    assert reread["question_id"].to_list() == ["q3", "q6"]
    assert reread["question"].to_list() == [None, None] and reread["context"].to_list() == [None, None]


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
