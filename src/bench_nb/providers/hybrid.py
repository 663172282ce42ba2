"""``hybrid``: BM25 (the ``sqlite`` provider's FTS5 index) and embeddings, fused by reciprocal rank fusion.

Needs the optional ``mem0`` extra (for the local embedder, ``bench_nb.providers.embedding``). Each message
is stored as in ``sqlite`` (``<run_dir>/memory/hybrid/``, one file per container) with its embedding
(all-MiniLM-L6-v2 of ``speaker: text``, unit length, float32) in a ``vectors`` table of the same file,
written in the same transaction. A search ranks the container's messages twice, by BM25 and by cosine
similarity to the query's embedding (exact, over every message of the container), takes each ranking's
top ``depth``, and fuses them with reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009):

    score(message) = sum over the two rankings r of 1 / (rrf_k + rank_r(message))

with ranks starting at 1, a message absent from a ranking contributing nothing, and ``rrf_k = 60`` (the
paper's constant; it damps the weight of the very first ranks). ``SearchHit.score`` is that fused score
(higher is better); ``raw`` holds the row plus ``bm25_rank``, ``bm25``, ``vector_rank`` and ``cosine``.
Ties are broken by haystack order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_nb.errors import ProviderError
from bench_nb.providers.embedding import load_embedder
from bench_nb.providers.query import query_terms
from bench_nb.providers.sqlite import SqliteProvider, check_k
from bench_nb.providers.store import MessageRow
from bench_nb.records import IngestResult, SearchHit, Session

RRF_K = 60
DEFAULT_DEPTH = 100

_VECTOR_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)",
    "CREATE TRIGGER IF NOT EXISTS vectors_ad AFTER DELETE ON messages BEGIN"
    " DELETE FROM vectors WHERE id = old.id; END",
)


def embedding_text(row: MessageRow) -> str:
    """What is embedded for a message: ``speaker: text``."""
    return f"{row.speaker}: {row.text}"


class HybridProvider(SqliteProvider):
    """BM25 + embeddings with reciprocal rank fusion.

    Args:
        run_dir: the run directory; the index lives in ``<run_dir>/memory/hybrid/``.
        model_path: a sentence-transformers model directory (default: the bundled all-MiniLM-L6-v2).
        rrf_k: the RRF constant (default 60).
        depth: how many of each ranking's best are fused (default 100; at least ``k`` is always used).
    """

    name = "hybrid"

    def __init__(
        self,
        run_dir: str | Path,
        *,
        model_path: str | Path | None = None,
        rrf_k: int = RRF_K,
        depth: int = DEFAULT_DEPTH,
    ) -> None:
        super().__init__(run_dir)
        self.rrf_k = int(rrf_k)
        self.depth = int(depth)
        if self.rrf_k < 0 or self.depth < 1:
            raise ProviderError(f"hybrid: rrf_k must be >= 0 and depth >= 1, got {rrf_k!r} and {depth!r}")
        self.embedder = load_embedder(model_path)

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        """Store the messages and their embeddings in one transaction (replacing those sessions' rows)."""
        rows = self.store.ingest(container, sessions, also=self._store_vectors)
        return IngestResult(document_ids=tuple(r.message_id for r in rows))

    def _store_vectors(self, conn: sqlite3.Connection, rows: list[MessageRow]) -> None:
        for statement in _VECTOR_SCHEMA:
            conn.execute(statement)
        vectors = self.embedder.encode([embedding_text(r) for r in rows])
        conn.executemany(
            "INSERT OR REPLACE INTO vectors (id, embedding) VALUES (?, ?)",
            [(r.id, v.tobytes()) for r, v in zip(rows, vectors, strict=True)],
        )

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        """The ``k`` best messages by fused rank; [] for a query with no word in it."""
        check_k(k)
        depth = max(self.depth, k)
        bm25 = self.ranked(container, query, depth)
        if not query_terms(query):
            return []
        vector = self._vector_ranking(container, query, depth)
        fused: dict[int, float] = {}
        info: dict[int, dict[str, Any]] = {}
        for rank, (row, score) in enumerate(bm25, start=1):
            fused[row.id] = fused.get(row.id, 0.0) + 1.0 / (self.rrf_k + rank)
            info.setdefault(row.id, {}).update(bm25_rank=rank, bm25=score)
        for rank, (row_id, cosine) in enumerate(vector, start=1):
            fused[row_id] = fused.get(row_id, 0.0) + 1.0 / (self.rrf_k + rank)
            info.setdefault(row_id, {}).update(vector_rank=rank, cosine=cosine)
        rows = {row.id: row for row, _ in bm25}
        rows.update(self.store.rows_by_id(container, [i for i in fused if i not in rows]))
        order = sorted(fused, key=lambda i: (-fused[i], rows[i].session_index, rows[i].position, i))
        hits = []
        for row_id in order[:k]:
            hit = rows[row_id].to_hit(fused[row_id])
            assert hit.raw is not None
            hit.raw.update(info[row_id])
            hits.append(hit)
        return hits

    def _vector_ranking(self, container: str, query: str, depth: int) -> list[tuple[int, float]]:
        """(row id, cosine) of the ``depth`` messages closest to the query, closest first."""
        import numpy as np

        with self.store.connect(container) as conn:
            try:
                stored = conn.execute("SELECT id, embedding FROM vectors ORDER BY id").fetchall()
            except sqlite3.OperationalError:  # an empty container never created the table
                stored = []
        if not stored:
            return []
        ids = np.fromiter((r[0] for r in stored), dtype=np.int64, count=len(stored))
        matrix = np.frombuffer(b"".join(r[1] for r in stored), dtype=np.float32).reshape(len(stored), -1)
        q = self.embedder.encode([query])[0]
        if matrix.shape[1] != q.shape[0]:
            raise ProviderError(
                f"hybrid: container {container!r} was embedded with {matrix.shape[1]} dimensions, the model "
                f"gives {q.shape[0]}: re-ingest it with the model it was built with"
            )
        cosines = matrix @ q
        top = np.argsort(-cosines, kind="stable")[:depth]
        return [(int(ids[i]), float(cosines[i])) for i in top]
