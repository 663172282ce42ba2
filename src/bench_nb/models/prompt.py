"""The answer prompt, the same for every provider, and MemoryBench's token fields on it.

The prompt holds the question, the question date (MemoryBench never passed it, which made temporal questions
unanswerable) and the retrieved context, formatted by one function, ``format_context``, whatever the provider.

Token fields, exactly as MemoryBench defines them (docs/memorybench-format.md):

- ``promptTokens`` = tokens(the prompt with the retrieved context);
- ``basePromptTokens`` = tokens(the same prompt built with no hits);
- ``contextTokens`` = max(0, promptTokens - basePromptTokens).

A provider's own prompt (allowed only when the run turns custom prompts on) goes through the same function, so
its tokens are counted the same way.

Context formats: how ``format_context`` shows a hit is versioned (``CONTEXT_FORMATS``), and the version is part
of ``answer_prompt_hash``, so the hash changes exactly when what the answerer sees changes. Format 1 (runs made
before formats had versions, which record none) repeats a hit's date when its text starts with it (``[date]
Speaker: ...``, the sqlite, full-context and mem0-local renderings); format 2 (``CONTEXT_FORMAT``, new runs)
shows it once, in the block's head. A resumed run keeps its own format (docs/runner.md).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench_nb.errors import BenchNbError
from bench_nb.models.aliases import ModelSpec
from bench_nb.models.base import Answerer
from bench_nb.models.tokens import count_tokens
from bench_nb.records import Question, SearchHit

if TYPE_CHECKING:
    from bench_nb.models.client import LLMClient

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

LEGACY_CONTEXT_FORMAT = 1
"""The context format of runs that record none (made before formats had versions): a hit's date twice."""
CONTEXT_FORMAT = 2
"""The context format new runs use: a hit's date once, in its block's head."""
CONTEXT_FORMATS = (LEGACY_CONTEXT_FORMAT, CONTEXT_FORMAT)

# The format ``format_context`` uses when not told: set by ``prompt_tokens`` and ``answer_prompt_hash`` while
# they build, so a custom prompt function calling ``format_context(hits)`` follows the answerer's format.
_FORMAT: ContextVar[int] = ContextVar("bench_nb_context_format", default=CONTEXT_FORMAT)


def check_context_format(version: int) -> int:
    """``version`` if it is a known context format, else ``ValueError`` naming the known ones."""
    if version not in CONTEXT_FORMATS:
        known = ", ".join(map(str, CONTEXT_FORMATS))
        raise ValueError(f"unknown context format {version!r}; known: {known}")
    return version


def in_context_format(answerer: Answerer, version: int | None, where: str = "") -> Answerer:
    """``answerer`` showing hits in context format ``version`` (``CONTEXT_FORMATS``): itself when it already
    does, when ``version`` is None, or when it has no ``context_format`` to set; else a copy set to it (an
    object the caller passed is not changed). A resumed run's answerer gets the run's own format this way, so
    its remaining prompts are built as its first ones were.

    Raises:
        BenchNbError: ``version`` is not a known format (``where`` names the run).
    """
    current = getattr(answerer, "context_format", None)
    if version is None or current is None or current == version:
        return answerer
    try:
        check_context_format(version)
    except ValueError as err:
        raise BenchNbError(f"{where}: {err} (made by a newer bench_nb?)" if where else str(err)) from None
    changed = copy.copy(answerer)
    changed.context_format = version  # type: ignore[attr-defined]
    return changed


@contextmanager
def using_context_format(version: int) -> Iterator[None]:
    """``format_context`` calls in this block (this thread) that name no format use ``version``."""
    token = _FORMAT.set(check_context_format(version))
    try:
        yield
    finally:
        _FORMAT.reset(token)


def format_context(hits: Sequence[SearchHit], context_format: int | None = None) -> str:
    """The retrieved hits as numbered blocks: ``[n] (date, session id)`` then the text.

    Every provider's hits are formatted by this function, so differences in score come from what was
    retrieved, not from how it was shown to the model. No hits gives ``NO_CONTEXT``. ``context_format``
    (default: the one in effect, ``CONTEXT_FORMAT`` unless ``using_context_format`` says otherwise): from
    format 2 on, a hit whose text starts with its own date in brackets (``[date] Speaker: ...``) loses that
    prefix, since the block's head names the date; format 1 shows the text as it is.
    """
    if not hits:
        return NO_CONTEXT
    version = _FORMAT.get() if context_format is None else check_context_format(context_format)
    blocks = []
    for i, hit in enumerate(hits, start=1):
        meta = ", ".join(x for x in (hit.date, f"session {hit.session_id}" if hit.session_id else None) if x)
        head = f"[{i}] ({meta})" if meta else f"[{i}]"
        text = hit.text.strip()
        if version >= 2 and hit.date and text.startswith(f"[{hit.date}]"):
            text = text[len(hit.date) + 2 :].lstrip()
        blocks.append(f"{head}\n{text}")
    return "\n\n".join(blocks)


def build_answer_prompt(
    question: Question, hits: Sequence[SearchHit], context_format: int | None = None
) -> str:
    """The standard answer prompt for ``question`` with ``hits`` as context (in ``context_format``)."""
    return ANSWER_TEMPLATE.format(
        question=question.question.strip(),
        question_date=question.question_date or NO_DATE,
        context=format_context(hits, context_format),
    )


def answer_prompt_hash(
    prompt: str | AnswerPromptFn | None = None, context_format: int = CONTEXT_FORMAT
) -> str:
    """A short sha256 of the answer prompt's template and context format, so reports can show that runs used
    the same prompt.

    For the standard prompt (``None``) it hashes ``ANSWER_TEMPLATE``; for a template string, the string; for a
    function, the prompt it builds for a fixed probe question (same function, same hash). From context format
    2 on, the format's version is hashed with it (format 1's hashes are the ones runs made before versions
    recorded), so two runs share a hash only when their answerer saw their hits the same way.
    """
    if prompt is None:
        text = ANSWER_TEMPLATE
    elif isinstance(prompt, str):
        text = prompt
    else:
        probe = Question("probe", "{question}", "", "", "other", "", question_date="{question_date}")
        with using_context_format(context_format):
            text = prompt(probe, [SearchHit(text="{context}")])
    if check_context_format(context_format) != LEGACY_CONTEXT_FORMAT:
        text = f"{text}\n\ncontext format {context_format}"
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
    context_format: int = CONTEXT_FORMAT,
    client: LLMClient | None = None,
) -> PromptTokens:
    """Build the answer prompt and count ``promptTokens``, ``basePromptTokens`` and ``contextTokens``.

    Args:
        question: the question asked.
        hits: the retrieved context.
        model: the answering model, which picks the tokenizer (see ``bench_nb.models.tokens``); answerers
            without a model (the extractive one) count as ``gpt-4o`` would.
        prompt: a custom prompt function; None is the standard prompt.
        context_format: how the hits are shown (``CONTEXT_FORMATS``; a custom function calling
            ``format_context(hits)`` gets it too).
        client: the LLM client Anthropic's token count is asked through (``count_tokens``).
    """
    build = prompt or build_answer_prompt
    with using_context_format(context_format):
        full = build(question, hits)
        empty = build(question, [])
    with_context = count_tokens(full, model, client=client)
    base = count_tokens(empty, model, client=client)
    return PromptTokens(
        prompt=full,
        prompt_tokens=with_context.n,
        base_prompt_tokens=base.n,
        context_tokens=max(0, with_context.n - base.n),
        tokenizer=with_context.tokenizer,
        exact=with_context.exact and base.exact,
    )
