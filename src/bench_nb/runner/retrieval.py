"""Retrieval metrics against a question's ground-truth evidence, at the granularity the evidence and the hits allow.

A benchmark names its evidence as messages (LoCoMo dia_ids, ``D1:3``) or sessions (LongMemEval
answer_session_ids); a provider declares what its hits can be traced to (``evidence_level``: ``message``
when ``hit_id`` is the message id, ``session`` when only ``session_id`` is ours, ``none`` when a hit is
nothing of ours, e.g. a fact Zep derived). Metrics are computed at the coarser of the two levels:

- message evidence, message-level hits: each hit is its message;
- session evidence, or session-level hits: each hit is its session (a message hit's session when the
  provider gave no session id), and message evidence is mapped to the sessions that hold it;
- a provider at level ``none``, or a question with no evidence in the haystack: **no metrics** (and a note
  in the question's ``benchNb.retrievalNote``), never zeros that would read as a failure to retrieve.

A provider that declares no level is judged by its hits, question by question: message-level when every hit's
id is a message of the haystack, session-level when every hit traces to a session, else none.

The definitions (``retrieval_metrics``), on the ranked units of the top ``k`` hits (an untraceable hit, or a
repeat of a unit an earlier hit already brought, adds nothing) and the set R of relevant units:

- ``relevantRetrieved`` = distinct units of R among the top k; ``totalRelevant`` = |R|;
- ``hitAtK`` = 1 if relevantRetrieved > 0; ``precisionAtK`` = relevantRetrieved / k;
  ``recallAtK`` = relevantRetrieved / |R|; ``f1AtK`` their harmonic mean (0 when both are 0);
- ``mrr`` = 1 / rank of the first hit that is relevant (0 when none is);
- ``ndcg`` = DCG / IDCG with binary gains, DCG = sum of 1/log2(rank + 1) over the hits that bring a relevant
  unit first, IDCG = sum over ranks 1..min(k, |R|) of 1/log2(rank + 1).

``k`` is the run's retrieval limit, or the number of hits when a provider returns more by design
(``full-context``, whose context is everything within its token budget): the metrics are about what the
answerer was given.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from bench_nb.errors import ProviderError
from bench_nb.providers.base import EvidenceLevel
from bench_nb.records import Haystack, SearchHit
from bench_nb.runformat.format import RetrievalMetrics

MetricLevel = Literal["message", "session"]
_LEVELS: tuple[str, ...] = get_args(EvidenceLevel)


def retrieval_metrics(
    ranked: Sequence[str | None], relevant: Collection[str], k: int
) -> RetrievalMetrics | None:
    """The metrics of the module docstring for ``ranked`` units (None: a hit traced to nothing), None without R."""
    wanted = set(relevant)
    if not wanted or k < 1:
        return None
    found: set[str] = set()
    first: int | None = None
    dcg = 0.0
    for rank, unit in enumerate(ranked[:k], start=1):
        if unit is None or unit not in wanted:
            continue
        if first is None:
            first = rank
        if unit not in found:
            found.add(unit)
            dcg += 1 / math.log2(rank + 1)
    hit = len(found)
    precision, recall = hit / k, hit / len(wanted)
    idcg = sum(1 / math.log2(rank + 1) for rank in range(1, min(k, len(wanted)) + 1))
    return RetrievalMetrics(
        hitAtK=1.0 if hit else 0.0,
        precisionAtK=precision,
        recallAtK=recall,
        f1AtK=2 * precision * recall / (precision + recall) if hit else 0.0,
        mrr=0.0 if first is None else 1 / first,
        ndcg=dcg / idcg,
        k=k,
        relevantRetrieved=hit,
        totalRelevant=len(wanted),
    )


def declared_evidence_level(provider: Any) -> EvidenceLevel | None:
    """The provider's ``evidence_level`` (None when it declares none); raises ProviderError on a bad value."""
    level = getattr(provider, "evidence_level", None)
    if level is None or level in _LEVELS:
        return level
    raise ProviderError(
        f"provider {getattr(provider, 'name', provider)!r}: evidence_level must be one of "
        f"{', '.join(_LEVELS)}, not {level!r}"
    )


@dataclass(frozen=True)
class EvidenceIndex:
    """A haystack's message ids with their sessions, and its session ids."""

    session_of: dict[str, str]
    sessions: frozenset[str]

    @classmethod
    def of(cls, haystack: Haystack) -> EvidenceIndex:
        """The index of ``haystack``: each message id's session, and its session ids."""
        session_of = {
            m.message_id: s.session_id for s in haystack.sessions for m in s.messages if m.message_id
        }
        return cls(session_of, frozenset(s.session_id for s in haystack.sessions))

    def session(self, hit: SearchHit) -> str | None:
        """The haystack session ``hit`` comes from, if it can be told."""
        if hit.session_id in self.sessions:
            return hit.session_id
        return self.session_of.get(hit.hit_id or "")

    def message(self, hit: SearchHit) -> str | None:
        """The haystack message ``hit`` is, by its id; None when it is none of them."""
        return hit.hit_id if hit.hit_id in self.session_of else None


@dataclass(frozen=True)
class RetrievalOutcome:
    """The metrics of one question (None when they cannot be computed), their level, and why, when it matters."""

    metrics: RetrievalMetrics | None
    level: MetricLevel | None = None
    note: str | None = None

    def bench_nb(self) -> dict[str, Any]:
        """The question-level ``benchNb`` keys ``retrievalLevel`` and ``retrievalNote`` (None removes a stale one)."""
        return {
            "retrievalLevel": self.level if self.metrics is not None else None,
            "retrievalNote": self.note,
        }


def _hits_level(hits: Sequence[SearchHit], index: EvidenceIndex) -> EvidenceLevel | None:
    """What an undeclared provider's hits trace to (None: no hits to tell by)."""
    if not hits:
        return None
    if all(index.message(h) for h in hits):
        return "message"
    if all(index.session(h) for h in hits):
        return "session"
    return "none"


def score_retrieval(
    hits: Sequence[SearchHit],
    evidence_ids: Sequence[str],
    index: EvidenceIndex,
    *,
    k: int,
    provider: str,
    provider_level: EvidenceLevel | None,
) -> RetrievalOutcome:
    """The question's retrieval metrics at the level its evidence and the provider's hits allow."""
    messages = {e for e in evidence_ids if e in index.session_of and e not in index.sessions}
    sessions = {e for e in evidence_ids if e in index.sessions}
    if not messages and not sessions:
        why = "names nothing in the haystack" if evidence_ids else "is not given"
        return RetrievalOutcome(None, note=f"no retrieval metrics: the question's evidence {why}")
    evidence_level: MetricLevel = "session" if sessions else "message"
    level = provider_level if provider_level is not None else _hits_level(hits, index)
    if level == "none":
        how = "declares" if provider_level is not None else "has hits that show"
        return RetrievalOutcome(
            None,
            note=f"no retrieval metrics: {provider} {how} no link from a hit to a message or session of the "
            "benchmark (evidence_level 'none')",
        )
    notes = []
    unknown = len(set(evidence_ids) - messages - sessions)
    if unknown:
        notes.append(f"{unknown} evidence id(s) name nothing in the haystack and are left out")
    if evidence_level == "message" and level in ("message", None):
        relevant: set[str] = messages
        ranked = [index.message(h) for h in hits]
        metric_level: MetricLevel = "message"
    else:
        relevant = sessions | {index.session_of[m] for m in messages}
        ranked = [index.session(h) for h in hits]
        metric_level = "session"
        if messages:
            why = (
                "the evidence also names whole sessions"
                if sessions
                else f"{provider}'s hits trace to sessions only"
            )
            notes.append(f"message evidence mapped to its sessions: {why}")
    metrics = retrieval_metrics(ranked, relevant, max(k, len(hits)))
    return RetrievalOutcome(metrics, metric_level, "; ".join(notes) or None)
