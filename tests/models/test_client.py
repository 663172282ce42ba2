"""The LLM client against a real HTTP server: both SDKs, every injected fault, the cache, tokens and cost."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from llm_settings import SECRET, fast_settings

from bench_nb.errors import ModelError
from bench_nb.models.aliases import resolve_model
from bench_nb.models.client import LLMClient
from bench_nb.models.prices import DEFAULT_PRICES, set_price
from bench_nb.models.settings import ClientSettings
from bench_nb.models.tokens import count_tokens
from llm_server import Fault, LLMServer, Reply, fake_token_count

MSGS = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What did Caroline research?"},
]
MODELS = ["gpt-4o-mini", "sonnet-4.5"]


@pytest.mark.parametrize("model", MODELS)
def test_a_call_returns_text_tokens_and_cost(client: LLMClient, llm_server: LLMServer, model: str) -> None:
    llm_server.script(Reply("adoption agencies"))
    reply = client.complete(model, MSGS)
    assert reply.text == "adoption agencies"
    assert (reply.cached, reply.attempts) == (False, 1)
    assert reply.input_tokens == fake_token_count("You are terse.\nWhat did Caroline research?")
    assert reply.output_tokens == 2
    price = DEFAULT_PRICES[reply.model_id]
    expected = (reply.input_tokens * price.input_per_mtok + 2 * price.output_per_mtok) / 1e6
    assert reply.cost_usd == pytest.approx(expected)
    (call,) = llm_server.calls
    if model == "gpt-4o-mini":
        assert call.path == "/v1/chat/completions"
        assert call.body["model"] == "gpt-4o-mini"
        assert call.body["temperature"] == 0.0
        assert call.body["max_completion_tokens"] == 1024
        assert call.body["messages"][0] == {"role": "system", "content": "You are terse."}
        assert call.headers["authorization"] == f"Bearer {SECRET}"
    else:
        assert call.path == "/v1/messages"
        assert call.body["model"] == "claude-sonnet-4-5-20250929"
        assert call.body["system"] == "You are terse."
        assert [m["role"] for m in call.body["messages"]] == ["user"]
        assert SECRET in (
            call.headers.get("x-api-key"),
            call.headers.get("authorization", "").removeprefix("Bearer "),
        )


def test_reasoning_models_get_no_temperature_and_json_mode_is_asked(
    client: LLMClient, llm_server: LLMServer
) -> None:
    client.complete("o4-mini", MSGS, json=True)
    body = llm_server.calls[-1].body
    assert "temperature" not in body
    assert body["max_completion_tokens"] == 8192
    assert body["response_format"] == {"type": "json_object"}
    client.complete("gemini-2.5-flash", MSGS)
    assert llm_server.calls[-1].body["max_tokens"] == 1024  # OpenAI-compatible endpoints take max_tokens


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("kind", ["500", "slow", "malformed", "truncated"])
def test_each_fault_is_retried_until_it_succeeds(
    client: LLMClient, llm_server: LLMServer, model: str, kind: str
) -> None:
    llm_server.script(Fault(kind, delay=2.5), Reply("recovered"))  # type: ignore[arg-type]
    reply = client.complete(model, MSGS)
    assert reply.text == "recovered"
    assert reply.attempts == 2
    assert [c.outcome for c in llm_server.calls] == [kind, "ok"]


@pytest.mark.parametrize("model", MODELS)
def test_429_waits_for_retry_after(client: LLMClient, llm_server: LLMServer, model: str) -> None:
    llm_server.script(Fault("429", retry_after=1), Reply("after the wait"))
    started = time.monotonic()
    reply = client.complete(model, MSGS)
    waited = time.monotonic() - started
    assert reply.text == "after the wait"
    assert llm_server.count() == 2
    assert waited >= 1.0  # backoff alone would have waited 0.01 s


def test_retries_give_up_with_a_clear_error(client: LLMClient, llm_server: LLMServer) -> None:
    llm_server.script(*[Fault("500")] * 4)
    with pytest.raises(ModelError, match=r"gpt-4o: HTTP 500 after 4 attempts"):
        client.complete("gpt-4o", MSGS)
    assert llm_server.count() == 4  # max_retries=3: one attempt plus three retries


def test_client_errors_are_not_retried(client: LLMClient, llm_server: LLMServer) -> None:
    llm_server.script(Fault("400"))
    with pytest.raises(ModelError, match=r"HTTP 400 \(not retryable\)"):
        client.complete("gpt-4o", MSGS)
    assert llm_server.count() == 1


def test_the_cache_replays_without_http_and_never_stores_the_key(
    llm_server: LLMServer, tmp_path: Path, keys: str
) -> None:
    path = tmp_path / "cache" / "llm.sqlite"
    first = LLMClient(fast_settings(llm_server, path))
    a = first.complete("gpt-4o-mini", MSGS)
    b = first.complete("sonnet-4.5", MSGS)
    assert llm_server.count() == 2
    # A new process (new client, same file) replays both: no HTTP call.
    second = LLMClient(fast_settings(llm_server, path))
    a2, b2 = second.complete("gpt-4o-mini", MSGS), second.complete("sonnet-4.5", MSGS)
    assert llm_server.count() == 2
    assert (a2.text, a2.cached, a2.attempts, a2.input_tokens, a2.cost_usd) == (
        a.text,
        True,
        0,
        a.input_tokens,
        a.cost_usd,
    )
    assert b2.cached and b2.text == b.text
    assert second.usage.as_dict()["cachedCalls"] == 2
    # Different parameters or prompt are different entries.
    second.complete("gpt-4o-mini", MSGS, temperature=0.7)
    second.complete("gpt-4o-mini", [*MSGS, {"role": "user", "content": "more"}])
    second.complete("gpt-4o-mini", MSGS, use_cache=False)
    assert llm_server.count() == 5
    for file in path.parent.iterdir():
        assert SECRET.encode() not in file.read_bytes()


def test_failed_calls_are_not_cached(client: LLMClient, llm_server: LLMServer) -> None:
    llm_server.script(Fault("400"))
    with pytest.raises(ModelError):
        client.complete("gpt-4o", MSGS)
    assert client.complete("gpt-4o", MSGS).cached is False
    assert client.cache is not None and len(client.cache) == 1


def test_a_missing_key_names_the_variable(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    c = LLMClient(fast_settings(llm_server, None))
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY is not set"):
        c.complete("haiku-4.5", MSGS)
    assert llm_server.count() == 0


def test_local_models_need_no_key_and_cost_nothing(
    llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("BENCH_NB_LOCAL_BASE_URL", llm_server.openai_base_url)
    c = LLMClient(fast_settings(llm_server, None))
    reply = c.complete("local:llama3.1-8b", MSGS)
    assert reply.cost_usd == 0.0
    assert llm_server.calls[-1].body["model"] == "llama3.1-8b"


def test_prices_can_be_overridden(client: LLMClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_nb.models import prices

    monkeypatch.setattr(prices, "_overrides", {})  # set_price's overrides go with the test
    file = tmp_path / "prices.json"
    file.write_text(json.dumps({"gpt-4.1-nano": {"input": 1, "output": 2}}))
    monkeypatch.setenv("BENCH_NB_PRICES", str(file))
    reply = client.complete("gpt-4.1-nano", MSGS)
    assert reply.cost_usd == pytest.approx((reply.input_tokens * 1.0 + reply.output_tokens * 2.0) / 1e6)
    set_price("gpt-4.1-nano", 10.0, 20.0)  # wins over the file
    again = client.complete("gpt-4.1-nano", MSGS)  # cached, but priced with today's table
    assert again.cached and again.cost_usd == pytest.approx(reply.cost_usd * 10)
    file.write_text(json.dumps({"gpt-4o": {"input": "cheap"}}))  # another size: read again
    with pytest.raises(ModelError, match="entry 'gpt-4o'"):
        prices.price_for(resolve_model("gpt-4o"))


def test_anthropic_tokens_come_from_count_tokens_when_a_key_is_set(
    client: LLMClient, llm_server: LLMServer
) -> None:
    text = "How long has Melanie been practicing art?"
    c = count_tokens(text, "sonnet-4.5", client=client)
    assert (c.n, c.tokenizer, c.exact) == (fake_token_count(text), "anthropic:count_tokens", True)
    assert llm_server.count("/v1/messages/count_tokens") == 1
    assert count_tokens(text, "sonnet-4.5", client=client).n == c.n
    assert llm_server.count() == 1  # cached


def test_the_extractive_answerer_counts_claude_tokens_through_one_client(
    llm_server: LLMServer, keys: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each answer's token fields are two counts (the prompt with and without its hits) by Anthropic's API: the
    # answerer asks through one client of its own, one connection for all, not a new client for each count.
    from bench_nb.models.extractive import ExtractiveAnswerer
    from bench_nb.records import Question, SearchHit

    monkeypatch.setenv("ANTHROPIC_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    answerer = ExtractiveAnswerer(token_model="sonnet-4.5")
    hits = [SearchHit(text="Melanie painted a sunrise in 2022.")]
    for i in range(3):
        text = f"When did Melanie paint sunrise number {i}?"
        question = Question(f"q{i}", text, "2022", "temporal", "temporal", "h")
        answer = answerer.answer(question, hits)
        assert answer.tokenizer == "anthropic:count_tokens"
    counts = [c for c in llm_server.calls if c.path.endswith("/count_tokens")]
    assert len(counts) == 6
    assert len({c.port for c in counts}) == 1


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", "off")
    monkeypatch.setenv("BENCH_NB_LLM_TIMEOUT", "7.5")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    s = ClientSettings.from_env()
    assert (s.cache_path, s.timeout_s, s.openai_base_url) == (None, 7.5, "http://127.0.0.1:1/v1")
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", str(tmp_path / "x.sqlite"))
    assert ClientSettings.from_env().cache_path == tmp_path / "x.sqlite"
    monkeypatch.setenv("BENCH_NB_LLM_MAX_RETRIES", "many")
    with pytest.raises(ModelError, match="BENCH_NB_LLM_MAX_RETRIES"):
        ClientSettings.from_env()


def test_set_default_client_is_gone_and_says_what_to_do_instead() -> None:
    """There is no process-wide client (a run makes its own): the old setter names the new spelling."""
    from bench_nb.models.client import set_default_client

    with pytest.raises(TypeError, match=r"make_llm_answerer\(model, client=LLMClient"):
        set_default_client(LLMClient())
