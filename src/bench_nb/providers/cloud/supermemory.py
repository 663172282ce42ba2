"""``supermemory``: Supermemory's hosted API through its official Python SDK (``supermemory`` 5.x).

- a container is a Supermemory *namespace* (``container_name``: letters, digits, ``_`` and ``-``, at most
  100 characters), so two runs never share one;
- ingest adds one document per session (``POST /ns/{namespace}/document``): the session's messages as
  ``speaker: text`` lines, the session date in ``date``, our ids in ``metadata`` (``sessionId``, ``date``,
  ``messageIds``) and the session id as the document's own ``id`` (so a repeated add is the same document);
- await_indexing reads every document (``GET /ns/{namespace}/document/{id}``) until its ``system.status`` is
  ``done`` (and, with ``wait_for_memories``, its ``system.dreamingStatus`` too); ``failed`` fails the
  question;
- search asks for exactly the run's k (``POST /ns/{namespace}/search`` with ``limit`` = k); a hit's text is
  the memory or the chunk, its score Supermemory's ``similarity`` (0 to 1, higher is better), its session and
  date come from the metadata we attached, ``raw`` is the result as returned;
- clear deletes the namespace with everything in it (``DELETE /ns/{namespace}``); one already gone is fine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, Unpack

from bench_nb.errors import ProviderError
from bench_nb.providers.base import EvidenceLevel
from bench_nb.providers.cloud.adapter import CloudProvider, CloudSettings
from bench_nb.providers.cloud.common import container_name, metadata_hit, to_dict, utc_iso
from bench_nb.providers.sqlite import check_k
from bench_nb.records import IngestResult, SearchHit, Session

MAX_NAME = 100


class SupermemoryProvider(CloudProvider):
    """Supermemory through its SDK; the key comes from ``SUPERMEMORY_API_KEY``.

    Args:
        run_dir: the run directory (nothing is stored there).
        base_url: the API's base URL (default ``$SUPERMEMORY_BASE_URL``, else the SDK's).
        search_mode: ``hybrid`` (memories and chunks, the SDK's default), ``memories`` or ``chunks``.
        threshold: Supermemory's minimum similarity, 0 to 1 (default 0.0: the k best, whatever they score;
            None: Supermemory's own default).
        dreaming: Supermemory's processing mode (``dynamic`` or ``instant``; None: its default).
        wait_for_memories: indexing also waits until memories are formed (``dreamingStatus`` done).
        max_concurrency, max_retries, retry_initial_s, retry_max_s, request_timeout_s, poll_initial_s,
            poll_max_s: see docs/cloud-providers.md.
    """

    name = "supermemory"
    key_env = "SUPERMEMORY_API_KEY"
    url_env = "SUPERMEMORY_BASE_URL"
    evidence_level: EvidenceLevel = "session"  # a memory or chunk of one session's document

    def __init__(
        self,
        run_dir: str | Path,
        *,
        search_mode: str = "hybrid",
        threshold: float | None = 0.0,
        dreaming: str | None = None,
        wait_for_memories: bool = True,
        **settings: Unpack[CloudSettings],
    ) -> None:
        if search_mode not in ("hybrid", "memories", "chunks"):
            raise ProviderError(
                f"supermemory: search_mode must be hybrid, memories or chunks, not {search_mode!r}"
            )
        super().__init__(run_dir, **settings)
        self.search_mode = search_mode
        self.threshold = None if threshold is None else float(threshold)
        self.dreaming = dreaming
        self.wait_for_memories = bool(wait_for_memories)

    def _make_client(self, key: str, http: Any) -> Any:
        from supermemory import Supermemory

        return Supermemory(api_key=key, base_url=self.base_url, httpx_client=http, max_retries=0)

    @staticmethod
    def namespace(container: str) -> str:
        """The Supermemory namespace of a container."""
        return container_name(container, max_len=MAX_NAME)

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        """One document per session, dated; returns the documents' ids."""
        ns, client = self.namespace(container), self.client
        ids: list[str] = []
        for s in sessions:
            if not s.messages:
                continue
            metadata: dict[str, Any] = {"sessionId": s.session_id, "source": "bench_nb"}
            if s.date:
                metadata["date"] = s.date
            message_ids = [m.message_id for m in s.messages if m.message_id]
            if message_ids:
                metadata["messageIds"] = message_ids
            fields: dict[str, Any] = {
                "content": "\n".join(f"{m.role}: {m.content}" for m in s.messages),  # a line per message
                "id": container_name(s.session_id, max_len=MAX_NAME),
                "metadata": metadata,
            }
            date = utc_iso(s.date)
            if date:
                fields["date"] = date
            if self.dreaming:
                fields["dreaming"] = self.dreaming
            ref = self.calls(
                f"adding session {s.session_id} to namespace {ns}", partial(client.add, ns, **fields)
            )
            ids.append(str(ref.id))
        return IngestResult(document_ids=tuple(ids))

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        """Poll every document until processed; a ``failed`` document raises ProviderError."""
        ns, client = self.namespace(container), self.client

        def done(doc_id: str) -> bool:
            doc = self.calls(
                f"reading document {doc_id} of namespace {ns}", partial(client.documents.get, ns, doc_id)
            )
            system = getattr(doc, "system", None)
            status = getattr(system, "status", None)
            if status == "failed":
                session = (getattr(doc, "metadata", None) or {}).get("sessionId", "?")
                raise ProviderError(
                    f"supermemory: document {doc_id} (session {session}) of namespace {ns} failed to process"
                )
            dreaming = getattr(system, "dreaming_status", None)
            return status == "done" and not (self.wait_for_memories and dreaming not in (None, "done"))

        what = f"supermemory: indexing namespace {ns}"
        self.wait_for_each(what, "documents", ingested.document_ids, done, timeout_s)

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        """The top ``k`` memories or chunks (``limit`` = k)."""
        ns, client = self.namespace(container), self.client
        fields: dict[str, Any] = {"query": query, "limit": check_k(k), "search_mode": self.search_mode}
        if self.threshold is not None:
            fields["threshold"] = self.threshold
        response = self.calls(f"searching namespace {ns}", partial(client.search, ns, **fields))
        raws = [to_dict(result) for result in list(getattr(response, "results", None) or [])[:k]]
        return [
            metadata_hit(raw, raw.get("memory") or raw.get("chunk"), raw.get("similarity"), "sessionId")
            for raw in raws
        ]

    def clear(self, container: str) -> None:
        """Delete the container's namespace and everything in it."""
        ns, client = self.namespace(container), self.client
        self.call_unless_gone(f"deleting namespace {ns}", partial(client.namespaces.delete, ns))
