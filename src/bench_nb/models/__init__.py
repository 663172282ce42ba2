"""LLM access, token counting and the answer prompt.

- ``aliases``: model aliases -> ``ModelSpec`` (API, model id, defaults)
- ``tokens``: ``count_tokens(text, model) -> TokenCount(n, tokenizer, exact)``, offline tiktoken
- ``prompt``: the answer prompt, ``format_context(hits)`` and MemoryBench's token fields
- ``client``: ``complete(model, messages, ...) -> Completion`` with retries, cache, tokens and cost
- ``llm``: the LLM answerer (``make_llm_answerer``)
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach
from bench_nb.models.aliases import MODELS, ModelSpec, resolve_model
from bench_nb.models.prompt import (
    PromptTokens,
    answer_prompt_hash,
    build_answer_prompt,
    format_context,
    prompt_tokens,
)
from bench_nb.models.tokens import TokenCount, count_tokens, seed_tiktoken_cache, tokenizer_for

if TYPE_CHECKING:
    from bench_nb.models.client import Completion, LLMClient, complete
    from bench_nb.models.llm import LLMAnswerer, make_llm_answerer
    from bench_nb.models.prices import set_price
    from bench_nb.models.settings import ClientSettings

# ClientSettings, Completion, LLMAnswerer, LLMClient, complete, make_llm_answerer and set_price are imported on
# first use: the SDKs are heavy and ``import bench_nb`` should not pay for them. The others are imported above.
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.models.aliases": ["MODELS", "ModelSpec", "resolve_model"],
        "bench_nb.models.client": ["Completion", "LLMClient", "complete"],
        "bench_nb.models.llm": ["LLMAnswerer", "make_llm_answerer"],
        "bench_nb.models.prices": ["set_price"],
        "bench_nb.models.prompt": [
            "PromptTokens",
            "answer_prompt_hash",
            "build_answer_prompt",
            "format_context",
            "prompt_tokens",
        ],
        "bench_nb.models.settings": ["ClientSettings"],
        "bench_nb.models.tokens": ["TokenCount", "count_tokens", "seed_tiktoken_cache", "tokenizer_for"],
    },
)
