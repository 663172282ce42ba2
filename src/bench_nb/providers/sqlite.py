"""``sqlite``: the embedded default provider, SQLite FTS5 with BM25 ranking, on disk in the run directory.

Every message is one row (see ``bench_nb.providers.store``), in ``<run_dir>/memory/sqlite/``, one file per
container, so a resumed run searches the index the first attempt built. A question is turned into an OR of
its words (``bench_nb.providers.query``); hits come back best first.

Score sign: FTS5's ``bm25()`` returns the BM25 score negated (lower is better). ``SearchHit.score`` is
``-bm25()``: the BM25 score itself, positive, higher is better, comparable only within one container.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench_nb.errors import ProviderError
from bench_nb.providers.base import EvidenceLevel
from bench_nb.providers.query import fts5_query
from bench_nb.providers.store import MessageRow, MessageStore
from bench_nb.records import IngestResult, SearchHit, Session


def check_k(k: int) -> int:
    """The run's retrieval limit, checked (a positive integer); providers never change it."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ProviderError(f"the retrieval limit k must be a positive integer, got {k!r}")
    return k


class SqliteProvider:
    """SQLite FTS5 + BM25 over the messages of each container.

    Args:
        run_dir: the run directory; the index lives in ``<run_dir>/memory/<name>/``.
    """

    name = "sqlite"
    evidence_level: EvidenceLevel = "message"  # a hit is one stored message, its id the dataset's
    reports_usage = True  # calls no model: its memory-side cost is known to be 0 (providers.usage)

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.store = MessageStore(self.run_dir / "memory" / self.name)

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        """Store every message of ``sessions`` (replacing those sessions' earlier rows); returns their ids."""
        rows = self.store.ingest(container, sessions)
        return IngestResult(document_ids=tuple(r.message_id for r in rows))

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        """Nothing to wait for (the index is updated in the ingest transaction); checks the rows are there."""
        count = self.store.count(container)
        if count < len(ingested.document_ids):
            raise ProviderError(
                f"container {container!r} holds {count} messages, {len(ingested.document_ids)} were ingested"
            )

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        """The ``k`` best messages by BM25 (``score`` = BM25 score, higher is better); [] for a query with no
        word in it."""
        return [row.to_hit(score) for row, score in self.ranked(container, query, check_k(k))]

    def ranked(self, container: str, query: str, limit: int) -> list[tuple[MessageRow, float]]:
        """The ``limit`` best rows with their BM25 scores (positive, higher is better)."""
        match = fts5_query(query)
        if match is None:
            self.store.check(container)
            return []
        return [(row, -rank) for row, rank in self.store.bm25(container, match, limit)]

    def clear(self, container: str) -> None:
        """Delete the container's index file."""
        self.store.clear(container)
