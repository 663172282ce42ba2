"""``mem0``: the hosted Mem0 Platform through ``mem0ai``'s ``MemoryClient`` (the offline open-source Memory
is the separate ``mem0-local`` provider).

- a container is a Mem0 ``user_id`` (``container_name``: letters, digits, ``.``, ``_`` and ``-``, at most 100
  characters), so two runs never share one;
- ingest adds one message batch per session (``POST /v3/memories/add/``): the session's messages (speakers
  other than user/assistant become ``user`` messages starting with the speaker's name), the session date as
  the Unix ``timestamp``, our ids in ``metadata`` (``session_id``, ``date``, ``message_ids``) and ``infer``
  (default true: Mem0 extracts memories, as its users run it). Mem0 queues the work and answers with an
  ``event_id``;
- await_indexing polls every event (``GET /v1/event/{event_id}/``, which the SDK has no method for: the
  request goes through the SDK's own authenticated HTTP client) until ``SUCCEEDED``; ``FAILED`` fails the
  question;
- search asks for exactly the run's k (``POST /v3/memories/search/`` with ``filters={"user_id": ...}`` and
  ``top_k`` = k); a hit's text is the memory, its score Mem0's ``score``, its session and date come from the
  metadata we attached, ``raw`` is the memory as returned;
- clear deletes the user and its memories (``DELETE /v2/entities/user/{user_id}/``); one already gone is fine.

Mem0's anonymous telemetry is switched off before the SDK is imported, and its client's error log is
silenced (this provider raises every error itself, with the retries it made).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, Unpack
from urllib.parse import quote

from bench_nb.errors import ProviderError
from bench_nb.providers.base import EvidenceLevel
from bench_nb.providers.cloud.adapter import CloudProvider, CloudSettings
from bench_nb.providers.cloud.common import (
    chat_role,
    container_name,
    metadata_hit,
    parse_date,
    speaker_line,
)
from bench_nb.providers.sqlite import check_k
from bench_nb.providers.switches import mem0_telemetry_off
from bench_nb.records import IngestResult, SearchHit, Session

MAX_NAME = 100


def _import_client() -> Any:
    mem0_telemetry_off()  # before mem0 is imported: it reads the variable then
    import mem0.memory.telemetry  # noqa: F401  (its flag and client, switched off below)
    from mem0.client.main import MemoryClient

    # The SDK logs every HTTP error it raises; we report them ourselves (with retries counted).
    logging.getLogger("mem0.client.utils").setLevel(logging.CRITICAL)

    mem0_telemetry_off()  # the module flag and client too, in case mem0 was imported before
    return MemoryClient


def _event_ids(response: Any) -> list[str]:
    """The event ids of an add: ``{"event_id": ...}`` (v3), or one per item of ``{"results": [...]}``."""
    if not isinstance(response, dict):
        return []
    items = [response, *(r for r in response.get("results") or [] if isinstance(r, dict))]
    return [str(item["event_id"]) for item in items if item.get("event_id")]


class Mem0PlatformProvider(CloudProvider):
    """The Mem0 Platform through ``MemoryClient``; the key comes from ``MEM0_API_KEY``.

    Args:
        run_dir: the run directory (nothing is stored there).
        base_url: the API's base URL (default ``$MEM0_BASE_URL``, else the SDK's ``https://api.mem0.ai``).
        infer: let Mem0 extract memories (True, its default) or store the messages as they are (False).
        threshold: Mem0's minimum score (default 0.0: the k best, whatever they score; None: Mem0's default).
        max_concurrency, max_retries, retry_initial_s, retry_max_s, request_timeout_s, poll_initial_s,
            poll_max_s: see docs/cloud-providers.md.
    """

    name = "mem0"
    key_env = "MEM0_API_KEY"
    url_env = "MEM0_BASE_URL"
    evidence_level: EvidenceLevel = "session"  # a memory Mem0 made from one session's add

    def __init__(
        self,
        run_dir: str | Path,
        *,
        infer: bool = True,
        threshold: float | None = 0.0,
        **settings: Unpack[CloudSettings],
    ) -> None:
        super().__init__(run_dir, **settings)
        self.infer = bool(infer)
        self.threshold = None if threshold is None else float(threshold)

    def _make_client(self, key: str, http: Any) -> Any:
        memory_client = _import_client()
        # The constructor checks the key with GET /v1/ping/.
        return self.calls(
            "checking the API key", lambda: memory_client(api_key=key, host=self.base_url, client=http)
        )

    @staticmethod
    def user_id(container: str) -> str:
        """The Mem0 user id of a container."""
        return container_name(container, max_len=MAX_NAME, allowed="A-Za-z0-9._-")

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        """One add per session, dated; returns the events to wait for as task ids."""
        uid, client = self.user_id(container), self.client
        events: list[str] = []
        for s in sessions:
            if not s.messages:
                continue
            messages = [
                {"role": chat_role(m.role), "content": speaker_line(m.role, m.content)} for m in s.messages
            ]
            metadata: dict[str, Any] = {"session_id": s.session_id}
            if s.date:
                metadata["date"] = s.date
            message_ids = [m.message_id for m in s.messages if m.message_id]
            if message_ids:
                metadata["message_ids"] = message_ids
            fields: dict[str, Any] = {"user_id": uid, "metadata": metadata, "infer": self.infer}
            date = parse_date(s.date)
            if date is not None:
                fields["timestamp"] = int(date.timestamp())
            response = self.calls(
                f"adding session {s.session_id} for user {uid}", partial(client.add, messages, **fields)
            )
            events.extend(_event_ids(response))
        return IngestResult(task_ids=tuple(events))

    def _event(self, event_id: str) -> dict[str, Any]:
        response = self.client.client.get(f"/v1/event/{quote(event_id, safe='')}/")
        response.raise_for_status()
        body = response.json()
        return body if isinstance(body, dict) else {}

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        """Poll every add's event until ``SUCCEEDED``; a ``FAILED`` event raises ProviderError."""
        uid = self.user_id(container)

        def done(event_id: str) -> bool:
            event = self.calls(f"reading event {event_id}", partial(self._event, event_id))
            status = str(event.get("status", "")).upper()
            if status == "FAILED":
                detail = event.get("error") or event.get("message") or "no reason given"
                raise ProviderError(
                    f"mem0: adding memories for user {uid} failed (event {event_id}): {detail}"
                )
            return status == "SUCCEEDED"

        what = f"mem0: processing memories of user {uid}"
        self.wait_for_each(what, "events", ingested.task_ids, done, timeout_s)

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        """The top ``k`` memories of the container's user (``top_k`` = k)."""
        uid, client = self.user_id(container), self.client
        fields: dict[str, Any] = {"filters": {"user_id": uid}, "top_k": check_k(k)}
        if self.threshold is not None:
            fields["threshold"] = self.threshold
        response = self.calls(f"searching memories of user {uid}", partial(client.search, query, **fields))
        results = response.get("results", []) if isinstance(response, dict) else response
        return [
            metadata_hit(raw, raw.get("memory"), raw.get("score"), "session_id")
            for raw in list(results or [])[:k]
            if isinstance(raw, dict)
        ]

    def clear(self, container: str) -> None:
        """Delete the container's user and its memories."""
        uid, client = self.user_id(container), self.client
        self.call_unless_gone(f"deleting user {uid}", partial(client.delete_users, user_id=uid))
