from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench_nb.benchmarks import load_benchmark
from bench_nb.benchmarks.longmemeval import parse_longmemeval_date, read_longmemeval
from bench_nb.errors import DatasetError, Problem
from bench_nb.records import Benchmark
from bench_nb.runformat.dataset import read_memorybench_dataset

ORACLE_SHA = "d3249e4c4ef8837dbe629c9e25042a752f2e74660d63036d7cecc7e0ff0085b4"


@pytest.fixture(scope="module")
def oracle(longmemeval_path: Path) -> Benchmark:
    return load_benchmark("longmemeval", longmemeval_path)


def test_counts_match_the_dataset_note(oracle: Benchmark) -> None:
    assert oracle.name == "longmemeval"
    assert oracle.sha256 == ORACLE_SHA  # unpinned, but recorded
    assert len(oracle.questions) == 500
    assert Counter(q.question_type for q in oracle.questions) == {
        "single-session-user": 70,
        "single-session-assistant": 56,
        "single-session-preference": 30,
        "multi-session": 133,
        "temporal-reasoning": 133,
        "knowledge-update": 78,
    }
    abstention = [q for q in oracle.questions if q.is_abstention]
    assert len(abstention) == 30
    assert all(q.question_id.endswith("_abs") for q in abstention)
    to_norm = {
        "single-session-user": "single-hop",
        "single-session-assistant": "single-hop",
        "single-session-preference": "preference",
        "multi-session": "multi-hop",
        "temporal-reasoning": "temporal",
        "knowledge-update": "knowledge-update",
    }
    for q in oracle.questions:
        assert q.norm_type == ("abstention" if q.question_id.endswith("_abs") else to_norm[q.question_type])


def test_one_haystack_per_question_in_haystack_order(oracle: Benchmark, longmemeval_path: Path) -> None:
    raw = {item["question_id"]: item for item in json.loads(longmemeval_path.read_text(encoding="utf-8"))}
    assert set(oracle.haystacks) == set(raw)
    for q in oracle.questions:
        item = raw[q.question_id]
        haystack = oracle.haystacks[q.haystack_id]
        assert q.haystack_id == q.question_id
        assert [s.session_id for s in haystack.sessions] == item["haystack_session_ids"]
        assert [s.extra["date_raw"] for s in haystack.sessions] == item["haystack_dates"]
        assert [len(s.messages) for s in haystack.sessions] == [len(s) for s in item["haystack_sessions"]]
        assert q.evidence_ids == tuple(item["answer_session_ids"])
        has_answer = [m.has_answer for s in haystack.sessions for m in s.messages]
        assert has_answer == [bool(t.get("has_answer")) for s in item["haystack_sessions"] for t in s]
    assert sum(m.has_answer for h in oracle.haystacks.values() for s in h.sessions for m in s.messages) > 0


def test_dates_are_iso_with_raw_kept(oracle: Benchmark) -> None:
    q = oracle.questions[0]
    assert q.extra["question_date_raw"] == "2023/04/10 (Mon) 23:07"
    assert q.question_date == "2023-04-10T23:07:00"
    assert oracle.haystacks[q.haystack_id].sessions[0].date == "2023-04-10T17:50:00"
    assert all(q.question_date for q in oracle.questions)


def test_integer_answers_become_text(oracle: Benchmark) -> None:
    ints = [q for q in oracle.questions if "answer_raw" in q.extra]
    assert len(ints) == 32
    assert all(q.answer == str(q.extra["answer_raw"]) and q.answer.isdigit() for q in ints)


def test_ids_and_types_line_up_with_memorybench(oracle: Benchmark, longmemeval_path: Path) -> None:
    mb = read_memorybench_dataset(longmemeval_path)
    assert [q.question_id for q in oracle.questions] == [q.question_id for q in mb.questions]
    for ours, theirs in zip(oracle.questions, mb.questions, strict=True):
        assert (ours.question_type, ours.norm_type, ours.answer) == (
            theirs.question_type,
            theirs.norm_type,
            theirs.ground_truth,
        )


def test_s_and_m_share_the_reader(longmemeval_path: Path) -> None:
    s = load_benchmark("longmemeval-s", longmemeval_path)
    m = load_benchmark("longmemeval-m", longmemeval_path)
    assert (s.name, m.name) == ("longmemeval-s", "longmemeval-m")
    assert s.questions == m.questions


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("2023/04/10 (Mon) 23:07", "2023-04-10T23:07:00"),
        ("2022/1/5 (Wed) 8:01", "2022-01-05T08:01:00"),
        ("2023/05/20", "2023-05-20T00:00:00"),
    ],
)
def test_parse_longmemeval_date(raw: str, iso: str) -> None:
    assert parse_longmemeval_date(raw) == iso


def test_parse_longmemeval_date_refuses_nonsense() -> None:
    for raw in ("April 10", "2023/02/30 (Thu) 10:00"):
        with pytest.raises(ValueError, match="not a LongMemEval date"):
            parse_longmemeval_date(raw)


def _item(qid: str, **changes: object) -> dict:
    item = {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": "What is my dog's name?",
        "answer": "Rex",
        "question_date": "2023/04/10 (Mon) 23:07",
        "haystack_session_ids": ["s1"],
        "haystack_dates": ["2023/04/09 (Sun) 10:00"],
        "haystack_sessions": [[{"role": "user", "content": "My dog is Rex.", "has_answer": True}]],
        "answer_session_ids": ["s1"],
    }
    item.update(changes)
    return item


def test_bad_items_name_the_question_and_field(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    items = [_item("q1"), _item("q2", haystack_dates=["yesterday"]), _item("q3_abs", answer=7), _item("q1")]
    path.write_text(json.dumps(items), encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        read_longmemeval(path)
    text = str(err.value)
    assert (
        str(path) in text and "[question q2]" in text and "haystack_dates[0]" in text and "yesterday" in text
    )
    problems: list[Problem] = []
    bench = read_longmemeval(path, problems)
    assert [q.question_id for q in bench.questions] == ["q1", "q3_abs"]
    assert bench.questions[1].answer == "7" and bench.questions[1].norm_type == "abstention"
    assert [(p.question_id, p.field) for p in problems] == [
        ("q2", "haystack_dates[0]"),
        ("q1", "question_id"),
    ]
    assert "duplicate" in problems[1].message


def test_mismatched_session_lists_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([_item("q1", haystack_session_ids=["s1", "s2"])]), encoding="utf-8")
    with pytest.raises(DatasetError, match="1 sessions but 2 session ids"):
        read_longmemeval(path)
