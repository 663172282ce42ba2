"""LLM judges against the local API server: rubric by type, JSON verdicts, unscored replies, cache."""

from __future__ import annotations

import json

import pytest

from bench_nb.errors import JudgeError
from bench_nb.judges.llm import FORMAT_REMINDER, LLMJudge, make_llm_judge, parse_verdict
from bench_nb.judges.prompts import RUBRICS, prompt_hashes, prompt_set_hash, rubric_for
from bench_nb.judges.registry import get_judge
from bench_nb.models.client import LLMClient
from bench_nb.models.settings import ClientSettings
from bench_nb.records import Question
from llm_server import Fault, LLMServer, Reply

CORRECT = json.dumps({"score": 1, "label": "correct", "explanation": "same date"})


def q(norm: str, qid: str = "q1", answer: str = "7 May 2023", raw: str = "x") -> Question:
    return Question(
        qid, "When did Caroline go to the support group?", answer, raw, norm, "h", question_date="2023-06-01"
    )


@pytest.mark.parametrize(
    ("norm", "qid", "rubric", "needle"),
    [
        ("temporal", "q1", "temporal", "off-by-one"),
        ("knowledge-update", "q1", "knowledge-update", "most recent value"),
        ("preference", "q1", "preference", "Rubric for a good personalised response"),
        ("abstention", "q1", "abstention", "declines to answer"),
        ("single-hop", "lme_1_abs", "abstention", "declines to answer"),
        ("multi-hop", "q1", "default", "every item of the reference"),
        ("other", "q1", "default", "only part of the required information"),
    ],
)
def test_the_rubric_follows_the_normalised_type(
    client: LLMClient, llm_server: LLMServer, norm: str, qid: str, rubric: str, needle: str
) -> None:
    question = q(norm, qid)
    assert rubric_for(question) == rubric
    llm_server.script(Reply(CORRECT))
    verdict = LLMJudge("gpt-4o", client=client).judge(question, "On 7 May 2023.")
    assert (verdict.score, verdict.label, verdict.judge) == (1, "correct", "gpt-4o")
    body = llm_server.calls[-1].body
    text = body["messages"][0]["content"] + body["messages"][1]["content"]
    assert needle in text
    assert RUBRICS[rubric] in body["messages"][0]["content"]
    assert "Response to grade:\nOn 7 May 2023." in body["messages"][1]["content"]
    assert body["response_format"] == {"type": "json_object"}


def test_claude_judges_through_messages(client: LLMClient, llm_server: LLMServer) -> None:
    llm_server.script(
        Reply("```json\n" + json.dumps({"score": 0, "label": "incorrect", "explanation": "no"}) + "\n```")
    )
    v = LLMJudge("sonnet-4.5", client=client).judge(q("temporal"), "June")
    assert (v.score, v.label, v.explanation) == (0, "incorrect", "no")
    assert llm_server.calls[-1].path == "/v1/messages"
    assert "off-by-one" in llm_server.calls[-1].body["system"]


def test_an_unreadable_reply_is_asked_again_then_unscored(
    client: LLMClient, llm_server: LLMServer, client_settings: ClientSettings
) -> None:
    llm_server.script(Reply("Yes, correct."), Reply('{"score": 1, "label": "incorrect"}'), Reply("{not json"))
    judge = LLMJudge("gpt-4o", client=client)
    graded = judge.grade(q("single-hop"), "7 May")
    v = graded.verdict
    assert (v.score, v.label) == (None, "unscored")
    assert "unparseable judge reply after 3 attempts" in v.explanation and "{not json" in v.explanation
    assert len(graded.completions) == 3 == llm_server.count()
    last = llm_server.calls[-1].body["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert last[-1]["content"] == FORMAT_REMINDER and last[2]["content"] == "Yes, correct."
    # Re-judging replays the same sequence from the cache: the same verdict, no HTTP call.
    again = LLMJudge("gpt-4o", client=LLMClient(client_settings))
    assert again.judge(q("single-hop"), "7 May") == v
    assert llm_server.count() == 3


def test_a_second_attempt_can_rescue_the_verdict(client: LLMClient, llm_server: LLMServer) -> None:
    llm_server.script(Reply("I think it is correct"), Reply(CORRECT))
    v = LLMJudge("gpt-4o-mini", client=client).judge(q("temporal"), "7 May 2023")
    assert (v.score, v.label, v.explanation) == (1, "correct", "same date")
    assert llm_server.count() == 2


def test_http_failures_after_retries_are_judge_errors_not_verdicts(
    client: LLMClient, llm_server: LLMServer
) -> None:
    llm_server.script(*[Fault("500")] * 3)
    with pytest.raises(JudgeError, match=r"judge gpt-4o, question q9: gpt-4o: HTTP 500 after 3 attempts"):
        LLMJudge("gpt-4o", client=client).judge(q("temporal", "q9"), "x")


def test_faults_are_survived(client: LLMClient, llm_server: LLMServer) -> None:
    llm_server.script(Fault("429", retry_after=0.1), Fault("truncated"), Reply(CORRECT))
    assert LLMJudge("gpt-4o", client=client).judge(q("temporal"), "x").label == "correct"
    assert [c.outcome for c in llm_server.calls] == ["429", "truncated", "ok"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"score": 1, "label": "correct", "explanation": "ok"}', (1, "correct", "ok")),
        (
            'Sure! {"score": 0, "label": "INCORRECT", "explanation": "wrong"} Hope that helps.',
            (0, "incorrect", "wrong"),
        ),
        ('```json\n{"score": "1", "explanation": "e"}\n```', (1, "correct", "e")),
        ('{"label": "incorrect"}', (0, "incorrect", "")),
        ('{"score": true, "label": "correct", "explanation": "t"}', (1, "correct", "t")),
        ('{"score": 1, "label": "incorrect"}', None),
        ('{"score": 0.5, "label": "partial"}', None),
        ('{"score": 2, "label": "correct"}', None),  # a score must be 0 or 1, whatever the label says
        ('{"score": 0.5, "label": "correct"}', None),
        ('{"score": null, "label": "correct"}', None),
        ('{"score": "yes", "label": "correct"}', None),
        ('{"score": -1, "label": "incorrect"}', None),
        ('{"explanation": "no grade"}', None),
        ("[1, 0]", None),
        ("correct", None),
        ("", None),
    ],
)
def test_parse_verdict(reply: str, expected: tuple[int, str, str] | None) -> None:
    assert parse_verdict(reply) == expected


def test_a_reply_with_an_out_of_range_score_is_unscored(client: LLMClient, llm_server: LLMServer) -> None:
    bad = '{"score": 2, "label": "correct", "explanation": "very correct"}'
    llm_server.script(*[Reply(bad)] * 5)
    verdict = LLMJudge("gpt-4o", client=client).judge(q("temporal"), "x")
    assert (verdict.score, verdict.label) == (None, "unscored")


def test_a_custom_judge_prompt_needs_permission(client: LLMClient, llm_server: LLMServer) -> None:
    lenient = "Is '{hypothesis}' roughly like '{answer}' for '{question}'? Be generous."
    denied = LLMJudge("gpt-4o", client=client, prompt=lenient)
    assert (denied.custom_prompt, denied.prompt_hash) == (False, prompt_set_hash())
    allowed = LLMJudge("gpt-4o", client=client, prompt=lenient, allow_custom_prompt=True)
    allowed.judge(q("temporal"), "May")
    (message,) = llm_server.calls[-1].body["messages"]
    assert message["content"].startswith("Is 'May' roughly like '7 May 2023' for 'When did Caroline")
    assert '"score": 1' in message["content"]  # the verdict format is still asked for
    assert allowed.custom_prompt is True and allowed.prompt_hash != prompt_set_hash()


def test_prompt_hashes_are_stable_and_distinct() -> None:
    hashes = prompt_hashes()
    assert set(hashes) == set(RUBRICS)
    assert len(set(hashes.values())) == len(hashes)
    assert prompt_hashes() == hashes


def test_registry_and_factory(client: LLMClient) -> None:
    judge = get_judge("gpt-4o", client=client)
    assert isinstance(judge, LLMJudge) and judge.name == "gpt-4o" and judge.prompt_hash == prompt_set_hash()
    with pytest.raises(JudgeError, match="unknown option"):
        make_llm_judge("gpt-4o", strictness=3)
    with pytest.raises(JudgeError, match="unknown judge 'not-a-model'"):
        get_judge("not-a-model")
