"""LLM access, token counting and the answer prompt.

- ``aliases``: model aliases -> ``ModelSpec`` (API, model id, defaults)
- ``tokens``: ``count_tokens(text, model) -> TokenCount(n, tokenizer, exact)``, offline tiktoken
- ``prompt``: the answer prompt, ``format_context(hits)`` and MemoryBench's token fields
- ``client``: ``complete(model, messages, ...) -> Completion`` with retries, cache, tokens and cost
- ``llm``: the LLM answerer (``make_llm_answerer``)
"""

from __future__ import annotations

import importlib
from typing import Any

from bench_nb.models.aliases import MODELS, ModelSpec, resolve_model
from bench_nb.models.prompt import (
    PromptTokens,
    answer_prompt_hash,
    build_answer_prompt,
    format_context,
    prompt_tokens,
)
from bench_nb.models.tokens import TokenCount, count_tokens, seed_tiktoken_cache, tokenizer_for

# Imported on first use: the SDKs are heavy and ``import bench_nb`` should not pay for them.
_LAZY = {
    "ClientSettings": "bench_nb.models.settings",
    "Completion": "bench_nb.models.client",
    "LLMAnswerer": "bench_nb.models.llm",
    "LLMClient": "bench_nb.models.client",
    "complete": "bench_nb.models.client",
    "make_llm_answerer": "bench_nb.models.llm",
    "set_price": "bench_nb.models.prices",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bench_nb.models' has no attribute {name!r}")


__all__ = [
    "MODELS",
    "ClientSettings",
    "Completion",
    "LLMAnswerer",
    "LLMClient",
    "ModelSpec",
    "PromptTokens",
    "TokenCount",
    "answer_prompt_hash",
    "build_answer_prompt",
    "complete",
    "count_tokens",
    "format_context",
    "make_llm_answerer",
    "prompt_tokens",
    "resolve_model",
    "seed_tiktoken_cache",
    "set_price",
    "tokenizer_for",
]
