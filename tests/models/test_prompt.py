"""The answer prompt and MemoryBench's token fields on it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bench_nb.models.prompt import (
    ANSWER_TEMPLATE,
    CONTEXT_FORMAT,
    NO_CONTEXT,
    answer_prompt_hash,
    build_answer_prompt,
    format_context,
    prompt_tokens,
    template_prompt,
    using_context_format,
)
from bench_nb.models.tokens import count_tokens
from bench_nb.records import Question, SearchHit

Q = Question(
    question_id="conv-26_q3",
    question="When did Caroline go to the LGBTQ support group?",
    answer="7 May 2023",
    question_type="temporal",
    norm_type="temporal",
    haystack_id="conv-26",
    question_date="2023-06-01",
)
HITS = [
    SearchHit(
        text="Caroline: I went to a LGBTQ support group yesterday.", session_id="s1", date="2023-05-08"
    ),
    SearchHit(text="  Melanie painted a sunrise.  ", score=0.3),
]


def test_prompt_holds_question_date_and_context() -> None:
    prompt = build_answer_prompt(Q, HITS)
    assert "Current date (the day the question is asked): 2023-06-01" in prompt
    assert "Question: When did Caroline go to the LGBTQ support group?" in prompt
    assert "[1] (2023-05-08, session s1)\nCaroline: I went to a LGBTQ support group yesterday." in prompt
    assert "[2]\nMelanie painted a sunrise." in prompt
    assert format_context([]) == NO_CONTEXT
    undated = Question("q", "Who?", "x", "t", "single-hop", "h")
    assert "Current date (the day the question is asked): not given" in build_answer_prompt(undated, [])


def test_token_fields_follow_memorybench_definitions() -> None:
    pt = prompt_tokens(Q, HITS, "gpt-4o-mini")
    assert pt.prompt == build_answer_prompt(Q, HITS)
    assert pt.prompt_tokens == count_tokens(build_answer_prompt(Q, HITS), "gpt-4o-mini").n
    assert pt.base_prompt_tokens == count_tokens(build_answer_prompt(Q, []), "gpt-4o-mini").n
    assert pt.context_tokens == pt.prompt_tokens - pt.base_prompt_tokens > 0
    assert (pt.tokenizer, pt.exact) == ("tiktoken:o200k_base", True)
    empty = prompt_tokens(Q, [], "gpt-4o-mini")
    assert empty.context_tokens == 0
    assert empty.prompt_tokens == empty.base_prompt_tokens


def test_context_tokens_are_never_negative() -> None:
    # A custom prompt whose "no context" text is longer than the context itself.
    def prompt(question: Question, hits: object) -> str:
        return f"{question.question}\n" + ("x" if hits else "nothing was retrieved at all, sorry")

    pt = prompt_tokens(Q, HITS, "gpt-4", prompt=prompt)
    assert pt.prompt_tokens < pt.base_prompt_tokens
    assert pt.context_tokens == 0


def test_prompt_hashes_identify_the_prompt() -> None:
    assert answer_prompt_hash() == answer_prompt_hash(ANSWER_TEMPLATE)
    custom = template_prompt("Q: {question} ({question_date})\n{context}\nA:")
    assert answer_prompt_hash(custom) == answer_prompt_hash(
        template_prompt("Q: {question} ({question_date})\n{context}\nA:")
    )
    assert answer_prompt_hash(custom) != answer_prompt_hash()
    assert custom(Q, HITS).startswith("Q: When did Caroline go to the LGBTQ support group? (2023-06-01)\n[1]")


def _stored_hit() -> SearchHit:
    """A hit as the sqlite provider renders it: ``[date] Speaker: text``, the date also in ``hit.date``."""
    import tempfile
    from pathlib import Path

    from bench_nb.providers.store import MessageStore
    from bench_nb.records import Message, Session

    with tempfile.TemporaryDirectory() as tmp:
        store = MessageStore(Path(tmp))
        session = Session(
            "S1", "2023-05-08T13:56:00", (Message("Ann", "I adopted a cat.", message_id="D1:1"),)
        )
        store.ingest("c", [session])
        return store.rows("c")[0].to_hit()


def test_a_hits_date_is_in_the_prompt_once() -> None:
    hit = _stored_hit()
    assert hit.text == "[2023-05-08T13:56:00] Ann: I adopted a cat."  # the provider's rendering keeps it
    context = format_context([hit])
    assert context.count("2023-05-08T13:56:00") == 1
    assert context == "[1] (2023-05-08T13:56:00, session S1)\nAnn: I adopted a cat."
    assert build_answer_prompt(Q, [hit]).count("2023-05-08T13:56:00") == 1
    assert prompt_tokens(Q, [hit]).context_tokens < prompt_tokens(Q, [hit], context_format=1).context_tokens


def test_context_format_1_is_what_runs_before_versions_saw() -> None:
    hit = _stored_hit()
    old = "[1] (2023-05-08T13:56:00, session S1)\n[2023-05-08T13:56:00] Ann: I adopted a cat."
    assert format_context([hit], 1) == old
    assert build_answer_prompt(Q, [hit], 1).count("2023-05-08T13:56:00") == 2
    with using_context_format(1):  # what the answerer of a resumed old run builds in
        assert format_context([hit]) == old
    assert format_context([hit]) != old
    with pytest.raises(ValueError, match="unknown context format 3; known: 1, 2"):
        format_context([hit], 3)


def test_the_context_format_is_in_the_answer_prompt_hash() -> None:
    # Format 1's hash is the one every run made before formats had versions recorded (tests/fixtures/old_runs).
    assert answer_prompt_hash(context_format=1) == "b602a500ac7aed79"
    assert answer_prompt_hash() != answer_prompt_hash(context_format=1)
    assert answer_prompt_hash(context_format=CONTEXT_FORMAT) == answer_prompt_hash()
    custom = template_prompt("Q: {question}\n{context}\nA:")
    assert answer_prompt_hash(custom) != answer_prompt_hash(custom, 1)


def test_a_custom_prompt_function_follows_the_answerers_context_format() -> None:
    hit = _stored_hit()

    def own(question: Question, hits: Sequence[SearchHit]) -> str:
        return f"{question.question}\n{format_context(hits)}"

    old = prompt_tokens(Q, [hit], prompt=own, context_format=1).prompt
    new = prompt_tokens(Q, [hit], prompt=own).prompt
    assert (old.count("2023-05-08T13:56:00"), new.count("2023-05-08T13:56:00")) == (2, 1)


def test_the_answerers_show_hits_in_their_context_format() -> None:
    from bench_nb.models.extractive import ExtractiveAnswerer

    hit = _stored_hit()
    new, old = ExtractiveAnswerer(), ExtractiveAnswerer(context_format=1)
    assert (new.prompt_hash, old.prompt_hash) == (answer_prompt_hash(), "b602a500ac7aed79")
    assert old.answer(Q, [hit]).context_tokens > new.answer(Q, [hit]).context_tokens
    with pytest.raises(ValueError, match="unknown context format 9"):
        ExtractiveAnswerer(context_format=9)
