"""Repeats of one run (``bench-nb run --repeat N``, a sweep's ``repeats``): each repeat's own LLM response cache.

Repeat 1 reads and writes the usual response cache; repeat i > 1 its own file beside it,
``<stem>.repeat-<i><suffix>`` (``llm.repeat-2.sqlite``), so its model calls are made afresh instead of replayed
from repeat 1, and rerunning resumes each repeat with its own cache. The cache is an option of the LLM client
(``ClientSettings.cache_path``): the process-wide client is replaced for the repeat, the environment is not
touched (a run's threads and any other code in the process see one consistent environment).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path

from bench_nb.models.client import LLMClient, set_default_client
from bench_nb.models.settings import ClientSettings


def repeat_cache_path(cache: Path | None, repeat: int) -> Path | None:
    """Repeat ``repeat``'s response cache, given the usual one (``None``: caching is off)."""
    if cache is None or repeat <= 1:
        return cache
    return cache.with_name(f"{cache.stem}.repeat-{repeat}{cache.suffix}")


@contextlib.contextmanager
def repeat_cache(repeat: int) -> Iterator[Path | None]:
    """Within the block, the process-wide LLM client reads and writes repeat ``repeat``'s response cache
    (which it yields); repeat 1 changes nothing. After it, the client is rebuilt from the environment on next
    use. One run at a time per process: a repeat's client is the process's."""
    settings = ClientSettings.from_env()
    path = repeat_cache_path(settings.cache_path, repeat)
    if path == settings.cache_path:
        yield path
        return
    set_default_client(LLMClient(dataclasses.replace(settings, cache_path=path)))
    try:
        yield path
    finally:
        set_default_client(None)
