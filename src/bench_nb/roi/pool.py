"""The probe pool: topped up to :data:`POOL_SIZE` active probes per owner, newest memories first.

Candidates are the owner's own live memories of the knowledge kinds (decision, gotcha, convention) that were
never probed; a memory is probed at most once, ever. A probe whose source memory is invalidated is retired
(probes are never deleted). Drafts for ids the prober was not given are dropped.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from bench_nb.roi.memory import PROBE_KINDS, pinned_scopes, utc_now
from bench_nb.roi.metering import Meter
from bench_nb.roi.probers import Prober, ProberFailed
from bench_nb.roi.records import Probe
from bench_nb.roi.store import RoiStore

POOL_SIZE = 20
#: How many batches one top-up asks the prober for when it skips memories (e.g. a model that dropped some).
MAX_ROUNDS = 3


@dataclass(frozen=True)
class TopUp:
    """What a top-up did: probes retired (source invalidated), probes added, active probes after."""

    retired: int
    added: int
    active: int
    dropped: int = 0  # drafts for unknown ids, duplicates or empty questions


def probe_id(owner: str, memory_id: str) -> str:
    """A stable probe id (one probe per memory, ever)."""
    return "probe-" + hashlib.sha256(f"{owner}\x00{memory_id}".encode()).hexdigest()[:16]


def top_up(
    store: RoiStore, owner: str, prober: Prober, *, target: int = POOL_SIZE, meter: Meter | None = None
) -> TopUp:
    """Retire probes of invalidated memories, then add probes until ``owner`` has ``target`` active ones.

    Raises:
        ProberFailed: an LLM prober's call failed or its reply was unreadable (its calls are still metered;
            probes added by earlier batches are kept).
    """
    retired = store.retire_invalidated(owner)
    bind = getattr(prober, "with_read_sets", None)
    if callable(bind):  # a prober that reads each memory's neighbours (mode distractor)
        # a memory's pinned read set (what its probe's recall may surface), read once per scope
        read_set = functools.cache(lambda scope: store.readable_memories(owner, pinned_scopes(owner, scope)))
        prober = bind(lambda memory: read_set(memory.scope))
    added = dropped = 0
    attempted: list[str] = []
    for _ in range(MAX_ROUNDS):
        need = target - len(store.active_probes(owner))
        if need <= 0:
            break
        batch = store.unprobed_memories(owner, PROBE_KINDS, limit=need, skip=attempted)
        if not batch:
            break
        attempted.extend(m.id for m in batch)
        try:
            reply = prober.write(batch)
        except ProberFailed as err:
            if meter is not None:
                meter.record("prober", err.usage)
            raise
        if meter is not None:
            meter.record("prober", reply.usage)
        given = {m.id: m for m in batch}
        probes: dict[str, Probe] = {}
        now = utc_now()
        for draft in reply.drafts:
            memory = given.get(draft.memory_id)
            question = draft.question.strip()
            if memory is None or not question or memory.id in probes:
                dropped += 1
                continue
            probes[memory.id] = Probe(
                id=probe_id(owner, memory.id),
                owner=owner,
                memory_id=memory.id,
                scope=memory.scope,
                question=question,
                mode=prober.mode,
                model=prober.model,
                created_at=now,
            )
        added += store.insert_probes(probes.values())
    return TopUp(retired=retired, added=added, active=len(store.active_probes(owner)), dropped=dropped)
