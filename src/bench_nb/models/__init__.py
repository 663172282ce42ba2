"""LLM access, token counting and the answer prompt.

- ``aliases``: model aliases -> ``ModelSpec`` (API, model id, defaults)
- ``tokens``: ``count_tokens(text, model) -> TokenCount(n, tokenizer, exact)``, offline tiktoken
- ``prompt``: the answer prompt, ``format_context(hits)`` and MemoryBench's token fields
- ``client``: ``complete(model, messages, ...) -> Completion`` with retries, cache, tokens and cost
- ``llm``: the LLM answerer (``make_llm_answerer``)
"""

from __future__ import annotations

from bench_nb.models.aliases import MODELS, ModelSpec, resolve_model
from bench_nb.models.prompt import (
    PromptTokens,
    answer_prompt_hash,
    build_answer_prompt,
    format_context,
    prompt_tokens,
)
from bench_nb.models.tokens import TokenCount, count_tokens, seed_tiktoken_cache, tokenizer_for

__all__ = [
    "MODELS",
    "ModelSpec",
    "PromptTokens",
    "TokenCount",
    "answer_prompt_hash",
    "build_answer_prompt",
    "count_tokens",
    "format_context",
    "prompt_tokens",
    "resolve_model",
    "seed_tiktoken_cache",
    "tokenizer_for",
]
