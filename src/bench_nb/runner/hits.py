"""Search hits on disk: the search phase's ``results`` entries.

A result entry is ``{"id", "content", "score", "sessionId", "date", "raw"}`` (absent values left out;
``raw`` is the provider's own object when it gave one). ``content`` is a key every reader of MemoryBench
results already understands (``bench_nb.text.hit_text``).

Retrieval metrics computed from them are in ``bench_nb.runner.retrieval``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

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
    """Search hits as the stored result entries of a checkpoint's search phase, each encoded once."""
    return [msgspec.Raw(_encoder.encode(hit_to_result(h))) for h in hits]


def decode_hits(raw: Iterable[msgspec.Raw] | None) -> list[SearchHit]:
    """The search hits of a checkpoint's stored result entries (none for None)."""
    return [hit_from_result(msgspec.json.decode(r)) for r in raw or ()]
