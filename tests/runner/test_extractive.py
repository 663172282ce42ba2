"""The extractive answerer and the answerer registry."""

from __future__ import annotations

import pytest

from bench_nb.errors import ModelError
from bench_nb.models.answerers import get_answerer
from bench_nb.models.base import Answerer
from bench_nb.models.extractive import ABSTAIN, ExtractiveAnswerer
from bench_nb.models.prompt import prompt_tokens
from bench_nb.records import Question, SearchHit


def question(text: str, qdate: str | None = "2024-05-01T00:00:00") -> Question:
    return Question("q1", text, "", "single-hop", "single-hop", "h", question_date=qdate)


HITS = [
    SearchHit(
        "[2024-01-14T10:27:00] Marek: Pilot! Great name. Send photos.",
        session_id="s1",
        date="2024-01-14T10:27:00",
    ),
    SearchHit(
        "[2024-01-14T10:25:00] Ines: I adopted a cat last week, a grey tabby called Pilot.",
        session_id="s1",
        date="2024-01-14T10:25:00",
    ),
    SearchHit(
        "[2024-04-20T18:59:00] Ines: My manager is Dr. Halvorsen, she is very patient.",
        date="2024-04-20T18:59:00",
    ),
]


def test_answers_with_the_best_overlapping_sentence_without_its_prefix() -> None:
    a = ExtractiveAnswerer().answer(question("What is the name of Ines's cat?"), HITS)
    assert a.hypothesis == "I adopted a cat last week, a grey tabby called Pilot."
    b = ExtractiveAnswerer().answer(question("Who is Ines's manager?"), HITS)
    assert b.hypothesis == "My manager is Dr. Halvorsen, she is very patient."  # no split after "Dr."


def test_abstains_without_hits_or_overlap() -> None:
    answerer = ExtractiveAnswerer()
    assert answerer.answer(question("What is the name of Ines's cat?"), []).hypothesis == ABSTAIN
    assert answerer.answer(question("Which car does Oskar drive?"), HITS).hypothesis == ABSTAIN


def test_when_questions_get_the_hit_date_and_answers_are_trimmed() -> None:
    a = ExtractiveAnswerer().answer(question("When did Ines adopt a cat?"), HITS)
    assert a.hypothesis.endswith("(on 14 January 2024)")
    short = ExtractiveAnswerer(max_words=3).answer(question("What is the name of Ines's cat?"), HITS)
    assert short.hypothesis == "I adopted a …"


def test_token_fields_are_the_answer_prompts_with_the_same_hits() -> None:
    qn = question("What is the name of Ines's cat?")
    a = ExtractiveAnswerer().answer(qn, HITS)
    expected = prompt_tokens(qn, HITS, "gpt-4o")
    assert (a.prompt_tokens, a.base_prompt_tokens, a.context_tokens) == (
        expected.prompt_tokens,
        expected.base_prompt_tokens,
        expected.context_tokens,
    )
    assert a.context_tokens and a.context_tokens > 20
    assert a.tokenizer == "tiktoken:o200k_base" and a.model is None
    empty = ExtractiveAnswerer().answer(qn, [])
    assert empty.context_tokens == 0 and empty.prompt_tokens == empty.base_prompt_tokens


def test_registry() -> None:
    a = get_answerer("extractive", min_overlap=0.9)
    assert isinstance(a, ExtractiveAnswerer) and isinstance(a, Answerer) and a.min_overlap == 0.9
    with pytest.raises(ModelError, match="min_overlap"):
        get_answerer("extractive", min_overlap=2)
    with pytest.raises(ModelError, match="bogus"):
        get_answerer("extractive", bogus=1)
