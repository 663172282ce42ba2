"""The LLM answerer: the shared answer prompt (``bench_nb.models.prompt``) sent to a model by alias.

    answerer = make_llm_answerer("gpt-4o-mini")
    answer = answerer.answer(question, hits)
    # Answer(hypothesis, prompt_tokens, base_prompt_tokens, context_tokens, tokenizer, model,
    #        input_tokens, output_tokens, cost_usd, cached)

``prompt_tokens``/``base_prompt_tokens``/``context_tokens`` are counted client-side exactly as MemoryBench
does (see ``prompt_tokens``), with the answering model's tokenizer, recorded in ``tokenizer``;
``input_tokens``/``output_tokens`` are what the API billed. A provider's own answer prompt (a template string
with ``{question}``, ``{question_date}``, ``{context}``, or a function of (question, hits)) is used only with
``allow_custom_prompt=True``; the answerer then says so (``custom_prompt``) and the run must record
``benchNb.customPrompt = true``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from bench_nb.errors import ModelError
from bench_nb.models.aliases import resolve_model
from bench_nb.models.client import LLMClient, UsageTotals
from bench_nb.models.prompt import (
    CONTEXT_FORMAT,
    AnswerPromptFn,
    answer_prompt_hash,
    check_context_format,
    prompt_tokens,
    template_prompt,
)
from bench_nb.models.tokens import tokenizer_for, warm_up_tokenizer
from bench_nb.records import Answer, Question, SearchHit

log = logging.getLogger(__name__)


class LLMAnswerer:
    """Answers from retrieved context with a model.

    Attributes:
        name: the answerer's name in runs (the model alias).
        tokenizer: the tokenizer that counts its prompt tokens (e.g. ``tiktoken:o200k_base``).
        prompt_hash: the hash of the answer prompt in use (its template and context format).
        context_format: how the prompt shows the hits (``bench_nb.models.prompt.CONTEXT_FORMATS``; a resumed
            run sets its own).
        custom_prompt: True when a provider's own prompt is in use.
        usage: calls, tokens and cost so far.
    """

    def __init__(
        self,
        alias: str,
        *,
        client: LLMClient | None = None,
        base_url: str | None = None,
        prompt: str | AnswerPromptFn | None = None,
        allow_custom_prompt: bool = False,
        temperature: float | None = None,
        max_tokens: int | None = None,
        name: str | None = None,
        context_format: int = CONTEXT_FORMAT,
    ) -> None:
        self.spec = resolve_model(alias, base_url=base_url)
        self.name = name or alias
        self._client = client
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.usage = UsageTotals()
        if prompt is not None and not allow_custom_prompt:
            log.warning(
                "answerer %s: a custom answer prompt was given but not allowed; using the standard one", alias
            )
            prompt = None
        self.custom_prompt = prompt is not None
        self.context_format = check_context_format(context_format)
        self._prompt = prompt
        self._build: AnswerPromptFn | None = template_prompt(prompt) if isinstance(prompt, str) else prompt

    @cached_property
    def client(self) -> LLMClient:
        """The LLM client the answerer calls: the one given (a run's), else its own from the environment."""
        return self._client or LLMClient()

    @property
    def tokenizer(self) -> str:
        """The name of the tokenizer the answer prompt's tokens are counted with."""
        return tokenizer_for(self.spec)

    @property
    def prompt_hash(self) -> str:
        """The hash of the answer prompt in use: its template (or custom prompt) and context format."""
        return answer_prompt_hash(self._prompt, self.context_format)

    def warm_up(self) -> None:
        """Load the tokenizer its prompt tokens are counted with (outside any timed answer)."""
        warm_up_tokenizer(self.spec)

    def answer(self, question: Question, hits: Sequence[SearchHit]) -> Answer:
        """Answer ``question`` from ``hits``.

        Raises:
            ModelError: the model call failed after its retries (the message names the question).
        """
        try:
            pt = prompt_tokens(
                question,
                hits,
                self.spec,
                prompt=self._build,
                context_format=self.context_format,
                client=self.client,
            )
            reply = self.client.complete(
                self.spec,
                [{"role": "user", "content": pt.prompt}],
                temperature=self.temperature,
                max_tokens=self.max_tokens,
            )
        except ModelError as err:
            raise ModelError(f"answerer {self.name}, question {question.question_id}: {err}") from err
        self.usage.add(reply)
        return Answer(
            hypothesis=reply.text.strip(),
            prompt_tokens=pt.prompt_tokens,
            base_prompt_tokens=pt.base_prompt_tokens,
            context_tokens=pt.context_tokens,
            tokenizer=pt.tokenizer,
            model=self.spec.alias,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost_usd=reply.cost_usd,
            cached=reply.cached,
        )


_OPTIONS = set(inspect.signature(LLMAnswerer).parameters) - {"alias"}  # its keyword arguments


def make_llm_answerer(alias: str, **opts: Any) -> LLMAnswerer:
    """The LLM answerer for a model alias (the registry's factory for every non-built-in answerer name).

    Options: ``client``, ``base_url``, ``prompt`` (a provider's own answer prompt) with
    ``allow_custom_prompt``, ``temperature``, ``max_tokens``, ``name``, ``context_format``.

    Raises:
        ModelError: an unknown model alias or option.
    """
    unknown = sorted(set(opts) - _OPTIONS)
    if unknown:
        raise ModelError(
            f"answerer {alias!r}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(_OPTIONS))}"
        )
    return LLMAnswerer(alias, **opts)


def provider_prompts(provider: object) -> dict[str, Any]:
    """A provider's own prompts, if it brings any: ``{"answer": ..., "judge": ...}`` (absent keys: none).

    A provider brings them as optional attributes ``answer_prompt`` (template or function) and
    ``judge_prompt`` (template). They are used only when the user allows custom prompts for the run.
    """
    out: dict[str, Any] = {}
    for key in ("answer", "judge"):
        value = getattr(provider, f"{key}_prompt", None)
        if value is not None:
            out[key] = value
    return out
