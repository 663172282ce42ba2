"""The LLM answerer against the local API server: prompt, token fields, cost, faults, cache, custom prompts."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from llm_settings import fast_settings

from bench_nb.errors import ModelError
from bench_nb.models.answerers import get_answerer
from bench_nb.models.client import LLMClient
from bench_nb.models.llm import LLMAnswerer, make_llm_answerer, provider_prompts
from bench_nb.models.prices import DEFAULT_PRICES
from bench_nb.models.prompt import answer_prompt_hash, build_answer_prompt, prompt_tokens
from bench_nb.records import Question, SearchHit
from llm_server import Fault, LLMServer, Reply, fake_token_count


def question(i: int) -> Question:
    return Question(
        question_id=f"q{i}",
        question=f"What did person {i} adopt?",
        answer=f"dog {i}",
        question_type="single-hop",
        norm_type="single-hop",
        haystack_id="h",
        question_date="2023-06-01",
    )


HITS = [SearchHit(text="Person adopted a dog named Rex.", session_id="s2", date="2023-04-02")]


def test_answer_records_prompt_tokens_billed_tokens_and_cost(
    client: LLMClient, llm_server: LLMServer
) -> None:
    llm_server.script(Reply("  A dog named Rex.  "))
    answerer = LLMAnswerer("gpt-4o-mini", client=client)
    a = answerer.answer(question(1), HITS)
    expected = prompt_tokens(question(1), HITS, "gpt-4o-mini")
    assert a.hypothesis == "A dog named Rex."
    assert (a.prompt_tokens, a.base_prompt_tokens, a.context_tokens) == (
        expected.prompt_tokens,
        expected.base_prompt_tokens,
        expected.context_tokens,
    )
    assert a.context_tokens > 0
    assert (a.tokenizer, a.model) == ("tiktoken:o200k_base", "gpt-4o-mini")
    sent = llm_server.calls[0].body["messages"]
    assert sent == [{"role": "user", "content": build_answer_prompt(question(1), HITS)}]
    assert a.input_tokens == fake_token_count(sent[0]["content"])
    assert a.output_tokens == 4
    price = DEFAULT_PRICES["gpt-4o-mini"]
    assert a.cost_usd == pytest.approx(
        (a.input_tokens * price.input_per_mtok + 4 * price.output_per_mtok) / 1e6
    )
    assert answerer.usage.as_dict()["calls"] == 1
    assert answerer.prompt_hash == answer_prompt_hash()
    assert answerer.custom_prompt is False


def test_every_fault_is_survived_without_losing_a_question(
    llm_server: LLMServer, tmp_path: Path, keys: str
) -> None:
    cache = tmp_path / "llm.sqlite"
    answerer = LLMAnswerer("gpt-4o-mini", client=LLMClient(fast_settings(llm_server, cache)))
    llm_server.script(
        Fault("429", retry_after=0.2),
        Fault("500"),
        Fault("slow", delay=2.5),
        Fault("malformed"),
        Fault("truncated"),
    )
    questions = [question(i) for i in range(12)]
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda q: answerer.answer(q, HITS), questions))
    assert [a.hypothesis for a in answers] == ["scripted answer"] * 12
    outcomes = [c.outcome for c in llm_server.calls]
    assert sorted(o for o in outcomes if o != "ok") == ["429", "500", "malformed", "slow", "truncated"]
    assert outcomes.count("ok") == 12
    # A rerun from the cache makes no HTTP call and gives the same answers.
    again = LLMAnswerer("gpt-4o-mini", client=LLMClient(fast_settings(llm_server, cache)))
    before = llm_server.count()
    assert [again.answer(q, HITS) for q in questions] == answers
    assert llm_server.count() == before
    assert again.usage.as_dict()["cachedCalls"] == 12


def test_claude_answers_count_tokens_with_the_api(client: LLMClient, llm_server: LLMServer) -> None:
    a = LLMAnswerer("haiku-4.5", client=client).answer(question(2), HITS)
    assert a.tokenizer == "anthropic:count_tokens"
    assert a.prompt_tokens == fake_token_count(build_answer_prompt(question(2), HITS))
    assert a.base_prompt_tokens == fake_token_count(build_answer_prompt(question(2), []))
    assert llm_server.count("/count_tokens") == 2
    assert llm_server.count("/v1/messages") == 1


def test_a_failed_answer_names_the_question(client: LLMClient, llm_server: LLMServer) -> None:
    llm_server.script(*[Fault("500")] * 4)
    with pytest.raises(ModelError, match=r"answerer gpt-4o, question q7: gpt-4o: HTTP 500 after 4 attempts"):
        LLMAnswerer("gpt-4o", client=client).answer(question(7), HITS)


def test_a_custom_prompt_needs_permission(client: LLMClient, llm_server: LLMServer) -> None:
    template = "Facts:\n{context}\nQ ({question_date}): {question}\nA:"
    denied = LLMAnswerer("gpt-4o", client=client, prompt=template)
    denied.answer(question(3), HITS)
    assert llm_server.calls[-1].body["messages"][0]["content"] == build_answer_prompt(question(3), HITS)
    assert (denied.custom_prompt, denied.prompt_hash) == (False, answer_prompt_hash())
    allowed = LLMAnswerer("gpt-4o", client=client, prompt=template, allow_custom_prompt=True)
    a = allowed.answer(question(3), HITS)
    sent = llm_server.calls[-1].body["messages"][0]["content"]
    assert sent.startswith(
        "Facts:\n[1] (2023-04-02, session s2)\nPerson adopted a dog named Rex.\nQ (2023-06-01)"
    )
    assert allowed.custom_prompt is True
    assert allowed.prompt_hash == answer_prompt_hash(template) != answer_prompt_hash()
    assert a.context_tokens == a.prompt_tokens - a.base_prompt_tokens > 0

    class Provider:
        name = "zep-like"
        answer_prompt = template

    assert provider_prompts(Provider()) == {"answer": template}
    assert provider_prompts(object()) == {}


def test_factory_and_registry(client: LLMClient) -> None:
    answerer = get_answerer("gpt-4o-mini", client=client)
    assert isinstance(answerer, LLMAnswerer) and answerer.name == "gpt-4o-mini"
    with pytest.raises(ModelError, match="unknown option"):
        make_llm_answerer("gpt-4o", colour="blue")
    with pytest.raises(ModelError, match="unknown model 'gpt4o'"):
        make_llm_answerer("gpt4o")
