"""LongMemEval-V2's scoring rules, each on hand-written cases worked out from the official definitions
(evaluation/qa_eval_metrics.py and evaluation/harness.py of xiaowu0162/LongMemEval-V2)."""

from __future__ import annotations

import json

import pytest

from bench_nb.judges.lmev2 import (
    ABSTENTION_SYSTEM,
    GOTCHAS_SYSTEM,
    LmeV2Judge,
    choice_letters,
    extract_boxed_answer,
    is_unknown,
    make_lmev2_judge,
    mc_choice_match,
    mc_choice_set_match,
    normalize_phrase,
    parse_eval_function,
    parse_label,
    phrase_set_match,
    score_deterministic,
    split_phrases,
)
from bench_nb.judges.registry import get_judge
from bench_nb.models.client import LLMClient
from bench_nb.records import Question
from llm_server import LLMServer, Reply


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        ("Top-Right  corner!", {}, "top right corner"),
        ("sales_order, grid; view", {}, "sales order grid view"),  # , and ; become spaces, _ a space
        ("Don't click 'Save'.", {}, "dont click save"),
        ("Top-Right", {"lower": False}, "Top Right"),
        ("top-right", {"normalize_hyphen": False}, "topright"),  # the hyphen is then punctuation, removed
        ("a.b", {"strip_punct": False}, "a.b"),
        ("Café — déjà vu", {}, "café déjà vu"),  # \w is Unicode: accented letters stay
        (None, {}, ""),
        (42, {}, "42"),
    ],
)
def test_normalize_phrase(text: object, kwargs: dict, expected: str) -> None:
    assert normalize_phrase(text, **kwargs) == expected


def test_split_phrases_on_separators_dropping_empty_parts() -> None:
    assert split_phrases("Pending; Processing,, Complete") == ["pending", "processing", "complete"]
    assert split_phrases("a, b", separators=[";"]) == ["a b"]  # the comma still normalises to a space
    assert split_phrases("a, b", separators=[]) == ["a b"]
    assert split_phrases(None) == []


def test_unordered_phrase_set_needs_every_phrase_on_word_boundaries() -> None:
    assert phrase_set_match("It is at the TOP-RIGHT of the grid", "top right, grid")
    assert not phrase_set_match("It is at the top right", "top right, grid")  # grid missing
    assert not phrase_set_match("the gridlock", "grid")  # not on a word boundary
    assert phrase_set_match("grid then top right", "top right; grid")  # order does not matter
    assert not phrase_set_match("", "grid")
    assert not phrase_set_match("grid", "  ;, ")  # no phrase in the answer: incorrect
    assert phrase_set_match("", ";", require_non_empty=False)  # nothing required, nothing missing


def test_ordered_phrase_set_needs_each_phrase_after_the_previous_match() -> None:
    gold = "Pending; Processing; Complete"
    assert phrase_set_match("pending -> processing -> complete", gold, ordered=True)
    assert not phrase_set_match("processing, pending, complete", gold, ordered=True)
    assert phrase_set_match("processing, pending, complete", gold, ordered=False)
    # A repeated phrase must occur twice, in order.
    assert not phrase_set_match("open then closed", "open; closed; open", ordered=True)
    assert phrase_set_match("open, closed, open again", "open; closed; open", ordered=True)


def test_single_choice_letter_extraction() -> None:
    assert mc_choice_match("B", "b")
    assert mc_choice_match("Option B.", "B")  # "option" and the full stop removed
    assert mc_choice_match("choice c", "C")
    assert mc_choice_match("The answer: \\boxed{b}", "B")  # a boxed letter inside the prediction wins
    assert not mc_choice_match("B or C", "B")
    assert not mc_choice_match("B)", "B")  # only "." is stripped by default
    assert mc_choice_match("B)", "B", strip_chars=".)")
    assert not mc_choice_match("", "")
    assert not mc_choice_match(None, "B")


def test_multi_choice_letter_sets() -> None:
    assert choice_letters("Options A and C") == ["A", "C"]
    assert choice_letters("AC") == ["A", "C"]  # a run of letters is split into letters
    assert mc_choice_set_match("C, A", "A, C")
    assert mc_choice_set_match("Final answer: options A and C", "AC")
    assert mc_choice_set_match("A, A, C", "A C")  # a set: repeats do not matter
    assert not mc_choice_set_match("A", "A, C")
    assert not mc_choice_set_match("I don't know", "A, C")  # its letters are I, D, O, N, T, K, W
    assert not mc_choice_set_match("", "A")


def test_boxed_answer_extraction() -> None:
    assert extract_boxed_answer("so \\boxed{A} ... finally \\boxed{B, C}") == "B, C"  # the last one
    assert extract_boxed_answer("\\boxed{\\text{top} {right}}") == "\\text{top} {right}"  # nested braces kept
    assert extract_boxed_answer("  plain answer  ") == "plain answer"
    assert extract_boxed_answer("x \\boxed{  }") == "x \\boxed{  }"  # empty box: the whole text
    assert extract_boxed_answer("\\boxed{unclosed") == "unclosed"


def test_unknown() -> None:
    assert is_unknown(" Unknown ")
    assert not is_unknown("unknown button")


def test_spec_parsing() -> None:
    assert parse_eval_function("norm_phrase_set_match") == ("norm_phrase_set_match", {})
    assert parse_eval_function("norm_phrase_set_match | separators=;| lower=false") == (
        "norm_phrase_set_match",
        {"separators": [";"], "lower": False},
    )
    assert parse_eval_function('norm_phrase_set_match|separators=[" or "]')[1] == {"separators": [" or "]}
    assert parse_eval_function("mc_choice_match|strip_chars=.)")[1] == {"strip_chars": ".)"}
    assert parse_eval_function("mc_choice_match|require_non_empty=none")[1] == {"require_non_empty": None}
    for bad in ("nope", "mc_choice_match|x", "mc_choice_match|a=1|a=2", ""):
        with pytest.raises(ValueError):
            parse_eval_function(bad)


def test_score_extracts_the_boxed_answer_and_unknown_is_always_wrong() -> None:
    assert score_deterministic("norm_phrase_set_match", "I think \\boxed{Top right}", "top right")
    assert not score_deterministic("norm_phrase_set_match", "top right, \\boxed{bottom}", "top right")
    assert not score_deterministic("norm_phrase_set_match", "\\boxed{UNKNOWN}", "unknown")
    assert score_deterministic("mc_choice_set_match", "\\boxed{A, C}", "A, C")
    assert score_deterministic("norm_phrase_set_match|separators=;", "a b then c", "a, b; c")
    with pytest.raises(ValueError, match="model"):
        score_deterministic("llm_gotchas_checker", "x", "y")


def _q(spec: str | None, answer: str = "top right", qtype: str = "static-environment") -> Question:
    extra = {} if spec is None else {"eval_function": spec}
    return Question("q1", "Where?", answer, qtype, "other", "h1", extra=extra)


def test_the_offline_judge_applies_each_questions_rule() -> None:
    judge = get_judge("lme-v2")
    assert judge.name == "lme-v2"
    ok = judge.judge(_q("norm_phrase_set_match"), "\\boxed{top right}")
    assert (ok.score, ok.label) == (1, "correct")
    bad = judge.judge(_q("norm_phrase_set_match"), "\\boxed{bottom left}")
    assert (bad.score, bad.label) == (0, "incorrect")
    unknown = judge.judge(_q("llm_gotchas_checker"), "\\boxed{UNKNOWN}")
    assert (unknown.score, unknown.label) == (0, "incorrect")  # UNKNOWN is wrong under every rule
    for spec in ("llm_gotchas_checker", "llm_abstention_checker"):
        v = judge.judge(_q(spec, "the premise is wrong", "static-environment-abs"), "It cannot be deleted")
        assert (v.score, v.label) == (None, "unscored")  # offline: never incorrect
        assert "lme-v2:<model alias>" in v.explanation
    for spec in (None, "made_up_rule"):
        assert judge.judge(_q(spec), "top right").label == "unscored"


def test_judge_labels_are_read_like_the_official_parser() -> None:
    assert parse_label('{"label": 1, "reason": "names the flaw"}') == (1, "names the flaw")
    assert parse_label('```json\n{"label": "0", "reason": "follows the premise"}\n```') == (
        0,
        "follows the premise",
    )
    assert parse_label("Verdict: label = 1")[0] == 1  # type: ignore[index]
    assert parse_label("{'label': 0}")[0] == 0  # type: ignore[index]
    assert parse_label('{"label": 2}') is None
    assert parse_label("correct") is None


def test_options_are_checked() -> None:
    from bench_nb.errors import JudgeError

    with pytest.raises(JudgeError, match="unknown option"):
        make_lmev2_judge(None, temperature=0.0)


# The LLM-judged rules, against the local fake OpenAI server (real HTTP on 127.0.0.1).


def test_the_abstention_rule_asks_the_model_with_the_official_prompt(
    client: LLMClient, llm_server: LLMServer
) -> None:
    judge = get_judge("lme-v2:gpt-4o-mini", client=client)
    assert isinstance(judge, LmeV2Judge) and judge.name == "lme-v2:gpt-4o-mini"
    llm_server.script(Reply(json.dumps({"label": 1, "reason": "names the flaw"})))
    q = _q("llm_abstention_checker", "Audit logs cannot be deleted.", "static-environment-abs")
    v = judge.judge(q, "There is no such button: \\boxed{audit logs cannot be deleted}")
    assert (v.score, v.label) == (1, "correct") and "names the flaw" in v.explanation
    (call,) = llm_server.calls
    system, user = call.body["messages"]
    assert system["content"] == ABSTENTION_SYSTEM
    assert system["content"].startswith("You are a strict grader for flawed-premise (abstention) questions.")
    text = user["content"]
    assert "Question:\nWhere?\n\n" in text
    assert "Reference answer (the expected flaw-aware conclusion):\nAudit logs cannot be deleted.\n\n" in text
    assert "Model full response:\nThere is no such button: \\boxed{audit logs cannot be deleted}\n\n" in text
    assert "Model extracted final answer:\naudit logs cannot be deleted\n\n" in text
    assert text.endswith('Output JSON only:\n{"label": 0 or 1, "reason": "short rationale"}')


def test_the_gotchas_rule_retries_an_unreadable_reply_then_is_unscored(
    client: LLMClient, llm_server: LLMServer
) -> None:
    judge = LmeV2Judge("gpt-4o-mini", client=client, max_parse_attempts=2)
    llm_server.script(Reply("I think it is fine"), Reply("label: 0 because it contradicts"))
    q = _q("llm_gotchas_checker", "The Submit link is hidden.", "errors-gotchas")
    v = judge.judge(q, "Click Submit twice.")
    assert (v.score, v.label) == (0, "incorrect")  # the second reply, read like the official parser
    assert llm_server.calls[0].body["messages"][0]["content"] == GOTCHAS_SYSTEM
    assert len(llm_server.calls[1].body["messages"]) == 4  # the bad reply and a reminder were added
    llm_server.script(Reply("no label"), Reply("still none"))
    again = judge.judge(q, "Something else entirely.")
    assert (again.score, again.label) == (None, "unscored")  # never incorrect for an unreadable judge
    # UNKNOWN and deterministic rules never call the model.
    before = len(llm_server.calls)
    assert judge.judge(q, "\\boxed{UNKNOWN}").label == "incorrect"
    assert judge.judge(_q("mc_choice_match", "B"), "\\boxed{B}").label == "correct"
    assert len(llm_server.calls) == before
