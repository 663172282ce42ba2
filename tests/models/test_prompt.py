"""The answer prompt and MemoryBench's token fields on it."""

from __future__ import annotations

from bench_nb.models.prompt import (
    ANSWER_TEMPLATE,
    NO_CONTEXT,
    answer_prompt_hash,
    build_answer_prompt,
    format_context,
    prompt_tokens,
    template_prompt,
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
