"""Retrieval metrics: the definitions on hand-made rankings, the evidence level chosen per provider and question,
and no metrics (with a note) where the evidence cannot be traced, end to end through the runner."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd
import pytest
from runner_fakes import CountingProvider, make_benchmark
from sklearn.metrics import ndcg_score

from bench_nb.errors import ProviderError
from bench_nb.frames.questions import questions_df
from bench_nb.providers import get_provider
from bench_nb.providers.base import EvidenceLevel
from bench_nb.records import Haystack, Message, SearchHit, Session
from bench_nb.runformat.format import Checkpoint
from bench_nb.runner import RunResult, run_benchmark
from bench_nb.runner.retrieval import (
    EvidenceIndex,
    RetrievalOutcome,
    declared_evidence_level,
    retrieval_metrics,
    score_retrieval,
)

# -- the definitions ----------------------------------------------------------------------------------------


def test_recall_with_two_relevant_and_one_retrieved() -> None:
    m = retrieval_metrics(["a", "x", "y"], {"a", "b"}, k=3)
    assert m is not None
    assert (m.relevantRetrieved, m.totalRelevant, m.k) == (1, 2, 3)
    assert m.recallAtK == 0.5 and m.precisionAtK == pytest.approx(1 / 3) and m.hitAtK == 1.0
    assert m.f1AtK == pytest.approx(0.4)  # 2 * (1/3) * (1/2) / (1/3 + 1/2)
    assert m.mrr == 1.0
    # One of the two relevant items at rank 1: DCG 1, ideal DCG 1 + 1/log2(3).
    assert m.ndcg == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_ndcg_with_known_values() -> None:
    m = retrieval_metrics(["x", "a", "b"], {"a", "b"}, k=3)
    assert m is not None
    # DCG = 1/log2(3) + 1/log2(4) = 1.1309297536; IDCG = 1 + 1/log2(3) = 1.6309297536.
    assert m.ndcg == pytest.approx(0.6934264036, abs=1e-9)
    assert m.mrr == 0.5 and m.recallAtK == 1.0 and m.precisionAtK == pytest.approx(2 / 3)
    perfect = retrieval_metrics(["a", "b", "x"], {"a", "b"}, k=3)
    assert perfect is not None and perfect.ndcg == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("ranked", "relevant", "k"),
    [
        (["x", "a", "b"], {"a", "b"}, 3),
        (["a", "x", "y", "z"], {"a", "b", "c"}, 4),
        (["x", "y", "c", "q", "b"], {"b", "c"}, 5),
        (["x", "y"], {"a"}, 2),
    ],
)
def test_ndcg_agrees_with_scikit_learn(ranked: list[str], relevant: set[str], k: int) -> None:
    # scikit-learn ranks every item by score; the relevant items not retrieved come after the retrieved ones.
    items = ranked + sorted(relevant - set(ranked))
    y_true = np.array([[1.0 if item in relevant else 0.0 for item in items]])
    y_score = np.array([[float(len(items) - i) for i in range(len(items))]])
    m = retrieval_metrics(ranked, relevant, k=k)
    assert m is not None
    assert m.ndcg == pytest.approx(ndcg_score(y_true, y_score, k=k))


def test_mrr_is_the_reciprocal_rank_of_the_first_relevant_hit() -> None:
    m = retrieval_metrics([None, "x", "b", "a"], {"a", "b"}, k=4)
    assert m is not None and m.mrr == pytest.approx(1 / 3)
    none = retrieval_metrics(["x", None], {"a"}, k=10)
    assert none is not None
    assert (none.hitAtK, none.mrr, none.ndcg, none.recallAtK, none.relevantRetrieved) == (
        0.0,
        0.0,
        0.0,
        0.0,
        0,
    )


def test_a_repeated_unit_counts_once() -> None:
    m = retrieval_metrics(["a", "a", "b"], {"a", "b"}, k=3)
    assert m is not None
    assert m.relevantRetrieved == 2 and m.precisionAtK == pytest.approx(2 / 3) and m.recallAtK == 1.0
    assert m.ndcg == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))


def test_only_the_top_k_count_and_missing_slots_are_not_relevant() -> None:
    late = retrieval_metrics(["x", "y", "a"], {"a"}, k=2)
    assert late is not None and late.hitAtK == 0.0 and late.k == 2
    short = retrieval_metrics(["a"], {"a"}, k=10)
    assert short is not None and short.precisionAtK == 0.1 and short.ndcg == 1.0 and short.recallAtK == 1.0
    assert retrieval_metrics(["a"], set(), k=3) is None


# -- the level: what the evidence and the hits allow ---------------------------------------------------------

HAYSTACK = Haystack(
    "conv",
    (
        Session(
            "S1",
            "2024-01-01",
            (Message("ann", "one", message_id="D1:1"), Message("bob", "two", message_id="D1:2")),
        ),
        Session("S2", "2024-01-02", (Message("ann", "three", message_id="D2:1"),)),
        Session("S3", "2024-01-03", (Message("bob", "four", message_id="D3:1"),)),
    ),
)
INDEX = EvidenceIndex.of(HAYSTACK)


def message_hit(mid: str, session: str) -> SearchHit:
    return SearchHit(text=mid, hit_id=mid, session_id=session)


def memory_hit(memory_id: str, session: str | None) -> SearchHit:
    """A hit of a session-level provider: its own memory id, our session id."""
    return SearchHit(text=memory_id, hit_id=memory_id, session_id=session)


def score(
    hits: Sequence[SearchHit], evidence: Sequence[str], level: EvidenceLevel | None, k: int = 3
) -> RetrievalOutcome:
    return score_retrieval(hits, evidence, INDEX, k=k, provider="p", provider_level=level)


def test_message_evidence_with_message_hits() -> None:
    out = score(
        [message_hit("D1:2", "S1"), message_hit("D1:1", "S1"), message_hit("D2:1", "S2")], ["D2:1"], "message"
    )
    assert out.level == "message" and out.note is None and out.metrics is not None
    # Message level: D1:1 and D1:2 share S1 with nothing relevant; D2:1 at rank 3.
    assert out.metrics.mrr == pytest.approx(1 / 3) and out.metrics.totalRelevant == 1
    assert out.bench_nb() == {"retrievalLevel": "message", "retrievalNote": None}


def test_message_evidence_is_mapped_to_sessions_for_a_session_level_provider() -> None:
    # Evidence D1:2 and D2:1 are in sessions S1 and S2; the provider's hits are memories it made.
    hits = [memory_hit("mem-9", "S2"), memory_hit("mem-4", "S3"), memory_hit("mem-7", "S2")]
    out = score(hits, ["D1:2", "D2:1"], "session")
    assert out.level == "session" and out.metrics is not None
    assert (out.metrics.relevantRetrieved, out.metrics.totalRelevant) == (1, 2)
    assert (
        out.metrics.recallAtK == 0.5
        and out.metrics.mrr == 1.0
        and out.metrics.precisionAtK == pytest.approx(1 / 3)
    )
    assert (
        out.note is not None
        and "mapped to its sessions" in out.note
        and "p's hits trace to sessions only" in out.note
    )


def test_session_evidence_with_message_hits_is_scored_by_session() -> None:
    # LongMemEval: answer_session_ids. Two hits of S1 are one unit; S3 is relevant at rank 3.
    hits = [message_hit("D1:1", "S1"), message_hit("D1:2", "S1"), message_hit("D3:1", "S3")]
    out = score(hits, ["S1", "S3"], "message")
    assert out.level == "session" and out.note is None and out.metrics is not None
    assert (out.metrics.relevantRetrieved, out.metrics.recallAtK, out.metrics.mrr) == (2, 1.0, 1.0)
    assert out.metrics.ndcg == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))


def test_a_provider_at_level_none_gets_no_metrics() -> None:
    facts = [
        SearchHit(text="Ann likes tea", hit_id="edge-uuid-1"),
        SearchHit(text="Bob moved", hit_id="edge-2"),
    ]
    out = score(facts, ["D1:1"], "none")
    assert out.metrics is None and out.level is None
    assert out.note is not None and "no retrieval metrics" in out.note and "evidence_level 'none'" in out.note
    assert out.bench_nb() == {"retrievalLevel": None, "retrievalNote": out.note}


def test_no_evidence_gives_no_metrics_and_says_why() -> None:
    assert (
        score([message_hit("D1:1", "S1")], [], "message").note
        == "no retrieval metrics: the question's evidence is not given"
    )
    unknown = score([message_hit("D1:1", "S1")], ["D9:9"], "message")
    assert unknown.metrics is None and "names nothing in the haystack" in (unknown.note or "")
    partly = score([message_hit("D1:1", "S1")], ["D1:1", "D9:9"], "message")
    assert partly.metrics is not None and partly.metrics.totalRelevant == 1
    assert "1 evidence id(s) name nothing in the haystack" in (partly.note or "")


def test_mixed_evidence_is_scored_by_session() -> None:
    out = score([message_hit("D2:1", "S2")], ["S1", "D2:1"], "message")
    assert out.level == "session" and out.metrics is not None and out.metrics.totalRelevant == 2
    assert "the evidence also names whole sessions" in (out.note or "")


def test_an_undeclared_provider_is_judged_by_its_hits() -> None:
    assert score([message_hit("D1:1", "S1")], ["D1:1"], None).level == "message"
    by_session = score([memory_hit("m1", "S1")], ["D1:1"], None)
    assert by_session.level == "session" and by_session.metrics is not None and by_session.metrics.hitAtK == 1
    opaque = score([SearchHit(text="a fact", hit_id="f1")], ["D1:1"], None)
    assert opaque.metrics is None and "has hits that show no link" in (opaque.note or "")
    empty = score([], ["D1:1"], None)
    assert empty.level == "message" and empty.metrics is not None and empty.metrics.recallAtK == 0.0


def test_more_hits_than_k_are_all_counted() -> None:
    # full-context returns its whole budget: the metrics are about everything the answerer was given.
    hits = [
        message_hit("D1:1", "S1"),
        message_hit("D1:2", "S1"),
        message_hit("D2:1", "S2"),
        message_hit("D3:1", "S3"),
    ]
    out = score(hits, ["D3:1"], "message", k=2)
    assert (
        out.metrics is not None
        and out.metrics.k == 4
        and out.metrics.recallAtK == 1.0
        and out.metrics.mrr == 0.25
    )


def test_declared_levels_of_the_built_in_providers(tmp_path: Path) -> None:
    levels = {
        name: declared_evidence_level(get_provider(name, run_dir=tmp_path))
        for name in ("sqlite", "full-context", "no-memory")
    }
    assert levels == {"sqlite": "message", "full-context": "message", "no-memory": "none"}


def test_declared_levels_of_the_cloud_providers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SUPERMEMORY_API_KEY", "MEM0_API_KEY", "ZEP_API_KEY"):
        monkeypatch.setenv(var, "dummy-for-a-level-check")
    levels = {
        name: declared_evidence_level(get_provider(name, run_dir=tmp_path))
        for name in ("supermemory", "mem0", "zep")
    }
    assert levels == {"supermemory": "session", "mem0": "session", "zep": "none"}
    episodes = get_provider("zep", run_dir=tmp_path, scope="episodes")  # hits are our messages
    assert declared_evidence_level(episodes) == "message"


def test_a_bad_declared_level_is_refused() -> None:
    wrong = CountingProvider()
    wrong.evidence_level = "paragraph"  # type: ignore[attr-defined]
    with pytest.raises(ProviderError, match="evidence_level must be one of message, session, none"):
        declared_evidence_level(wrong)


# -- through the runner ---------------------------------------------------------------------------------------


class FactProvider(CountingProvider):
    """Zep-like: returns facts of its own making, traced to nothing of the benchmark's."""

    evidence_level = "none"

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        return [
            SearchHit(text=h.text, score=h.score, hit_id=f"fact-{i}")
            for i, h in enumerate(super().search(container, query, k))
        ]


class SessionMemoryProvider(CountingProvider):
    """Supermemory-like: a hit is a memory of one session (its own id, our session id)."""

    evidence_level = "session"

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        return [
            SearchHit(text=h.text, score=h.score, session_id=h.session_id, hit_id=f"mem-{i}")
            for i, h in enumerate(super().search(container, query, k))
        ]


def _checkpoint(run_dir: Path) -> Checkpoint:
    return msgspec.json.decode((run_dir / "checkpoint.json").read_bytes(), type=Checkpoint)


def _run(tmp_path: Path, provider: CountingProvider, rid: str) -> RunResult:
    return run_benchmark(
        provider,
        make_benchmark(2, 3),
        run_id=rid,
        runs_dir=tmp_path,
        k=3,
        progress=False,
        checkpoint_every_s=0.0,
    )


def test_a_zep_like_provider_gets_no_retrieval_metrics(tmp_path: Path) -> None:
    result = _run(tmp_path, FactProvider("facts"), "z")
    assert result.evaluated == 6
    ck = _checkpoint(result.run_dir)
    assert (ck.benchNb or {})["evidenceLevel"] == "none"
    for q in ck.questions.values():
        assert q.phases.evaluate.status == "completed" and q.phases.evaluate.retrievalMetrics is None
        assert "no retrieval metrics" in (q.benchNb or {})["retrievalNote"]
        assert "retrievalLevel" not in (q.benchNb or {})
    report = json.loads((result.run_dir / "report.json").read_text())
    assert "retrieval" not in report and all("retrievalMetrics" not in e for e in report["evaluations"])
    df = questions_df(result.run_dir)
    assert isinstance(df, pd.DataFrame) and df["recall_at_k"].isna().all()  # missing, not 0


def test_a_session_level_provider_is_scored_by_session(tmp_path: Path) -> None:
    result = _run(tmp_path, SessionMemoryProvider("memories"), "s")
    ck = _checkpoint(result.run_dir)
    q = ck.questions["h1-q1"]  # evidence h1-m1, in session h1-s1, which the top hit comes from
    rm = q.phases.evaluate.retrievalMetrics
    assert rm is not None and rm.hitAtK == 1.0 and rm.mrr == 1.0 and rm.totalRelevant == 1
    assert (q.benchNb or {})["retrievalLevel"] == "session"
    assert "mapped to its sessions" in (q.benchNb or {})["retrievalNote"]
    # The abstention question has no evidence: no metrics, and a note saying so.
    abst = ck.questions["h1-q2"]
    assert abst.phases.evaluate.retrievalMetrics is None
    assert (abst.benchNb or {})[
        "retrievalNote"
    ] == "no retrieval metrics: the question's evidence is not given"


def test_no_memory_has_no_retrieval_metrics(tmp_path: Path) -> None:
    result = run_benchmark("no-memory", "sample", run_id="n", runs_dir=tmp_path, limit=6, progress=False)
    ck = _checkpoint(result.run_dir)
    assert all(q.phases.evaluate.retrievalMetrics is None for q in ck.questions.values())
    assert "retrieval" not in json.loads((result.run_dir / "report.json").read_text())
