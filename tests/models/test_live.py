"""Live calls to the real APIs: run with ``pytest -m live``; each test skips without its key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench_nb.judges.llm import LLMJudge
from bench_nb.models.client import LLMClient
from bench_nb.models.settings import ClientSettings
from bench_nb.models.tokens import count_tokens
from bench_nb.records import Question

pytestmark = pytest.mark.live

CASES = [
    ("gpt-4o-mini", "OPENAI_API_KEY"),
    ("haiku-4.5", "ANTHROPIC_API_KEY"),
    ("gemini-2.5-flash", "GEMINI_API_KEY"),
]


def _client(tmp_path: Path) -> LLMClient:
    # The real endpoints, whatever OPENAI_BASE_URL etc. say, and a throwaway cache.
    return LLMClient(ClientSettings(timeout_s=60, max_retries=3, cache_path=tmp_path / "llm.sqlite"))


@pytest.mark.parametrize(("model", "key"), CASES)
def test_live_reply_tokens_and_cost(model: str, key: str, tmp_path: Path) -> None:
    if not os.environ.get(key) and not (key == "GEMINI_API_KEY" and os.environ.get("GOOGLE_API_KEY")):
        pytest.skip(f"{key} not set")
    client = _client(tmp_path)
    reply = client.complete(model, [{"role": "user", "content": "Reply with the single word: pong"}])
    assert "pong" in reply.text.lower()
    assert reply.input_tokens and reply.output_tokens and reply.cost_usd is not None and reply.cost_usd > 0
    assert client.complete(model, [{"role": "user", "content": "Reply with the single word: pong"}]).cached


@pytest.mark.parametrize(("model", "key"), CASES[:2])
def test_live_judge_verdict(model: str, key: str, tmp_path: Path) -> None:
    if not os.environ.get(key):
        pytest.skip(f"{key} not set")
    q = Question("q", "When did Caroline go to the support group?", "7 May 2023", "temporal", "temporal", "h")
    verdict = LLMJudge(model, client=_client(tmp_path)).judge(q, "She went on May 7, 2023.")
    assert (verdict.score, verdict.label) == (1, "correct")


def test_live_anthropic_count_tokens(tmp_path: Path) -> None:
    if not os.environ.get("ANTHROPIC_API_KEY"):
        pytest.skip("ANTHROPIC_API_KEY not set")
    client = _client(tmp_path)
    short, long = (
        count_tokens("hello", "haiku-4.5", client=client),
        count_tokens("hello " * 100, "haiku-4.5", client=client),
    )
    assert short.tokenizer == "anthropic:count_tokens" and short.exact
    assert long.n - short.n >= 90
