"""The answer prompt, the same for every provider, and MemoryBench's token fields on it.

The prompt holds the question, the question date (MemoryBench never passed it, which made temporal questions
unanswerable) and the retrieved context, formatted by one function, ``format_context``, whatever the provider.

Token fields, exactly as MemoryBench defines them (docs/memorybench-format.md):

- ``promptTokens`` = tokens(the prompt with the retrieved context);
- ``basePromptTokens`` = tokens(the same prompt built with no hits);
- ``contextTokens`` = max(0, promptTokens - basePromptTokens).

A provider's own prompt (allowed only when the run turns custom prompts on) goes through the same function, so
its tokens are counted the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench_nb.models.aliases import ModelSpec
from bench_nb.models.tokens import count_tokens
from bench_nb.records import Question, SearchHit

AnswerPromptFn = Callable[[Question, Sequence[SearchHit]], str]
"""A custom answer prompt: (question, hits) -> the full prompt text."""

NO_CONTEXT = "(no memories retrieved)"
NO_DATE = "not given"

ANSWER_TEMPLATE = """\
You answer questions about a user's past conversations, using only the memories retrieved below.

Current date (the day the question is asked): {question_date}
Question: {question}

Retrieved memories (most relevant first; each with the date of the conversation it comes from):
{context}

How to answer:
- Use only the retrieved memories. Combine several memories when the question needs it.
- Resolve relative dates ("yesterday", "last week", "two years ago") against the date of the memory that \
mentions them, and durations or "how long ago" against the current date.
- When memories disagree, the most recent one holds the current fact.
- If the memories do not contain the answer, say "I don't know" instead of guessing.
- Answer in a few words or one short sentence, with no preamble.

Answer:"""

ANSWER_PROMPT_ID = "bench_nb/answer/v1"


def format_context(hits: Sequence[SearchHit]) -> str:
    """The retrieved hits as numbered blocks: ``[n] (date, session id)`` then the text.

    Every provider's hits are formatted by this function, so differences in score come from what was
    retrieved, not from how it was shown to the model. No hits gives ``NO_CONTEXT``.
    """
    if not hits:
        return NO_CONTEXT
    blocks = []
    for i, hit in enumerate(hits, start=1):
        meta = ", ".join(x for x in (hit.date, f"session {hit.session_id}" if hit.session_id else None) if x)
        head = f"[{i}] ({meta})" if meta else f"[{i}]"
        blocks.append(f"{head}\n{hit.text.strip()}")
    return "\n\n".join(blocks)


def build_answer_prompt(question: Question, hits: Sequence[SearchHit]) -> str:
    """The standard answer prompt for ``question`` with ``hits`` as context."""
    return ANSWER_TEMPLATE.format(
        question=question.question.strip(),
        question_date=question.question_date or NO_DATE,
        context=format_context(hits),
    )


def answer_prompt_hash(prompt: str | AnswerPromptFn | None = None) -> str:
    """A short sha256 of the answer prompt's template, so reports can show that runs used the same prompt.

    For the standard prompt (``None``) it hashes ``ANSWER_TEMPLATE``; for a template string, the string; for a
    function, the prompt it builds for a fixed probe question (same function, same hash).
    """
    if prompt is None:
        text = ANSWER_TEMPLATE
    elif isinstance(prompt, str):
        text = prompt
    else:
        probe = Question("probe", "{question}", "", "", "other", "", question_date="{question_date}")
        text = prompt(probe, [SearchHit(text="{context}")])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def template_prompt(template: str) -> AnswerPromptFn:
    """A custom prompt from a template with ``{question}``, ``{question_date}`` and ``{context}`` fields."""

    def build(question: Question, hits: Sequence[SearchHit]) -> str:
        return (
            template.replace("{question}", question.question)
            .replace("{question_date}", question.question_date or NO_DATE)
            .replace("{context}", format_context(hits))
        )

    return build


@dataclass(frozen=True)
class PromptTokens:
    """The prompt sent to the model and MemoryBench's three token fields on it."""

    prompt: str
    prompt_tokens: int
    base_prompt_tokens: int
    context_tokens: int
    tokenizer: str
    exact: bool


def prompt_tokens(
    question: Question,
    hits: Sequence[SearchHit],
    model: str | ModelSpec = "gpt-4o",
    *,
    prompt: AnswerPromptFn | None = None,
) -> PromptTokens:
    """Build the answer prompt and count ``promptTokens``, ``basePromptTokens`` and ``contextTokens``.

    Args:
        question: the question asked.
        hits: the retrieved context.
        model: the answering model, which picks the tokenizer (see ``bench_nb.models.tokens``); answerers
            without a model (the extractive one) count as ``gpt-4o`` would.
        prompt: a custom prompt function; None is the standard prompt.
    """
    build = prompt or build_answer_prompt
    full = build(question, hits)
    with_context = count_tokens(full, model)
    base = count_tokens(build(question, []), model)
    return PromptTokens(
        prompt=full,
        prompt_tokens=with_context.n,
        base_prompt_tokens=base.n,
        context_tokens=max(0, with_context.n - base.n),
        tokenizer=with_context.tokenizer,
        exact=with_context.exact and base.exact,
    )
