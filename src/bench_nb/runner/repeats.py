"""Repeats of one run (``bench-nb run --repeat N``, a sweep's ``repeats``): each repeat's own LLM response cache.

Repeat 1 reads and writes the usual response cache; repeat i > 1 its own file beside it,
``<stem>.repeat-<i><suffix>`` (``llm.repeat-2.sqlite``), so its model calls are made afresh instead of replayed
from repeat 1, and rerunning resumes each repeat with its own cache. The cache is an option of the LLM client
(``ClientSettings.cache_path``): every run resolves a client of its own once (``run_client``, ``RunPlan.client``),
which it hands to the answerer and judges it makes by name; there is no process-wide client and the
environment is not touched, so runs in one process (threads, a sweep) never share a client or see another's cache.
"""

from __future__ import annotations

import dataclasses

from bench_nb.models.client import LLMClient
from bench_nb.models.settings import ClientSettings


def run_client(repeat: int) -> LLMClient:
    """A run's own LLM client, made from the environment; repeat ``repeat`` > 1 reads and writes its own response
    cache beside the usual one (``llm.repeat-2.sqlite``). It opens nothing until it calls a model."""
    settings = ClientSettings.from_env()
    cache = settings.cache_path  # None: caching is off, for every repeat
    if cache is not None and repeat > 1:
        cache = cache.with_name(f"{cache.stem}.repeat-{repeat}{cache.suffix}")
    return LLMClient(dataclasses.replace(settings, cache_path=cache))
