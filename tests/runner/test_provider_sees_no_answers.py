"""No benchmark identity reaches a provider (issue 40): a provider that records everything it is handed finds no
question id, haystack id, ground truth, question type or evidence marker in it, for every benchmark kind.

Before the fix a container was named ``<question id>-<run id>`` for per-question haystacks (LongMemEval's ``_abs``
suffix told the provider the question is an abstention question), LongMemEval's evidence sessions came as
``answer_...`` with ``has_answer`` set, and BEAM's session ids and message extras named the haystack and turn kind.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest

from beam_tier import write_tier
from bench_nb.benchmarks import load_benchmark
from bench_nb.benchmarks.beam import read_beam
from bench_nb.benchmarks.lmev2 import read_longmemeval_v2
from bench_nb.benchmarks.longmemeval import read_longmemeval
from bench_nb.providers import register_provider, unregister_provider
from bench_nb.records import Benchmark, IngestResult, SearchHit, Session
from bench_nb.runformat.format import Checkpoint
from bench_nb.runner import run_benchmark
from lmev2_data import write_dataset


class RecordingProvider:
    """Keeps every argument it is given (its constructor's too) and finds, for a query, each session's first
    message, under the ids it was given."""

    name = "recording"
    seen: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, run_dir: Path, **settings: Any) -> None:
        self.seen.append({"call": "init", "settings": settings})
        self.sessions: dict[str, Sequence[Session]] = {}

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        self.seen.append({"call": "ingest", "container": container, "sessions": list(sessions)})
        self.sessions[container] = sessions
        return IngestResult(document_ids=tuple(s.session_id for s in sessions))

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        self.seen.append({"call": "indexing", "container": container, "ingested": ingested})

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        self.seen.append({"call": "search", "container": container, "query": query, "k": k})
        return [
            SearchHit(text=s.messages[0].content, session_id=s.session_id, hit_id=s.messages[0].message_id)
            for s in self.sessions[container]
            if s.messages
        ][:k]

    def clear(self, container: str) -> None:
        self.seen.append({"call": "clear", "container": container})


def _longmemeval(tmp_path: Path) -> Benchmark:
    def item(qid: str, qtype: str, answer: str) -> dict[str, Any]:
        return {
            "question_id": qid,
            "question_type": qtype,
            "question": f"What did I say about the {qid[-3:]} plan?",
            "answer": answer,
            "question_date": "2023/05/30 (Tue) 10:00",
            "haystack_session_ids": ["sharegpt_x1", f"answer_{qid}_1"],
            "haystack_dates": ["2023/05/20 (Sat) 09:00", "2023/05/21 (Sun) 09:00"],
            "haystack_sessions": [
                [{"role": "user", "content": "Hello there."}, {"role": "assistant", "content": "Hi!"}],
                [{"role": "user", "content": "My plan is a trip to Lisbon.", "has_answer": True}],
            ],
            "answer_session_ids": [f"answer_{qid}_1"],
        }

    rows = [
        item("e47becba", "single-session-user", "Lisbon"),
        item("gpt4_2d1f_abs", "temporal-reasoning", "none"),
    ]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return read_longmemeval(path)


def _custom(tmp_path: Path) -> Benchmark:
    doc = {
        "name": "team-bench",
        "conversations": [
            {
                "id": "c1",
                "sessions": [
                    {
                        "id": "c1-s1",
                        "date": "2024-03-04T09:15:00",
                        "metadata": {"evidence_for": "q1"},
                        "messages": [
                            {"id": "m1", "role": "user", "content": "My dog is called Rex."},
                            {"role": "assistant", "content": "Nice name."},
                        ],
                    }
                ],
            }
        ],
        "questions": [
            {
                "id": "q-dog-name",
                "conversation": "c1",
                "question": "What is my dog called?",
                "answer": "Rex the dog",
                "type": "fact",
                "evidence": ["m1"],
            }
        ],
    }
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return load_benchmark("custom", path)


BENCHMARKS = {
    "locomo": lambda tmp: load_benchmark("sample"),
    "longmemeval": _longmemeval,
    "longmemeval-v2": lambda tmp: read_longmemeval_v2(write_dataset(tmp / "lme2")),
    "beam": lambda tmp: read_beam(write_tier(tmp / "100K", chats=1), None),
    "custom": _custom,
}


def _metadata(seen: list[dict[str, Any]]) -> list[str]:
    """Every string a provider was handed other than the conversation's texts, roles and dates."""
    out: list[str] = []
    for call in seen:
        out += [str(call.get("container", "")), json.dumps(call.get("settings", {}))]
        if "ingested" in call:
            out += list(call["ingested"].document_ids)
        for s in call.get("sessions", ()):
            out += [s.session_id, json.dumps(s.extra)]
            for m in s.messages:
                out += [m.message_id or "", json.dumps(m.extra)]
                assert m.has_answer is False, f"{s.session_id} {m.message_id} is marked as evidence"
    return [x for x in out if x and x != "{}"]


@pytest.mark.parametrize("kind", sorted(BENCHMARKS))
def test_a_provider_is_handed_no_question_id_answer_type_or_evidence(kind: str, tmp_path: Path) -> None:
    bench = BENCHMARKS[kind](tmp_path)
    questions = bench.questions[:6]
    RecordingProvider.seen = []
    register_provider("recording", RecordingProvider)
    try:
        for isolate in (False, True):
            result = run_benchmark(
                "recording",
                bench,
                run_id=f"run-{isolate}",
                runs_dir=tmp_path / "runs",
                question_ids=[q.question_id for q in questions],
                isolate_per_question=isolate,
                judges="rubric" if kind == "beam" else "contains",
                answerer="extractive",
                k=3,
                progress=False,
            )
            assert result.status == "completed", kind
    finally:
        unregister_provider("recording")
    seen = RecordingProvider.seen
    assert {c["call"] for c in seen} >= {"ingest", "search"}
    metadata = _metadata(seen)
    forbidden: dict[str, str] = {}
    for q in questions:
        forbidden[q.question_id] = "question id"
        forbidden[q.haystack_id] = "haystack id"
        for value, what in ((q.answer, "ground truth"), (q.question_type, "type"), (q.norm_type, "type")):
            if value:
                forbidden[value] = what
        for e in q.evidence_ids:
            forbidden[e] = "evidence id"
    for h in {q.haystack_id for q in questions}:
        for s in bench.haystacks[h].sessions:  # the dataset's own ids (LongMemEval's answer_... among them)
            forbidden[s.session_id] = "a dataset session id"
            forbidden.update((m.message_id, "a dataset message id") for m in s.messages if m.message_id)
    leaks = sorted(
        f"{what} {value!r} in {m!r}"
        for value, what in forbidden.items()
        for m in metadata
        if (value in m if len(value) >= 4 else value == m)
    )
    assert not leaks, leaks
    # what is searched is the question's text, nothing more
    assert {c["query"] for c in seen if c["call"] == "search"} == {q.question for q in questions}

    # the hits are recorded under the dataset's ids, so retrieval is scored as before
    ck = msgspec.json.decode(
        (tmp_path / "runs" / "run-False" / "checkpoint.json").read_bytes(), type=Checkpoint
    )
    for q in questions:
        sessions = {s.session_id for s in bench.haystacks[q.haystack_id].sessions}
        results = [msgspec.json.decode(r) for r in ck.questions[q.question_id].phases.search.results or ()]
        assert results and all(r["sessionId"] in sessions for r in results), q.question_id
