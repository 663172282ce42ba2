"""The bundled sample drives the demo: check its shape, and that it suits an extractive answerer over BM25."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from datetime import datetime

import pytest

from bench_nb.benchmarks import get_benchmark_spec, load_benchmark
from bench_nb.records import Benchmark


@pytest.fixture(scope="module")
def sample() -> Benchmark:
    return load_benchmark("sample")


def test_shape(sample: Benchmark) -> None:
    assert sample.name == "sample"
    assert get_benchmark_spec("sample").bundled.is_file()  # type: ignore[union-attr]
    assert len(sample.haystacks) == 4
    assert all(3 <= len(h.sessions) <= 5 for h in sample.haystacks.values())
    assert 40 <= len(sample.questions) <= 50
    assert Counter(q.question_type for q in sample.questions) == {
        "single-hop": 13,
        "multi-hop": 8,
        "temporal": 10,
        "knowledge-update": 7,
        "preference": 5,
        "abstention": 7,
    }
    assert all(q.norm_type == q.question_type for q in sample.questions)
    assert list(sample.type_registry) == [
        "single-hop",
        "multi-hop",
        "temporal",
        "knowledge-update",
        "preference",
        "abstention",
    ]
    assert len({q.question_id for q in sample.questions}) == len(sample.questions)


def test_dates_are_ordered_and_questions_come_after(sample: Benchmark) -> None:
    for q in sample.questions:
        sessions = sample.haystacks[q.haystack_id].sessions
        dates = [datetime.fromisoformat(s.date or "") for s in sessions]
        assert dates == sorted(dates)
        assert q.question_date is not None and datetime.fromisoformat(q.question_date) > dates[-1]
        for s in sessions:
            stamps = [m.timestamp for m in s.messages]
            assert stamps[0] == s.date and stamps == sorted(stamps)  # type: ignore[type-var]


def test_abstention_questions_have_no_answer_or_evidence(sample: Benchmark) -> None:
    for q in sample.questions:
        assert (q.answer == "") == q.is_abstention
        assert bool(q.evidence_ids) != q.is_abstention


def test_extractive_flag_is_true_to_the_text(sample: Benchmark) -> None:
    """``extractive`` questions have their answer verbatim in an evidence message; the others do not."""
    extractive = 0
    for q in sample.questions:
        texts = [
            m.content.lower()
            for s in sample.haystacks[q.haystack_id].sessions
            for m in s.messages
            if m.message_id in q.evidence_ids
        ]
        verbatim = bool(q.answer) and any(q.answer.lower() in t for t in texts)
        assert q.extra["extractive"] is verbatim, q.question_id
        extractive += verbatim
    assert extractive / len(sample.questions) >= 0.7
    # some need the session date to resolve "yesterday", and some need arithmetic
    reasoning = [q for q in sample.questions if not q.extra["extractive"] and not q.is_abstention]
    assert {q.question_type for q in reasoning} >= {"temporal", "multi-hop"}


def test_knowledge_updates_have_an_older_value(sample: Benchmark) -> None:
    """Each knowledge-update question's answer appears only in its latest evidence session."""
    for q in sample.questions:
        if q.question_type != "knowledge-update":
            continue
        sessions = sample.haystacks[q.haystack_id].sessions
        where = [
            i for i, s in enumerate(sessions) for m in s.messages if q.answer.lower() in m.content.lower()
        ]
        assert where and min(where) > 0, q.question_id


def test_bm25_retrieves_the_evidence_of_extractive_questions(sample: Benchmark) -> None:
    """With SQLite FTS5 (what the sqlite provider uses), the answering message is in the top 10 for most."""
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE m USING fts5(hid UNINDEXED, mid UNINDEXED, content, tokenize='porter unicode61')"
    )
    for h in sample.haystacks.values():
        for s in h.sessions:
            db.executemany(
                "INSERT INTO m VALUES (?, ?, ?)",
                [(h.haystack_id, msg.message_id, msg.content) for msg in s.messages],
            )
    found = total = 0
    for q in sample.questions:
        if not q.extra["extractive"]:
            continue
        total += 1
        terms = " OR ".join(f'"{t}"' for t in re.findall(r"\w+", q.question.lower()))
        rows = db.execute(
            "SELECT mid, content FROM m WHERE hid = ? AND m MATCH ? ORDER BY bm25(m) LIMIT 10",
            (q.haystack_id, terms),
        ).fetchall()
        found += any(mid in q.evidence_ids and q.answer.lower() in text.lower() for mid, text in rows)
    db.close()
    assert found / total >= 0.8
