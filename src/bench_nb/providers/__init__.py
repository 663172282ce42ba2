"""Memory providers: the Provider protocol, a registry by name, the embedded default and the baselines.

    >>> from bench_nb.providers import get_provider, list_providers
    >>> provider = get_provider("sqlite", run_dir="runs/r1")

Registered: ``sqlite`` (SQLite FTS5 + BM25, the default), ``full-context`` and ``no-memory`` (baselines),
and with the optional ``mem0`` extra ``mem0-local`` (mem0's open-source Memory, offline) and ``hybrid``
(BM25 + embeddings, reciprocal rank fusion). Write your own: implement ``Provider`` and
``register_provider`` it (docs/providers.md).
"""

# mypy: implicit-reexport
from __future__ import annotations

from bench_nb.lazy import attach
from bench_nb.providers.base import Provider
from bench_nb.providers.baselines import FullContextProvider, NoMemoryProvider
from bench_nb.providers.latency import SearchLatency, search_latency
from bench_nb.providers.query import fts5_query, query_terms
from bench_nb.providers.registry import get_provider, list_providers, register_provider, unregister_provider
from bench_nb.providers.sqlite import SqliteProvider

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.providers.base": ["Provider"],
        "bench_nb.providers.baselines": ["FullContextProvider", "NoMemoryProvider"],
        "bench_nb.providers.latency": ["SearchLatency", "search_latency"],
        "bench_nb.providers.query": ["fts5_query", "query_terms"],
        "bench_nb.providers.registry": [
            "get_provider",
            "list_providers",
            "register_provider",
            "unregister_provider",
        ],
        "bench_nb.providers.sqlite": ["SqliteProvider"],
    },
)
