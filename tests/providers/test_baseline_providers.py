from __future__ import annotations

from pathlib import Path

import pytest
from provider_fixtures import CONVERSATION, MESSAGE_COUNT

from bench_nb.errors import ProviderError
from bench_nb.models.tokens import count_tokens
from bench_nb.providers import FullContextProvider, NoMemoryProvider, get_provider
from bench_nb.records import Message, Session
from llm_server import LLMServer, fake_token_count, llm_server

__all__ = ["llm_server"]

ALL_IDS = [m.message_id for s in CONVERSATION for m in s.messages]


def _full(tmp_path: Path, **settings: object) -> FullContextProvider:
    p = get_provider("full-context", run_dir=tmp_path, **settings)
    assert isinstance(p, FullContextProvider)
    return p


def test_full_context_returns_the_whole_haystack_in_order(tmp_path: Path) -> None:
    p = _full(tmp_path)
    p.await_indexing("c", p.ingest("c", CONVERSATION), timeout_s=5)
    hits = p.search("c", "anything at all", 5)
    assert [h.hit_id for h in hits] == ALL_IDS  # k does not cut the baseline: its budget does
    assert (
        hits[0].text
        == "[2023-05-08T13:56:00] Priya: Hey Sam! Big news, we adopted a golden retriever puppy last weekend."
    )
    assert hits[-1].session_id == "s3"
    assert all(h.score is None for h in hits)
    assert p.search("c", "", 1) == hits  # the query is not used
    assert hits[0].raw is not None
    assert hits[0].raw["tokenizer"] == "tiktoken:o200k_base"
    assert hits[0].raw["tokens"] == count_tokens(hits[0].text, "gpt-4o").n


def _tokens(ids: list[str], hits_by_id: dict[str, str]) -> int:
    return sum(count_tokens(hits_by_id[i], "gpt-4o").n for i in ids)


def test_budget_keeps_the_most_recent_messages_exactly(tmp_path: Path) -> None:
    whole = _full(tmp_path / "whole")
    whole.ingest("c", CONVERSATION)
    texts = {h.hit_id: h.text for h in whole.search("c", "q", 1) if h.hit_id}
    last_five = ALL_IDS[-5:]
    budget = _tokens(last_five, texts)

    exact = _full(tmp_path / "exact", max_context_tokens=budget)
    exact.ingest("c", CONVERSATION)
    kept = exact.search("c", "q", 1)
    assert [h.hit_id for h in kept] == last_five  # oldest first, the newest stretch that fits
    assert sum(h.raw["tokens"] for h in kept if h.raw) == budget

    tight = _full(tmp_path / "tight", max_context_tokens=budget - 1)
    tight.ingest("c", CONVERSATION)
    assert [h.hit_id for h in tight.search("c", "q", 1)] == ALL_IDS[-4:]


def test_a_cut_context_says_so_on_every_kept_hit(tmp_path: Path) -> None:
    whole = _full(tmp_path / "whole")
    whole.ingest("c", CONVERSATION)
    assert all(h.raw is not None and "contextCut" not in h.raw for h in whole.search("c", "q", 1))
    texts = {h.hit_id: h.text for h in whole.search("c", "q", 1) if h.hit_id}
    budget = _tokens(ALL_IDS[-3:], texts)
    cut = _full(tmp_path / "cut", max_context_tokens=budget)
    cut.ingest("c", CONVERSATION)
    kept = cut.search("c", "q", 1)
    assert len(kept) == 3
    expected = {"droppedMessages": MESSAGE_COUNT - 3, "budgetTokens": budget}
    assert all(h.raw is not None and h.raw["contextCut"] == expected for h in kept)


def test_budget_cut_is_contiguous(tmp_path: Path) -> None:
    long_first = Session("old", None, (Message("A", "short"),))
    huge = Session("mid", None, (Message("B", "word " * 500),))
    recent = Session("new", None, (Message("C", "the latest news"),))
    p = _full(tmp_path, max_context_tokens=60)
    p.ingest("c", [long_first, huge, recent])
    # the huge message does not fit, so nothing older than it is kept either
    assert [h.session_id for h in p.search("c", "q", 3)] == ["new"]


def test_full_context_persists_and_is_idempotent(tmp_path: Path) -> None:
    p = _full(tmp_path)
    p.ingest("c", CONVERSATION[:2])
    first = p.search("c", "q", 1)
    p.ingest("c", CONVERSATION)  # re-ingest after a crash, now complete: cache dropped, no duplicates
    assert [h.hit_id for h in p.search("c", "q", 1)] == ALL_IDS
    assert len(first) < MESSAGE_COUNT
    reopened = _full(tmp_path)
    assert [h.hit_id for h in reopened.search("c", "q", 1)] == ALL_IDS
    reopened.clear("c")
    with pytest.raises(ProviderError, match="ingest it first"):
        reopened.search("c", "q", 1)


def test_full_context_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="max_context_tokens must be positive"):
        _full(tmp_path, max_context_tokens=0)
    with pytest.raises(ProviderError, match="cannot count tokens for model 'no-such-model'"):
        _full(tmp_path, model="no-such-model")
    p = _full(tmp_path)
    p.ingest("c", CONVERSATION)
    with pytest.raises(ProviderError, match="positive integer"):
        p.search("c", "q", 0)


def test_full_context_records_which_tokenizer_counted(tmp_path: Path) -> None:
    p = _full(tmp_path, model="gpt-4")
    p.ingest("c", CONVERSATION)
    hit = p.search("c", "q", 1)[0]
    assert hit.raw is not None
    assert hit.raw["tokenizer"] == "tiktoken:cl100k_base"
    assert hit.raw["tokens"] == count_tokens(hit.text, "gpt-4").n


def test_no_memory_stores_and_finds_nothing(tmp_path: Path) -> None:
    p = get_provider("no-memory", run_dir=tmp_path)
    assert isinstance(p, NoMemoryProvider)
    ingested = p.ingest("c", CONVERSATION)
    assert ingested.document_ids == ()
    p.await_indexing("c", ingested, timeout_s=1)
    assert p.search("c", "Biscuit", 10) == []
    p.clear("c")
    assert list(tmp_path.iterdir()) == []  # nothing written
    with pytest.raises(ProviderError, match="positive integer"):
        p.search("c", "Biscuit", 0)


def test_full_context_counts_claude_tokens_through_one_client(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With Claude's tokenizer every message is counted by Anthropic's count_tokens API. The provider asks
    # through one client of its own: one connection for the haystack, not a client (a new connection and a
    # cache file opened again) per message, as when there was a process-wide client to fall back on.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    p = _full(tmp_path, model="sonnet-4.5")
    p.await_indexing("c", p.ingest("c", CONVERSATION), timeout_s=5)
    hits = p.search("c", "anything", 5)
    counts = [c for c in llm_server.calls if c.path.endswith("/count_tokens")]
    assert len(hits) == len(counts) == MESSAGE_COUNT
    assert [h.raw["tokens"] for h in hits] == [fake_token_count(h.text) for h in hits]
    assert len({c.port for c in counts}) == 1
