"""Repeats of one run (``bench-nb run --repeat N``, a sweep's ``repeats``): each repeat's own LLM response cache.

Repeat 1 reads and writes the usual response cache; repeat i > 1 its own file beside it,
``<stem>.repeat-<i><suffix>`` (``llm.repeat-2.sqlite``), so its model calls are made afresh instead of replayed
from repeat 1, and rerunning resumes each repeat with its own cache. The cache is an option of the LLM client
(``ClientSettings.cache_path``): a repeat's run gets its own client (``ExecutionOptions.repeat``), which it hands
to the answerer and judges it makes by name; the process-wide client and the environment are not touched, so
runs in one process (threads, a sweep) never see another's cache.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from bench_nb.models.client import LLMClient
from bench_nb.models.settings import ClientSettings


def repeat_cache_path(cache: Path | None, repeat: int) -> Path | None:
    """Repeat ``repeat``'s response cache, given the usual one (``None``: caching is off)."""
    if cache is None or repeat <= 1:
        return cache
    return cache.with_name(f"{cache.stem}.repeat-{repeat}{cache.suffix}")


def repeat_client(repeat: int) -> LLMClient | None:
    """The LLM client of repeat ``repeat``: reading and writing its own response cache (``repeat_cache_path``);
    None for repeat 1 or when caching is off (the process-wide client serves it)."""
    settings = ClientSettings.from_env()
    path = repeat_cache_path(settings.cache_path, repeat)
    return None if path == settings.cache_path else LLMClient(dataclasses.replace(settings, cache_path=path))
