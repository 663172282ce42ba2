"""Measuring a provider's search latency on a real haystack (for ``bench/runner.py`` and BENCHMARKS.md).

>>> from bench_nb.benchmarks import load_benchmark
>>> from bench_nb.providers import get_provider, search_latency
>>> bench = load_benchmark("locomo", "../shared/data/locomo/locomo10.json")
>>> haystack = bench.haystacks["conv-26"]
>>> queries = [q.question for q in bench.questions if q.haystack_id == haystack.haystack_id]
>>> search_latency(get_provider("sqlite", run_dir=tmp), haystack, queries, k=10)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bench_nb.providers.base import Provider
from bench_nb.records import Haystack


@dataclass(frozen=True)
class SearchLatency:
    """Search latency of one provider on one haystack (milliseconds, wall clock, one thread).

    Attributes:
        provider: the provider's name.
        haystack_id: the haystack searched.
        messages: how many messages it holds.
        searches: how many searches were timed.
        k: the retrieval limit used.
        ingest_s: the time to ingest the haystack and await its indexing, in seconds.
        p50_ms, p95_ms, mean_ms, max_ms: search latency statistics (p95 by the nearest-rank method).
        mean_hits: the mean number of hits a search returned.
    """

    provider: str
    haystack_id: str
    messages: int
    searches: int
    k: int
    ingest_s: float
    p50_ms: float
    p95_ms: float
    mean_ms: float
    max_ms: float
    mean_hits: float


def search_latency(
    provider: Provider,
    haystack: Haystack,
    queries: Sequence[str],
    *,
    k: int = 10,
    repeat: int = 1,
    container: str | None = None,
    clear: bool = True,
) -> SearchLatency:
    """Ingest ``haystack`` into one container, time each query's search ``repeat`` times, then clear it.

    Args:
        provider: any Provider (e.g. ``get_provider("sqlite", run_dir=tmp)``).
        haystack: e.g. one LoCoMo conversation (about 600 messages).
        queries: the questions to search (e.g. that conversation's questions).
        k: the retrieval limit.
        repeat: how many times each query is searched.
        container: the container name (default ``latency-<haystack_id>``).
        clear: clear the container afterwards.
    """
    if not queries or repeat < 1:
        raise ValueError("search_latency needs at least one query and repeat >= 1")
    name = container or f"latency-{haystack.haystack_id}"
    start = time.perf_counter()
    ingested = provider.ingest(name, haystack.sessions)
    provider.await_indexing(name, ingested, timeout_s=600.0)
    ingest_s = time.perf_counter() - start
    times: list[float] = []
    hits = 0
    try:
        for _ in range(repeat):
            for query in queries:
                t0 = time.perf_counter()
                found = provider.search(name, query, k)
                times.append((time.perf_counter() - t0) * 1000.0)
                hits += len(found)
    finally:
        if clear:
            provider.clear(name)
    return SearchLatency(
        provider=provider.name,
        haystack_id=haystack.haystack_id,
        messages=sum(len(s.messages) for s in haystack.sessions),
        searches=len(times),
        k=k,
        ingest_s=ingest_s,
        p50_ms=statistics.median(times),
        p95_ms=float(np.percentile(times, 95, method="inverted_cdf")),  # nearest rank
        mean_ms=statistics.fmean(times),
        max_ms=max(times),
        mean_hits=hits / len(times),
    )
