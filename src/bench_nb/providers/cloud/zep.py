"""``zep``: Zep Cloud through its official Python SDK (``zep-cloud`` 4.x, API v4).

- a container is a Zep *user* whose developer-assigned ``user_id`` is the container name (``container_name``:
  letters, digits, ``.``, ``_`` and ``-``, at most 200 characters), so two runs never share one; Zep
  addresses it by the ``uuid`` it assigns, found again with ``POST /users/lookup``;
- ingest creates the user (``POST /users``) and one thread per session (``POST /threads``), and adds the
  session's messages in batches of ``batch_size`` (``POST /threads/{uuid}/messages``): each message with
  its speaker as ``name``, the message's time (else the session date) as ``reference_time`` and our ids in
  ``metadata`` (``session_id``, ``message_id``, ``date``). Every POST carries an idempotency key that is
  reused when the call is retried, so a retry never adds a message twice. Zep answers with a task per batch;
- await_indexing polls every task (``GET /tasks/{uuid}``) until ``succeeded``; ``failed`` or ``partial``
  fails the question;
- search asks for exactly the run's k from the user's graph: ``scope="edges"`` (default: the facts Zep
  extracted, ``POST /graphs/{uuid}/search/edges?page_size=k``; a hit's date is the fact's ``valid_at``) or
  ``scope="episodes"`` (the stored messages, ``.../search/episodes``; a hit's id is our message id, so
  retrieval metrics work at message level). The score is Zep's ``score``; ``raw`` is the item as returned;
- clear deletes the user (``DELETE /users/{uuid}``: its threads, messages and graph go with it) and waits for
  the deletion task; a user already gone is fine.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, Unpack

from bench_nb.errors import ProviderError
from bench_nb.providers.base import EvidenceLevel
from bench_nb.providers.cloud.adapter import CloudProvider, CloudSettings
from bench_nb.providers.cloud.common import (
    chat_role,
    container_name,
    speaker_line,
    to_dict,
    utc_iso,
)
from bench_nb.providers.sqlite import check_k
from bench_nb.records import IngestResult, SearchHit, Session

MAX_NAME = 200
SCOPES = ("edges", "episodes")


def _key() -> str:
    """A fresh idempotency key for one logical write (reused by that write's retries)."""
    return f"bench_nb-{uuid.uuid4().hex}"


class ZepProvider(CloudProvider):
    """Zep Cloud through its SDK; the key comes from ``ZEP_API_KEY``.

    Args:
        run_dir: the run directory (nothing is stored there).
        base_url: the API's base URL including ``/api/v4`` (default ``$ZEP_BASE_URL``, else the SDK's
            ``https://api.getzep.com/api/v4``).
        scope: what search returns: ``edges`` (facts) or ``episodes`` (messages).
        reranker: Zep's reranker (``rrf``, ``mmr``, ``cross_encoder``, ...; None: Zep's default, rrf).
        batch_size: messages per ``add_messages`` call.
        clear_timeout_s: how long ``clear`` waits for Zep to finish deleting a user.
        max_concurrency, max_retries, retry_initial_s, retry_max_s, request_timeout_s, poll_initial_s,
            poll_max_s: see docs/cloud-providers.md.
    """

    name = "zep"
    key_env = "ZEP_API_KEY"
    url_env = "ZEP_BASE_URL"
    evidence_level: EvidenceLevel = "none"  # a fact of Zep's graph (scope=edges); "message" with episodes

    def __init__(
        self,
        run_dir: str | Path,
        *,
        scope: str = "edges",
        reranker: str | None = None,
        batch_size: int = 30,
        clear_timeout_s: float = 120.0,
        **settings: Unpack[CloudSettings],
    ) -> None:
        if scope not in SCOPES:
            raise ProviderError(f"zep: scope must be one of {', '.join(SCOPES)}, not {scope!r}")
        if batch_size < 1:
            raise ProviderError(f"zep: batch_size must be at least 1, not {batch_size}")
        super().__init__(run_dir, **settings)
        self.scope = scope
        self.evidence_level = "message" if scope == "episodes" else "none"
        self.reranker = reranker
        self.batch_size = int(batch_size)
        self.clear_timeout_s = float(clear_timeout_s)
        self._uuids: dict[str, str] = {}
        self._uuids_lock = threading.Lock()

    def _make_client(self, key: str, http: Any) -> Any:
        from zep_cloud import Zep

        return Zep(api_key=key, base_url=self.base_url, httpx_client=http, max_retries=0)

    @staticmethod
    def user_id(container: str) -> str:
        """The Zep ``user_id`` of a container."""
        return container_name(container, max_len=MAX_NAME, allowed="A-Za-z0-9._-")

    # -- users ------------------------------------------------------------------------------------------

    def _lookup(self, uid: str) -> str | None:
        user = self.call_unless_gone(f"looking up user {uid}", partial(self.client.user.lookup, user_id=uid))
        return str(user.uuid_) if getattr(user, "uuid_", None) else None

    def _user_uuid(self, uid: str, *, create: bool) -> str:
        with self._uuids_lock:
            known = self._uuids.get(uid)
        if known:
            return known
        found = self._lookup(uid)
        if found is None and create:
            user = self.calls(
                f"creating user {uid}",
                partial(
                    self.client.user.create,
                    user_id=uid,
                    metadata={"source": "bench_nb"},
                    idempotency_key=_key(),
                ),
            )
            found = str(user.uuid_)
        if found is None:
            raise ProviderError(f"zep: there is no user {uid!r} (was its container ingested?)")
        with self._uuids_lock:
            self._uuids[uid] = found
        return found

    # -- the protocol -----------------------------------------------------------------------------------

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        """A thread per session, its messages in batches; returns the threads and the tasks to wait for."""
        from zep_cloud import AddMessage

        uid, client = self.user_id(container), self.client
        user_uuid = self._user_uuid(uid, create=True)
        threads: list[str] = []
        tasks: list[str] = []
        for s in sessions:
            if not s.messages:
                continue
            thread = self.calls(
                f"creating the thread of session {s.session_id}",
                partial(client.thread.create, user_uuid=user_uuid, idempotency_key=_key()),
            )
            thread_uuid = str(thread.uuid_)
            threads.append(thread_uuid)
            for start in range(0, len(s.messages), self.batch_size):
                batch = s.messages[start : start + self.batch_size]
                messages = []
                for m in batch:
                    metadata = {"session_id": s.session_id, "message_id": m.message_id, "date": s.date}
                    fields: dict[str, Any] = {
                        "content": m.content,
                        "role": chat_role(m.role),
                        "metadata": {k: v for k, v in metadata.items() if v},
                    }
                    if m.role not in ("user", "assistant"):
                        fields["name"] = m.role
                    when = utc_iso(m.timestamp or s.date)
                    if when:
                        fields["reference_time"] = when
                    messages.append(AddMessage(**fields))
                result = self.calls(
                    f"adding messages {start + 1}-{start + len(batch)} of session {s.session_id}",
                    partial(
                        client.thread.add_messages, thread_uuid, messages=messages, idempotency_key=_key()
                    ),
                )
                task = getattr(result, "task", None)
                if task is not None and getattr(task, "uuid_", None):
                    tasks.append(str(task.uuid_))
        return IngestResult(document_ids=tuple(threads), task_ids=tuple(tasks))

    def _wait_tasks(self, what: str, task_ids: Sequence[str], timeout_s: float) -> None:
        client = self.client

        def done(task_id: str) -> bool:
            task = self.calls(f"reading task {task_id}", partial(client.task.get, task_id))
            status = getattr(task, "status", None)
            if status in ("failed", "partial"):
                error = getattr(task, "error", None)
                reason = getattr(error, "message", None) or "no reason given"
                raise ProviderError(f"zep: {what}: task {task_id} ended {status}: {reason}")
            return status == "succeeded"

        self.wait_for_each(f"zep: {what}", "tasks", task_ids, done, timeout_s)

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        """Poll every add's task until ``succeeded``; ``failed`` or ``partial`` raises ProviderError."""
        self._wait_tasks(
            f"indexing the graph of user {self.user_id(container)}", ingested.task_ids, timeout_s
        )

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        """The top ``k`` edges (facts) or episodes (messages) of the user's graph (``page_size`` = k)."""
        uid, client = self.user_id(container), self.client
        graph = self._user_uuid(uid, create=False)  # a user's graph is addressed by the user's uuid
        method = client.graph.search_edges if self.scope == "edges" else client.graph.search_episodes
        fields: dict[str, Any] = {"query": query, "page_size": check_k(k)}
        if self.reranker:
            fields["reranker"] = self.reranker
        page = self.calls(f"searching the {self.scope} of user {uid}", partial(method, graph, **fields))
        hits = []
        for item in list(getattr(page, "items", None) or [])[:k]:
            raw = to_dict(item)
            score = raw.get("score")
            score = float(score) if isinstance(score, int | float) else None
            if self.scope == "edges":
                hit = SearchHit(
                    text=str(raw.get("fact") or ""),
                    score=score,
                    date=raw.get("valid_at"),
                    hit_id=raw.get("uuid"),
                    raw=raw,
                )
            else:
                meta = raw.get("metadata") or {}
                speaker = raw.get("role_name") or raw.get("role") or "user"
                hit = SearchHit(
                    text=speaker_line(str(speaker), str(raw.get("content") or "")),
                    score=score,
                    session_id=meta.get("session_id"),
                    date=meta.get("date") or raw.get("reference_time"),
                    hit_id=meta.get("message_id") or raw.get("uuid"),
                    raw=raw,
                )
            hits.append(hit)
        return hits

    def clear(self, container: str) -> None:
        """Delete the container's user (with its threads, messages and graph) and wait until Zep has."""
        uid, client = self.user_id(container), self.client
        with self._uuids_lock:
            self._uuids.pop(uid, None)
        found = self._lookup(uid)
        if found is None:
            return
        result = self.call_unless_gone(
            f"deleting user {uid}", partial(client.user.delete, found, idempotency_key=_key())
        )
        task = getattr(result, "task", None)
        if task is not None and getattr(task, "uuid_", None):
            self._wait_tasks(f"deleting user {uid}", [str(task.uuid_)], self.clear_timeout_s)
