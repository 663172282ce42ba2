"""mem0-local with ``infer=True``: real mem0 extracting memories through its LLM, pointed at the local
OpenAI-compatible server, and every reply's billed tokens metered as memory-side usage, end to end into a
run's checkpoint and questions frame. On the ``mem0`` extra (skipped without it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from provider_fixtures import CONVERSATION, require_mem0_extra

from bench_nb import questions_df
from bench_nb.models.prices import DEFAULT_PRICES
from bench_nb.providers import get_provider
from bench_nb.providers.usage import metered, reports_usage
from bench_nb.records import Benchmark, Haystack, Question
from bench_nb.runner import run_benchmark
from llm_server import LLMServer, fake_token_count, llm_server, request_text

__all__ = ["llm_server"]


@pytest.fixture(autouse=True)
def _extra() -> None:
    require_mem0_extra()


def _extractor(path: str, body: dict[str, Any]) -> str:
    """mem0's extraction reply: each conversation message the request quotes becomes a memory."""
    text = request_text(body)
    found = [m.content for s in CONVERSATION for m in s.messages if m.content in text]
    return json.dumps({"memory": [{"text": t} for t in found]})


@pytest.fixture
def extractor(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    llm_server.responder = _extractor
    monkeypatch.setenv("OPENAI_API_KEY", "sk-mem0-local-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return llm_server


def _cost(n_in: int, n_out: int) -> float:
    price = DEFAULT_PRICES["gpt-4o-mini"]
    return (n_in * price.input_per_mtok + n_out * price.output_per_mtok) / 1e6


def _billed(server: LLMServer) -> tuple[int, int]:
    calls = [c for c in server.calls if c.path.endswith("/chat/completions")]
    n_in = sum(fake_token_count(request_text(c.body)) for c in calls)
    n_out = sum(fake_token_count(_extractor(c.path, c.body)) for c in calls)
    return n_in, n_out


def test_infer_meters_each_extraction_call_and_hits_trace_to_sessions(
    tmp_path: Path, extractor: LLMServer
) -> None:
    p = get_provider("mem0-local", run_dir=tmp_path, infer=True, llm_base_url=extractor.openai_base_url)
    try:
        ingested, entry = metered(reports_usage(p), lambda: p.ingest("c1", CONVERSATION))
        assert extractor.count("/chat/completions") == len(CONVERSATION)  # one extraction per session
        n_in, n_out = _billed(extractor)
        assert entry == {
            "model": "gpt-4o-mini",
            "calls": len(CONVERSATION),
            "inputTokens": n_in,
            "outputTokens": n_out,
            "costUsd": pytest.approx(_cost(n_in, n_out)),
            "cached": False,
        }
        assert n_in > 0 and n_out > 0
        assert len(ingested.document_ids) >= len(CONVERSATION)  # the memories mem0 added
        p.await_indexing("c1", ingested, 5)
        hits, searched = metered(
            reports_usage(p), lambda: p.search("c1", "What sport event is Sam preparing for?", 3)
        )
        assert hits and hits[0].session_id == "s2" and "marathon" in hits[0].text
        assert hits[0].hit_id is None  # an extracted memory is no message of ours: traced to its session
        assert searched is not None and searched["calls"] == 0 and searched["costUsd"] == 0.0
    finally:
        p.close()


def test_a_run_records_mem0s_extraction_cost_as_memory_side_cost(
    tmp_path: Path, extractor: LLMServer
) -> None:
    questions = tuple(
        Question(f"c-q{i}", text, answer, "single-hop", "single-hop", "c", evidence_ids=(ev,))
        for i, (text, answer, ev) in enumerate(
            [
                ("What sport event is Sam preparing for?", "marathon", "D2:1"),
                ("What is the puppy called?", "Biscuit", "D1:3"),
            ]
        )
    )
    bench = Benchmark("mem0-infer", questions, {"c": Haystack("c", CONVERSATION)}, sha256="0" * 64)
    result = run_benchmark(
        "mem0-local",
        bench,
        runs_dir=tmp_path / "runs",
        run_id="infer",
        progress=False,
        provider_settings={"infer": True, "llm_base_url": extractor.openai_base_url},
    )
    ck = json.loads((result.run_dir / "checkpoint.json").read_text())
    n_in, n_out = _billed(extractor)
    ingest = ck["questions"]["c-q0"]["benchNb"]["usage"]["memory"]["ingest"]
    assert (ingest["calls"], ingest["inputTokens"], ingest["outputTokens"], ingest["sharedBy"]) == (
        len(CONVERSATION),
        n_in,
        n_out,
        2,
    )
    assert ck["benchNb"]["usage"]["memory"]["total"]["costUsd"] == pytest.approx(_cost(n_in, n_out))
    assert ck["benchNb"]["evidenceLevel"] == "session"
    df = questions_df(result.run_dir, backend="polars")
    assert df["memory_calls"].sum() == pytest.approx(len(CONVERSATION))
    assert df["memory_cost_usd"].sum() == pytest.approx(_cost(n_in, n_out))
    assert df["total_cost_usd"].sum() == pytest.approx(_cost(n_in, n_out))  # extractive + contains/f1: free
    assert df["context_tokens"].null_count() == 0  # MemScore's context tokens, measured as ever
    get_provider(
        "mem0-local", run_dir=result.run_dir, infer=True, llm_base_url=extractor.openai_base_url
    ).close()


def test_infer_without_a_key_says_which_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_nb.errors import ProviderError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        get_provider("mem0-local", run_dir=tmp_path, infer=True)
