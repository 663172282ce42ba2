"""BEAM's scoring rules on hand-made cases: rubric means, the 0.5 truncation, tau-b against scipy, alignment,
the offline rubric judge, and the LLM rubric judge against the local API server."""

from __future__ import annotations

import itertools
import json

import pytest
from scipy.stats import kendalltau

from bench_nb.judges.beam import (
    LLMRubricJudge,
    RubricJudge,
    answer_items,
    grade_item_offline,
    ordering_score,
    parse_item_grade,
    parse_positions,
    rubric_score,
)
from bench_nb.judges.registry import get_judge
from bench_nb.models.client import LLMClient
from bench_nb.records import Question, Verdict
from llm_server import LLMServer, Reply


def beam_q(ability: str, rubric: list[str], norm: str = "single-hop") -> Question:
    return Question(
        f"100K-1-{ability}-0", "What did I say?", "ideal", ability, norm, "100K-1", extra={"rubric": rubric}
    )


def test_a_question_scores_the_mean_of_its_items() -> None:
    assert rubric_score([1, 0.5, 0]) == pytest.approx(0.5)
    assert rubric_score([0.5, 0.5]) == 0.5
    assert rubric_score([1]) == 1.0


def test_as_published_truncates_each_half_to_zero() -> None:
    assert rubric_score([1, 0.5, 0], "as-published") == pytest.approx(1 / 3)
    assert rubric_score([0.5, 0.5], "as-published") == 0.0
    assert rubric_score([1, 1, 0.5, 0], "as-published") == 0.5


def test_grades_other_than_0_half_1_are_refused() -> None:
    with pytest.raises(ValueError, match=r"0, 0\.5 or 1, not 0\.7"):
        rubric_score([1, 0.7])
    with pytest.raises(ValueError, match="at least one item"):
        rubric_score([])


def test_ordering_score_normalises_tau_b_and_ties_the_missing_events() -> None:
    assert ordering_score([0, 1, 2]) == 1.0
    assert ordering_score([2, 1, 0]) == 0.0
    assert ordering_score([None, None, None]) == 0.0
    # The second event is missing: it takes the rank after the last item, tied with nothing else here.
    tau = kendalltau([0, 1, 2], [0, 2, 1], variant="b").statistic
    assert ordering_score([0, None, 1]) == pytest.approx((tau + 1) / 2)
    # Two missing events share a rank: a tie.
    tau = kendalltau([0, 1, 2, 3], [1, 0, 2, 2], variant="b").statistic
    assert ordering_score([1, 0, None, None]) == pytest.approx((tau + 1) / 2)
    assert ordering_score([4]) == 1.0 and ordering_score([0, 0, 0]) == 0.0  # one rank for all: undefined


def test_answers_split_into_their_items() -> None:
    assert answer_items("First:\n1. Flask setup\n2. login form\n3) staging") == [
        "Flask setup",
        "login form",
        "staging",
    ]
    assert answer_items("- a\n- b") == ["a", "b"]
    assert answer_items("In order: 1) setup, 2) login, 3) deploy.") == ["setup", "login", "deploy."]
    assert answer_items("I set it up. Then I deployed!") == ["I set it up.", "Then I deployed!"]
    assert answer_items("") == []


def test_the_offline_judge_grades_items_by_word_overlap() -> None:
    crit = "LLM response should state: the sprint ends on March 29"
    assert grade_item_offline(crit, "Your first sprint ends on March 29.") == 1.0
    assert grade_item_offline(crit, "It ends in March.") == 0.5  # sprint? no; ends, march: 2 of 4 words
    assert grade_item_offline(crit, "No idea.") == 0.0
    abst = "Based on the provided chat, there is no information related to the launch feedback"
    assert grade_item_offline(abst, "I don't know.", abstention=True) == 1.0
    judge = RubricJudge()
    v = judge.judge(beam_q("information_extraction", [crit, "LLM response should state: 250ms"]), "March 29.")
    assert isinstance(v, Verdict) and v.items == (0.5, 0.0) and v.score == 0.25 and v.published_score == 0.0
    assert (v.label, v.judge, v.graded) == ("incorrect", "rubric", True)


def test_the_offline_judge_scores_event_order() -> None:
    rubric = ["Core functionality setup", "Transaction error handling", "Security and deployment"]
    q = beam_q("event_ordering", rubric, "event-ordering")
    judge = get_judge("rubric")
    right = judge.judge(
        q, "1. core functionality setup\n2. transaction error handling\n3. security and deployment"
    )
    wrong = judge.judge(
        q, "1. security and deployment\n2. transaction error handling\n3. core functionality setup"
    )
    assert (right.score, right.published_score, right.label) == (1.0, 1.0, "correct")
    assert wrong.score == 0.0 and "3 of 3 events found" in wrong.explanation
    none = judge.judge(q, "I don't know.")
    assert none.score == 0.0 and "0 of 3 events found" in none.explanation
    assert judge.judge(Question("x", "q", "a", "t", "other", "h"), "a").label == "unscored"


def test_item_replies_must_be_0_half_or_1() -> None:
    assert parse_item_grade('{"score": 0.5, "reason": "partly"}') == (0.5, "partly")
    assert parse_item_grade('```json\n{"score": "1", "reason": "ok"}\n```') == (1.0, "ok")
    assert parse_item_grade('{"score": 0.7}') is None
    assert parse_item_grade('{"score": true}') is None
    assert parse_item_grade("fine") is None
    assert parse_positions('{"positions": [2, null, 1]}', 3, 2) == [1, None, 0]
    assert parse_positions('{"positions": [3]}', 1, 2) is None
    assert parse_positions('{"positions": [1, 2]}', 3, 2) is None


def test_the_llm_judge_grades_each_item_with_its_own_call(client: LLMClient, llm_server: LLMServer) -> None:
    judge = get_judge("rubric:gpt-4o-mini", client=client)
    assert isinstance(judge, LLMRubricJudge) and judge.name == "rubric:gpt-4o-mini"
    llm_server.script(
        Reply(json.dumps({"score": 1, "reason": "states it"})),
        Reply("not json"),
        Reply(json.dumps({"score": 0.5, "reason": "vague"})),
        Reply(json.dumps({"score": 0, "reason": "missing"})),
    )
    q = beam_q("knowledge_update", ["state: 250ms", "state: after caching", "state: the old value"])
    v = judge.judge(q, "About 250ms.")
    assert v.items == (1.0, 0.5, 0.0) and v.score == pytest.approx(0.5)
    assert v.published_score == pytest.approx(1 / 3)
    assert "[0.5] vague" in v.explanation
    bodies = [c.body for c in llm_server.calls]
    assert len(bodies) == 4 and "state: after caching" in bodies[2]["messages"][1]["content"]
    assert "What did I say?" in bodies[0]["messages"][1]["content"]  # the question is filled in


def test_the_llm_judge_aligns_events_in_one_call(client: LLMClient, llm_server: LLMServer) -> None:
    judge = LLMRubricJudge("gpt-4o-mini", client=client)
    llm_server.script(Reply(json.dumps({"positions": [2, 1, None]})))
    q = beam_q("event_ordering", ["setup", "login", "deploy"], "event-ordering")
    v = judge.judge(q, "1. the login form\n2. the Flask setup")
    tau = kendalltau([0, 1, 2], [1, 0, 2], variant="b").statistic
    assert v.score == pytest.approx((tau + 1) / 2) and v.published_score == v.score
    assert "2. the Flask setup" in llm_server.calls[0].body["messages"][1]["content"]


def test_an_unreadable_item_leaves_the_question_unscored(client: LLMClient, llm_server: LLMServer) -> None:
    judge = LLMRubricJudge("gpt-4o-mini", client=client, max_parse_attempts=2)
    llm_server.script(Reply(json.dumps({"score": 1, "reason": "ok"})), Reply("?"), Reply('{"score": 2}'))
    v = judge.judge(beam_q("summarization", ["a", "b"]), "text")
    assert v.label == "unscored" and v.score is None and "rubric item 2" in v.explanation


def test_every_pair_of_grades_gives_a_score_in_range() -> None:
    for items in itertools.product((0, 0.5, 1), repeat=3):
        assert 0 <= rubric_score(items, "as-published") <= rubric_score(items) <= 1
