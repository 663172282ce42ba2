"""mem0-local and hybrid: real mem0 (embedded Qdrant) and a real local embedder, on the ``mem0`` extra.

Skipped with the reason when the extra is missing; failing instead with BENCH_NB_REQUIRE_EXTRAS=1.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from provider_fixtures import CONVERSATION, MESSAGE_COUNT, require_mem0_extra

from bench_nb.errors import ProviderError
from bench_nb.providers import get_provider
from bench_nb.providers.store import container_file_name
from bench_nb.records import Message, Session


@pytest.fixture(autouse=True)
def _extra() -> None:
    require_mem0_extra()


# A question sharing no content word with its evidence (D2:1: "I signed up for the Chicago marathon in
# October."): BM25 matches only the speaker's name, embeddings find it.
SEMANTIC = ("What sport event is Sam preparing for?", "D2:1")
LEXICAL = ("Where did Ana move for her architect job?", "D1:4")


def test_mem0_local_finds_the_right_message_and_keeps_our_ids(tmp_path: Path) -> None:
    from bench_nb.providers.mem0_local import Mem0LocalProvider

    p = get_provider("mem0-local", run_dir=tmp_path)
    assert isinstance(p, Mem0LocalProvider)
    try:
        ingested = p.ingest("conv", CONVERSATION)
        assert ingested.document_ids == tuple(m.message_id for s in CONVERSATION for m in s.messages)
        p.await_indexing("conv", ingested, timeout_s=30)
        for query, expected in (SEMANTIC, LEXICAL):
            hits = p.search("conv", query, 3)
            assert len(hits) == 3
            assert hits[0].hit_id == expected, [h.text for h in hits]
        top = p.search("conv", LEXICAL[0], 1)[0]
        assert (
            top.text
            == "[2023-05-08T13:56:00] Sam: Ha. My sister Ana just moved to Lisbon for a job as an architect."
        )
        assert top.session_id == "s1"
        assert top.raw is not None and top.raw["id"] != "D1:4"  # mem0's own id, ours in metadata
        assert top.raw["metadata"]["message_id"] == "D1:4"
        assert top.score is not None and 0 < top.score <= 1
        assert (tmp_path / "memory" / "mem0-local" / "qdrant").is_dir()

        # idempotent re-ingest, other containers untouched, empty query, k
        p.ingest("conv", CONVERSATION[:1])
        p.ingest("other", CONVERSATION[2:])
        assert p.count("conv") == MESSAGE_COUNT
        assert p.count("other") == len(CONVERSATION[2].messages)
        assert {h.raw["user_id"] for h in p.search("other", "Biscuit", 50) if h.raw} == {"other"}
        assert p.search("conv", "?!", 3) == []
        with pytest.raises(ProviderError, match="positive integer"):
            p.search("conv", "Biscuit", 0)
    finally:
        p.close()

    # persistence: a new object on the same run directory opens the same embedded Qdrant
    reopened = get_provider("mem0-local", run_dir=tmp_path)
    assert isinstance(reopened, Mem0LocalProvider)
    try:
        assert reopened.search("conv", SEMANTIC[0], 1)[0].hit_id == SEMANTIC[1]
        reopened.clear("conv")
        assert reopened.search("conv", SEMANTIC[0], 3) == []
        assert reopened.search("other", "Denver", 1)[0].hit_id == "D3:3"
    finally:
        reopened.close()


def test_hybrid_fuses_bm25_and_vectors(tmp_path: Path) -> None:
    from bench_nb.providers.hybrid import RRF_K, HybridProvider

    p = get_provider("hybrid", run_dir=tmp_path)
    assert isinstance(p, HybridProvider)
    assert p.rrf_k == RRF_K == 60
    p.await_indexing("conv", p.ingest("conv", CONVERSATION), timeout_s=5)

    # the semantic question: BM25 alone misses, the fused ranking finds it
    sqlite = get_provider("sqlite", run_dir=tmp_path)
    sqlite.ingest("conv", CONVERSATION)
    assert SEMANTIC[1] not in [h.hit_id for h in sqlite.search("conv", SEMANTIC[0], 3)]
    hits = p.search("conv", SEMANTIC[0], 3)
    assert hits[0].hit_id == SEMANTIC[1]
    assert p.search("conv", LEXICAL[0], 3)[0].hit_id == LEXICAL[1]

    # the score is the reciprocal rank fusion of the two ranks it reports
    for hit in p.search("conv", "Biscuit barbecue sausage", 5):
        assert hit.raw is not None
        expected = sum(1 / (60 + hit.raw[r]) for r in ("bm25_rank", "vector_rank") if r in hit.raw)
        assert hit.score == pytest.approx(expected)
    assert len(p.search("conv", "Biscuit", 4)) == 4
    assert p.search("conv", "", 4) == []

    # one vector per message, in the container's file, replaced on re-ingest
    p.ingest("conv", CONVERSATION)
    path = tmp_path / "memory" / "hybrid" / container_file_name("conv")
    with sqlite3.connect(path) as conn:
        n_vectors, n_messages = conn.execute(
            "SELECT (SELECT COUNT(*) FROM vectors), (SELECT COUNT(*) FROM messages)"
        ).fetchone()
        orphans = conn.execute(
            "SELECT COUNT(*) FROM vectors WHERE id NOT IN (SELECT id FROM messages)"
        ).fetchone()[0]
    assert n_vectors == n_messages == MESSAGE_COUNT
    assert orphans == 0

    reopened = get_provider("hybrid", run_dir=tmp_path)
    assert [h.hit_id for h in reopened.search("conv", SEMANTIC[0], 3)] == [h.hit_id for h in hits]


def test_hybrid_on_an_empty_container(tmp_path: Path) -> None:
    p = get_provider("hybrid", run_dir=tmp_path)
    p.ingest("empty", [Session("s", None, ())])
    assert p.search("empty", "anything", 3) == []
    p.ingest("one", [Session("s", None, (Message("A", "a lone message about kayaks"),))])
    assert [h.hit_id for h in p.search("one", "boats", 3)] == ["s:0"]


def test_extra_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="threshold must be within 0 and 1"):
        get_provider("mem0-local", run_dir=tmp_path, threshold=2)
    with pytest.raises(ProviderError, match="rrf_k must be >= 0"):
        get_provider("hybrid", run_dir=tmp_path, rrf_k=-1)
    with pytest.raises(ProviderError, match="does not exist"):
        get_provider("hybrid", run_dir=tmp_path, model_path=tmp_path / "no-model")


def test_hybrid_concurrent_searches_match_sequential_ones(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    p = get_provider("hybrid", run_dir=tmp_path)
    for c in ("a", "b"):
        p.ingest(c, CONVERSATION)
    queries = [SEMANTIC[0], LEXICAL[0], "Biscuit", "knee physiotherapy", "pottery"]
    expected = {q: [h.hit_id for h in p.search("a", q, 4)] for q in queries}

    def work(i: int) -> bool:
        q = queries[i % len(queries)]
        return [h.hit_id for h in p.search("ab"[i % 2], q, 4)] == expected[q]

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(work, range(40)))


# mem0-local in a fresh process, as a run uses it: set up, ingest, search, close.
_QUIET_SCRIPT = """
import sys
from bench_nb.providers import get_provider
from bench_nb.records import Message, Session

p = get_provider("mem0-local", run_dir=sys.argv[1])
p.ingest("c", [Session("S1", "2023-05-08", (Message("Ann", "I adopted a cat.", message_id="D1:1"),))])
print(p.search("c", "Which pet did Ann adopt?", 1)[0].hit_id)
p.close()
"""


@pytest.mark.slow
def test_mem0_local_prints_nothing_on_stderr(tmp_path: Path) -> None:
    # Without the fix: transformers' "Loading weights" bar, mem0's "spaCy is not installed" (twice) and
    # "fastembed not installed - BM25 keyword search disabled" notices, on every run.
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", _QUIET_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "D1:1\n"
    assert done.stderr == ""
