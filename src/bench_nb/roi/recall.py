"""Pinned recall: each probe is searched as its owner, over what the owner may read, pinned to the probe's
source scope plus the owner's personal and core layers.

How memories map to the provider: one container per distinct pinned read set of a run
(``roi-<run_id>-<digest>``), holding exactly the memories of that read set, each ingested as one session whose
``session_id`` is the memory id. A container therefore never holds another project's memory or another
owner's private memory. As a second guard, every hit is mapped back to a memory id (``session_id``, then
``hit_id``, then ``raw["memory_id"]``) and kept only if that id is in the probe's read set; the others are
counted as ``dropped``. Containers are cleared when the recall phase ends.

A store with a search of its own (Postgres: full-text search in the database, run in the owner's role)
recalls with :func:`store_recalls` instead: no container, the database returns only what the owner may read in
the probe's pinned scopes, and the same second guard applies.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bench_nb.providers.base import Provider
from bench_nb.records import Message, SearchHit, Session
from bench_nb.roi.memory import Memory, pinned_scopes
from bench_nb.roi.records import Probe, Recall, Surfaced
from bench_nb.roi.store import RoiStore

#: Hits surfaced per probe (the agent's retrieval limit).
DEFAULT_K = 5
INDEX_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class ReadSet:
    """The memories one probe may surface."""

    scopes: tuple[str, ...]
    memories: tuple[Memory, ...]

    @property
    def ids(self) -> frozenset[str]:
        """The ids of the memories in the read set."""
        return frozenset(m.id for m in self.memories)

    @property
    def digest(self) -> str:
        """A short sha256 of the read set's memories (ids and contents, by id): it changes when any of them
        does."""
        h = hashlib.sha256()
        for m in sorted(self.memories, key=lambda m: m.id):
            h.update(f"{m.id}\x00{m.content}\x00".encode())
        return h.hexdigest()[:16]


def read_set(store: RoiStore, probe: Probe) -> ReadSet:
    """The pinned read set of ``probe``: live memories its owner may read in its pinned scopes."""
    scopes = pinned_scopes(probe.owner, probe.scope)
    return ReadSet(scopes, tuple(store.readable_memories(probe.owner, scopes)))


def memory_session(memory: Memory) -> Session:
    """A memory as the provider ingests it: one session, one message, ids equal to the memory id."""
    message = Message(
        role="memory", content=memory.content, timestamp=memory.created_at, message_id=memory.id
    )
    return Session(session_id=memory.id, date=memory.created_at, messages=(message,))


def hit_memory_id(hit: SearchHit, allowed: frozenset[str]) -> str | None:
    """The memory id a hit stands for, if it is one of ``allowed``."""
    candidates = [hit.session_id, hit.hit_id]
    if hit.raw:
        candidates += [hit.raw.get("memory_id"), hit.raw.get("session_id")]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate in allowed:
            return candidate
    return None


def pinned_recalls(
    store: RoiStore, provider: Provider, probes: Sequence[Probe], *, run_id: str, k: int = DEFAULT_K
) -> Iterator[Recall]:
    """Recall every probe through ``provider``, one container per distinct read set; yields in probe order."""
    sets = {p.id: read_set(store, p) for p in probes}
    containers: dict[str, str] = {}
    try:
        for probe in probes:
            rs = sets[probe.id]
            container = containers.get(rs.digest)
            if container is None:
                container = f"roi-{run_id}-{rs.digest}"
                ingested = provider.ingest(container, [memory_session(m) for m in rs.memories])
                provider.await_indexing(container, ingested, INDEX_TIMEOUT_S)
                containers[rs.digest] = container
            start = time.perf_counter()
            hits = provider.search(container, probe.question, k)
            latency_ms = (time.perf_counter() - start) * 1000
            yield _recall(probe, hits, rs, latency_ms)
    finally:
        for container in containers.values():
            provider.clear(container)


def store_recalls(store: RoiStore, probes: Sequence[Probe], *, k: int = DEFAULT_K) -> Iterator[Recall]:
    """Recall every probe with the store's own search (``RoiStore.search``), as its owner; in probe order."""
    for probe in probes:
        rs = read_set(store, probe)
        start = time.perf_counter()
        hits = store.search(probe.owner, rs.scopes, probe.question, k)
        latency_ms = (time.perf_counter() - start) * 1000
        yield _recall(probe, hits, rs, latency_ms)


def _recall(probe: Probe, hits: Sequence[SearchHit], rs: ReadSet, latency_ms: float) -> Recall:
    allowed = rs.ids
    surfaced: list[Surfaced] = []
    seen: set[str] = set()
    dropped = 0
    for hit in hits:
        memory_id = hit_memory_id(hit, allowed)
        if memory_id is None:
            dropped += 1
        elif memory_id not in seen:  # a provider that chunks may return one memory twice
            seen.add(memory_id)
            surfaced.append(Surfaced(memory_id, hit.text, hit.score))
    return Recall(probe.id, tuple(surfaced), dropped, latency_ms)
