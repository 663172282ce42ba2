"""Search hits on disk: the search phase's ``results`` entries, and the retrieval metrics computed from them.

A result entry is ``{"id", "content", "score", "sessionId", "date", "raw"}`` (absent values left out;
``raw`` is the provider's own object when it gave one). ``content`` is a key every reader of MemoryBench
results already understands (``bench_nb.text.hit_text``).

Retrieval metrics use the question's ground-truth evidence ids (LoCoMo dia_ids, LongMemEval
answer_session_ids). A hit is relevant when its id, its session id, or one of the ids the provider lists in
``raw["message_ids"]`` / ``raw["messageIds"]`` is an evidence id. With ``k`` the run's retrieval limit:
``hitAtK`` = 1 if any of the top k hits is relevant; ``precisionAtK`` = relevant hits / k;
``recallAtK`` = evidence ids covered by the top k / evidence ids; ``f1AtK`` their harmonic mean;
``mrr`` = 1 / rank of the first relevant hit; ``ndcg`` = DCG / ideal DCG with gain 1 for a hit that covers
an evidence id no earlier hit covered (so repeats of one piece of evidence are not rewarded twice), the ideal
ranking min(k, evidence ids) such hits first. Questions without evidence ids get no retrieval metrics.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from bench_nb.memorybench.format import RetrievalMetrics
from bench_nb.records import SearchHit

_encoder = msgspec.json.Encoder()


def hit_to_result(hit: SearchHit) -> dict[str, Any]:
    """The result entry stored for ``hit``."""
    entry: dict[str, Any] = {
        "id": hit.hit_id,
        "content": hit.text,
        "score": hit.score,
        "sessionId": hit.session_id,
        "date": hit.date,
        "raw": hit.raw,
    }
    return {k: v for k, v in entry.items() if v is not None}


def hit_from_result(entry: Any) -> SearchHit:
    """A ``SearchHit`` back from a stored entry (ours, or a plain string)."""
    if not isinstance(entry, dict):
        return SearchHit(text=str(entry))
    score = entry.get("score")
    return SearchHit(
        text=str(entry.get("content", "")),
        score=float(score) if isinstance(score, int | float) else None,
        session_id=entry.get("sessionId"),
        date=entry.get("date"),
        hit_id=entry.get("id"),
        raw=entry.get("raw"),
    )


def encode_results(hits: Sequence[SearchHit]) -> list[msgspec.Raw]:
    return [msgspec.Raw(_encoder.encode(hit_to_result(h))) for h in hits]


def decode_hits(raw: Iterable[msgspec.Raw] | None) -> list[SearchHit]:
    return [hit_from_result(msgspec.json.decode(r)) for r in raw or ()]


def _hit_keys(hit: SearchHit) -> set[str]:
    keys = {x for x in (hit.hit_id, hit.session_id) if x}
    if isinstance(hit.raw, dict):
        for name in ("message_ids", "messageIds"):
            ids = hit.raw.get(name)
            if isinstance(ids, list):
                keys.update(str(i) for i in ids)
    return keys


def retrieval_metrics(
    hits: Sequence[SearchHit], evidence_ids: Sequence[str], k: int
) -> RetrievalMetrics | None:
    """MemoryBench's ``retrievalMetrics`` against ground-truth evidence (None without evidence ids)."""
    evidence = set(evidence_ids)
    if not evidence or k < 1:
        return None
    top = list(hits)[:k]
    covered: set[str] = set()
    flags: list[bool] = []  # relevant hits
    gains: list[bool] = []  # hits that cover an evidence id no earlier hit covered (for nDCG)
    for hit in top:
        found = _hit_keys(hit) & evidence
        flags.append(bool(found))
        gains.append(bool(found - covered))
        covered |= found
    relevant = sum(flags)
    precision = relevant / k
    recall = len(covered) / len(evidence)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    first = next((i for i, f in enumerate(flags) if f), None)
    dcg = sum(1 / math.log2(i + 2) for i, g in enumerate(gains) if g)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(k, len(evidence))))
    return RetrievalMetrics(
        hitAtK=1.0 if relevant else 0.0,
        precisionAtK=precision,
        recallAtK=recall,
        f1AtK=f1,
        mrr=0.0 if first is None else 1 / (first + 1),
        ndcg=dcg / idcg if idcg else 0.0,
        k=k,
        relevantRetrieved=relevant,
        totalRelevant=len(evidence),
    )
