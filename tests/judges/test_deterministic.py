"""The deterministic judges: token F1, containment, abstention."""

from __future__ import annotations

import pytest

from bench_nb.errors import JudgeError
from bench_nb.judges.base import Judge
from bench_nb.judges.deterministic import (
    ContainsJudge,
    F1Judge,
    contains_answer,
    is_abstaining,
    normalize_answer,
    token_f1,
)
from bench_nb.judges.registry import get_judge
from bench_nb.records import Question


def q(answer: str, norm_type: str = "single-hop", qid: str = "q1") -> Question:
    return Question(qid, "What is it?", answer, norm_type, norm_type, "h1")


def test_normalisation_is_squads() -> None:
    assert normalize_answer("The  Black-Krim, tomato!") == "black krim tomato"
    assert normalize_answer("An apple a day") == "apple day"
    assert normalize_answer("I don't know.") == "i dont know"


@pytest.mark.parametrize(
    ("answer", "truth", "expected"),
    [
        ("Pilot", "Pilot", 1.0),
        ("the cat Pilot", "Pilot", 2 * (1 / 2) * 1 / (1 / 2 + 1)),  # tokens: cat, pilot
        ("1 hour 54 minutes", "1 hour 54 minutes", 1.0),
        ("54 minutes and 1 hour", "1 hour 54 minutes", 2 * (4 / 5) * 1 / (4 / 5 + 1)),
        ("Leeds", "Manchester", 0.0),
        ("", "Leeds", 0.0),
    ],
)
def test_token_f1_values(answer: str, truth: str, expected: float) -> None:
    assert token_f1(answer, truth) == pytest.approx(expected)


def test_f1_judge_threshold_and_names() -> None:
    judge = F1Judge()
    assert judge.name == "f1"
    v = judge.judge(q("Canal Striders"), "the Canal Striders club")  # F1 = 2*(2/3)*1/(2/3+1) = 0.8
    assert (v.score, v.label, v.judge) == (1, "correct", "f1")
    assert "0.800 >= threshold 0.5" in v.explanation
    long = judge.judge(q("Pilot"), "I adopted a grey tabby cat called Pilot last week")
    assert (long.score, long.label) == (0, "incorrect")
    strict = F1Judge(threshold=0.9)
    assert strict.name == "f1@0.9" and strict.judge(q("Canal Striders"), "the Canal Striders club").score == 0
    with pytest.raises(ValueError, match="threshold"):
        F1Judge(threshold=0)


def test_contains_judge_phrase_and_tokens() -> None:
    judge = ContainsJudge()
    assert judge.judge(q("Pilot"), "a grey tabby called Pilot.").score == 1
    assert judge.judge(q("7 May 2023"), "It was on May 7, 2023").score == 1  # every token present
    assert judge.judge(q("Pilot"), "a grey tabby called Pilotfish").score == 0  # word boundaries
    assert judge.judge(q("17 minutes"), "1 hour 54 minutes").score == 0
    assert contains_answer("Dr. Halvorsen is kind", "Dr Halvorsen")
    assert not contains_answer("", "x")


@pytest.mark.parametrize("judge", [F1Judge(), ContainsJudge()])
def test_abstention_questions_want_an_abstaining_answer(judge: Judge) -> None:
    unanswerable = q("", "abstention", "conv-1-q9")
    for answer in (
        "I don't know.",
        "The conversations do not mention a dog.",
        "No information about that.",
        "",
    ):
        v = judge.judge(unanswerable, answer)
        assert (v.score, v.label) == (1, "correct"), answer
    v = judge.judge(unanswerable, "Her dog is called Rex.")
    assert (v.score, v.label) == (0, "incorrect") and "does not abstain" in v.explanation
    # LongMemEval's _abs questions carry an explanation as their answer: still graded by abstaining.
    lme = Question(
        "e1_abs", "Q?", "You did not mention this information.", "temporal-reasoning", "abstention", "h"
    )
    assert judge.judge(lme, "I don't know").score == 1


@pytest.mark.parametrize("judge", [F1Judge(), ContainsJudge()])
def test_abstaining_on_an_answerable_question_is_incorrect(judge: Judge) -> None:
    v = judge.judge(q("Leeds"), "I don't know.")
    assert (v.score, v.label) == (0, "incorrect") and "abstains" in v.explanation


@pytest.mark.parametrize("judge", [F1Judge(), ContainsJudge()])
def test_no_ground_truth_is_unscored_not_incorrect(judge: Judge) -> None:
    v = judge.judge(q("  "), "Leeds")
    assert (v.score, v.label) == (None, "unscored")


def test_is_abstaining() -> None:
    assert is_abstaining("I do not know")
    assert is_abstaining("That was not mentioned in our chats.")
    assert is_abstaining("There is not enough information to answer.")
    assert not is_abstaining("She moved to Leeds.")
    assert not is_abstaining("Canal Striders")


def test_registry() -> None:
    assert isinstance(get_judge("f1"), F1Judge) and isinstance(get_judge("contains"), ContainsJudge)
    assert get_judge("f1@0.7").name == "f1@0.7"
    assert get_judge("f1", threshold=0.6).name == "f1@0.6"
    assert isinstance(get_judge("contains"), Judge)
    with pytest.raises(JudgeError, match="f1"):
        get_judge("f1", nonsense=1)
