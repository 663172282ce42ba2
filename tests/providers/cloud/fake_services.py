"""Fake Supermemory, Mem0 Platform and Zep Cloud APIs: the endpoints our adapters call, in the shapes the
official SDKs document (supermemory 5.x, mem0ai 2.x ``MemoryClient``, zep-cloud 4.x), with indexing that
takes ``polls_to_ready`` status reads and content holding ``FAIL_MARKER`` failing to process.

Relevance is word overlap (``fake_http.overlap``); only processed items are searchable.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from typing import Any

from fake_http import FakeService, Reply, Request, Route, overlap

FAIL_MARKER = "FAIL-THIS-DOCUMENT"
NOW = "2026-01-01T00:00:00Z"


@dataclass
class Job:
    """Something the provider processes in the background: ready after ``polls`` reads of its status."""

    polls: int
    failed: bool = False
    reads: int = 0

    def read(self) -> str:
        """One status read: ``pending``, ``running``, ``done`` or ``failed``."""
        self.reads += 1
        if self.reads >= self.polls:
            return "failed" if self.failed else "done"
        return "pending" if self.reads == 1 else "running"

    @property
    def done(self) -> bool:
        return self.reads >= self.polls and not self.failed


def _ranked(
    query: str, items: list[tuple[str, Any]], limit: int, threshold: float = 0.0
) -> list[tuple[float, Any]]:
    scored = [(overlap(query, text), item) for text, item in items]
    scored = [(s, i) for s, i in scored if s >= threshold]
    scored.sort(key=lambda p: -p[0])  # stable: ties keep insertion order
    return scored[:limit]


# -- Supermemory -------------------------------------------------------------------------------------------


@dataclass
class SmDocument:
    id: str
    content: str
    metadata: dict[str, Any]
    date: str | None
    job: Job


class FakeSupermemory(FakeService):
    """``/ns/{namespace}/document``, ``/ns/{namespace}/document/{id}``, ``/ns/{namespace}/search`` and
    ``DELETE /ns/{namespace}``, with ``Authorization: Bearer <key>``."""

    auth = "Bearer"

    def __init__(self, key: str = "sm-test-key-123456", *, polls_to_ready: int = 3, **kw: Any) -> None:
        self.polls_to_ready = polls_to_ready
        self.namespaces: dict[str, dict[str, SmDocument]] = {}
        super().__init__(key, **kw)

    def routes(self) -> list[Route]:
        return [
            ("POST", r"/ns/([^/]+)/document", self.add),
            ("GET", r"/ns/([^/]+)/document/([^/]+)", self.get),
            ("POST", r"/ns/([^/]+)/search", self.search),
            ("DELETE", r"/ns/([^/]+)", self.delete),
        ]

    def add(self, req: Request, ns: str) -> Reply:
        content = self.require(req.body, "content", str)
        for name, kind in (("id", str), ("date", str), ("metadata", dict)):
            if name in req.body:
                self.require(req.body, name, kind)
        for key, value in (req.body.get("metadata") or {}).items():
            if not (
                isinstance(value, str | int | float | bool)
                or (isinstance(value, list) and all(isinstance(v, str) for v in value))
            ):
                self.reject(f"metadata {key!r} must be a string, number, boolean or list of strings")
        docs = self.namespaces.setdefault(ns, {})
        doc_id = req.body.get("id") or f"doc_{uuid.uuid4().hex[:10]}"
        old = docs.get(doc_id)
        if old is not None and old.content == content:
            return 200, {"id": doc_id, "status": "done" if old.job.done else "queued"}
        job = Job(self.polls_to_ready, failed=FAIL_MARKER in content)
        docs[doc_id] = SmDocument(
            doc_id, content, dict(req.body.get("metadata") or {}), req.body.get("date"), job
        )
        return 200, {"id": doc_id, "status": "queued"}

    def get(self, req: Request, ns: str, doc_id: str) -> Reply:
        doc = self.namespaces.get(ns, {}).get(doc_id)
        if doc is None:
            return 404, {"error": "Document not found"}
        state = doc.job.read()
        status = {"pending": "queued", "running": "embedding", "done": "done", "failed": "failed"}[state]
        system = {
            "status": status,
            "dreamingStatus": "done" if state == "done" else "dreaming",
            "createdAt": NOW,
            "updatedAt": NOW,
        }
        return 200, {
            "id": doc.id,
            "type": "text",
            "metadata": doc.metadata,
            "system": system,
            "content": doc.content,
        }

    def search(self, req: Request, ns: str) -> Reply:
        query = self.require(req.body, "query", str)
        limit = self.require(req.body, "limit", int)
        mode = req.body.get("searchMode", "hybrid")
        if mode not in ("hybrid", "memories", "chunks"):
            self.reject(f"unknown searchMode {mode!r}")
        threshold = float(req.body.get("threshold") or 0.0)
        chunks = [
            (line, (doc, i, line))
            for doc in self.namespaces.get(ns, {}).values()
            if doc.job.done
            for i, line in enumerate(doc.content.splitlines())
        ]
        results = [
            {
                "id": f"{doc.id}#chunk{i}",
                "chunk": line,
                "metadata": doc.metadata,
                "similarity": round(score, 4),
                "isLatest": True,
                "isInference": False,
                "system": {"updatedAt": NOW, "createdAt": NOW},
            }
            for score, (doc, i, line) in _ranked(query, chunks, limit, threshold)
        ]
        return 200, {"results": results, "searchTime": 3.5}

    def delete(self, req: Request, ns: str) -> Reply:
        docs = self.namespaces.pop(ns, None)
        if docs is None:
            return 404, {"error": "Namespace not found"}
        return 200, {
            "status": "deleted",
            "namespace": ns,
            "deletedDocumentsCount": len(docs),
            "deletedMemoriesCount": 0,
        }


# -- Mem0 Platform -----------------------------------------------------------------------------------------


@dataclass
class Mem0Event:
    id: str
    user_id: str
    memories: list[dict[str, Any]]
    job: Job


class FakeMem0(FakeService):
    """``GET /v1/ping/``, ``POST /v3/memories/add/``, ``GET /v1/event/{id}/``, ``POST /v3/memories/search/``
    and ``DELETE /v2/entities/user/{user_id}/``, with ``Authorization: Token <key>``."""

    auth = "Token"

    def __init__(self, key: str = "m0-test-key-123456", *, polls_to_ready: int = 3, **kw: Any) -> None:
        self.polls_to_ready = polls_to_ready
        self.events: dict[str, Mem0Event] = {}
        self.users: dict[str, list[Mem0Event]] = {}
        super().__init__(key, **kw)

    def routes(self) -> list[Route]:
        return [
            ("GET", r"/v1/ping/", self.ping),
            ("POST", r"/v3/memories/add/", self.add),
            ("GET", r"/v1/event/([^/]+)/", self.event),
            ("POST", r"/v3/memories/search/", self.search),
            ("DELETE", r"/v2/entities/user/([^/]+)/", self.delete_user),
        ]

    def ping(self, req: Request) -> Reply:
        return 200, {"status": "ok", "org_id": "org_test", "project_id": "proj_test", "user_email": None}

    def add(self, req: Request) -> Reply:
        messages = self.require(req.body, "messages", list)
        for m in messages:
            if (
                not isinstance(m, dict)
                or not isinstance(m.get("content"), str)
                or m.get("role") not in ("user", "assistant", "system")
            ):
                self.reject("every message needs a role (user/assistant/system) and a content string")
        if not any(
            isinstance(req.body.get(e), str) and req.body[e]
            for e in ("user_id", "agent_id", "app_id", "run_id")
        ):
            self.reject("at least one entity id (user_id, agent_id, app_id, run_id) is required")
        if "timestamp" in req.body:
            self.require(req.body, "timestamp", int)
        user_id = req.body.get("user_id", "")
        meta = dict(req.body.get("metadata") or {})
        event = Mem0Event(
            f"{uuid.uuid4()}",
            user_id,
            [],
            Job(self.polls_to_ready, failed=any(FAIL_MARKER in m["content"] for m in messages)),
        )
        for m in messages:
            event.memories.append(
                {
                    "id": f"{uuid.uuid4()}",
                    "memory": m["content"],
                    "user_id": user_id,
                    "metadata": meta,
                    "categories": [],
                    "created_at": NOW,
                    "updated_at": NOW,
                }
            )
        self.events[event.id] = event
        self.users.setdefault(user_id, []).append(event)
        return 200, {
            "message": "Memory processing has been queued for background execution",
            "status": "PENDING",
            "event_id": event.id,
        }

    def event(self, req: Request, event_id: str) -> Reply:
        event = self.events.get(event_id)
        if event is None:
            return 404, {"detail": "Event not found"}
        state = event.job.read()
        status = {"pending": "PENDING", "running": "RUNNING", "done": "SUCCEEDED", "failed": "FAILED"}[state]
        body = {
            "id": event.id,
            "event_type": "ADD",
            "status": status,
            "payload": {},
            "metadata": {},
            "results": event.memories if state == "done" else [],
            "created_at": NOW,
            "updated_at": NOW,
            "latency": 120,
        }
        return 200, body

    def search(self, req: Request) -> Reply:
        query = self.require(req.body, "query", str)
        filters = self.require(req.body, "filters", dict)
        if not isinstance(filters.get("user_id"), str):
            self.reject("search filters need a user_id")
        top_k = self.require(req.body, "top_k", int)
        threshold = float(req.body.get("threshold") if req.body.get("threshold") is not None else 0.3)
        memories = [
            (m["memory"], m) for e in self.users.get(filters["user_id"], []) if e.job.done for m in e.memories
        ]
        return 200, {
            "results": [{**m, "score": round(s, 4)} for s, m in _ranked(query, memories, top_k, threshold)]
        }

    def delete_user(self, req: Request, user_id: str) -> Reply:
        events = self.users.pop(user_id, None)
        if events is None:
            return 404, {"detail": "Entity not found"}
        for e in events:
            self.events.pop(e.id, None)
        return 200, {"message": "Entity deleted successfully!"}


# -- Zep Cloud ---------------------------------------------------------------------------------------------


@dataclass
class ZepUser:
    uuid: str
    user_id: str
    metadata: dict[str, Any]
    threads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # thread uuid -> episodes

    def body(self) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "user_id": self.user_id,
            "graph_uuid": f"graph-{self.uuid}",
            "metadata": self.metadata,
            "created_at": NOW,
        }


class FakeZep(FakeService):
    """Zep's v4 API under ``/api/v4``: users (create, lookup, delete), threads, messages, tasks and graph
    search (edges, episodes), with ``Authorization: Api-Key <key>`` and an ``Idempotency-Key`` on every POST
    (a repeated key replays the first answer)."""

    auth = "Api-Key"
    prefix = "/api/v4"

    def __init__(self, key: str = "zep-test-key-123456", *, polls_to_ready: int = 3, **kw: Any) -> None:
        self.polls_to_ready = polls_to_ready
        self.users: dict[str, ZepUser] = {}  # uuid -> user
        self.tasks: dict[str, tuple[Job, dict[str, Any], Any]] = {}  # uuid -> (job, task body, on success)
        self.replies: dict[str, Reply] = {}  # idempotency key -> first answer
        self._ids = itertools.count(1)
        super().__init__(key, **kw)

    def routes(self) -> list[Route]:
        return [
            ("POST", r"/users/lookup", self.lookup),
            ("POST", r"/users", self.idempotent(self.create_user)),
            ("DELETE", r"/users/([^/]+)", self.delete_user),
            ("POST", r"/threads", self.idempotent(self.create_thread)),
            ("POST", r"/threads/([^/]+)/messages", self.idempotent(self.add_messages)),
            ("GET", r"/tasks/([^/]+)", self.task),
            ("POST", r"/graphs/([^/]+)/search/(edges|episodes)", self.search),
        ]

    def idempotent(self, handler: Any) -> Any:
        def wrapped(req: Request, *args: str) -> Reply:
            key = req.headers.get("idempotency-key")
            if not key:
                self.reject("a POST needs an Idempotency-Key header")
            if key in self.replies:
                return self.replies[key]
            reply = handler(req, *args)
            self.replies[key] = reply
            return reply

        return wrapped

    def _user(self, ref: str) -> ZepUser | None:
        return self.users.get(ref) or next((u for u in self.users.values() if f"graph-{u.uuid}" == ref), None)

    def _task(self, kind: str, on_success: Any = None, failed: bool = False) -> dict[str, Any]:
        task_id = f"task-{next(self._ids)}"
        body = {"uuid": task_id, "status": "pending", "type": kind, "created_at": NOW}
        self.tasks[task_id] = (Job(self.polls_to_ready, failed=failed), body, on_success)
        return body

    def create_user(self, req: Request) -> Reply:
        user_id = self.require(req.body, "user_id", str)
        if any(u.user_id == user_id for u in self.users.values()):
            return 409, {"error": {"code": "conflict", "message": f"user_id {user_id} already exists"}}
        user = ZepUser(f"user-{next(self._ids)}", user_id, dict(req.body.get("metadata") or {}))
        self.users[user.uuid] = user
        return 201, user.body()

    def lookup(self, req: Request) -> Reply:
        user_id = self.require(req.body, "user_id", str)
        user = next((u for u in self.users.values() if u.user_id == user_id), None)
        if user is None:
            return 404, {"error": {"code": "not_found", "message": "user not found"}}
        return 200, user.body()

    def delete_user(self, req: Request, user_uuid: str) -> Reply:
        user = self.users.get(user_uuid)
        if user is None:
            return 404, {"error": {"code": "not_found", "message": "user not found"}}
        return 202, {"task": self._task("delete_user", on_success=lambda: self.users.pop(user_uuid, None))}

    def create_thread(self, req: Request) -> Reply:
        user = self.users.get(self.require(req.body, "user_uuid", str))
        if user is None:
            return 404, {"error": {"code": "not_found", "message": "user not found"}}
        thread_uuid = f"thread-{next(self._ids)}"
        user.threads[thread_uuid] = []
        return 201, {
            "uuid": thread_uuid,
            "user_uuid": user.uuid,
            "graph_uuid": f"graph-{user.uuid}",
            "created_at": NOW,
        }

    def add_messages(self, req: Request, thread_uuid: str) -> Reply:
        user = next((u for u in self.users.values() if thread_uuid in u.threads), None)
        if user is None:
            return 404, {"error": {"code": "not_found", "message": "thread not found"}}
        messages = self.require(req.body, "messages", list)
        for m in messages:
            if (
                not isinstance(m, dict)
                or not isinstance(m.get("content"), str)
                or m.get("role") not in ("user", "assistant", "system", "function", "tool")
            ):
                self.reject("every message needs a content string and a role")
            if len(m.get("metadata") or {}) > 10:
                self.reject("message metadata holds at most 10 keys")
        episodes = [
            {
                "uuid": f"episode-{next(self._ids)}",
                "content": m["content"],
                "role": m["role"],
                "role_name": m.get("name"),
                "metadata": m.get("metadata") or {},
                "reference_time": m.get("reference_time") or NOW,
                "thread_uuid": thread_uuid,
                "user_uuid": user.uuid,
                "source": "message",
                "processed": False,
            }
            for m in messages
        ]

        def publish() -> None:
            for e in episodes:
                e["processed"] = True
            user.threads.setdefault(thread_uuid, []).extend(episodes)

        failed = any(FAIL_MARKER in m["content"] for m in messages)
        task = self._task("add_messages", on_success=publish, failed=failed)
        stored = [
            {"uuid": e["uuid"], "content": e["content"], "role": e["role"], "created_at": NOW}
            for e in episodes
        ]
        return 202, {"messages": stored, "task": task}

    def task(self, req: Request, task_id: str) -> Reply:
        entry = self.tasks.get(task_id)
        if entry is None:
            return 404, {"error": {"code": "not_found", "message": "task not found"}}
        job, body, on_success = entry
        was_done = job.reads >= job.polls
        state = job.read()
        status = {"pending": "pending", "running": "processing", "done": "succeeded", "failed": "failed"}[
            state
        ]
        out = {**body, "status": status, "updated_at": NOW}
        if state == "failed":
            out["error"] = {"code": "extraction_failed", "message": "the episode could not be processed"}
        if state == "done" and not was_done and on_success is not None:
            on_success()
        return 200, out

    def search(self, req: Request, graph: str, scope: str) -> Reply:
        user = self._user(graph)
        if user is None:
            return 404, {"error": {"code": "not_found", "message": "graph not found"}}
        query = self.require(req.body, "query", str)
        if "page_size" not in req.query:
            self.reject("page_size (the number of results) is required by our contract")
        page_size = int(req.query["page_size"])
        episodes = [(e["content"], e) for eps in user.threads.values() for e in eps if e["processed"]]
        items = []
        for score, e in _ranked(query, episodes, page_size):
            if scope == "episodes":
                items.append({**e, "score": round(score, 4)})
            else:
                items.append(
                    {
                        "uuid": f"edge-{e['uuid']}",
                        "fact": e["content"],
                        "name": "MENTIONS",
                        "episode_uuids": [e["uuid"]],
                        "valid_at": e["reference_time"],
                        "created_at": NOW,
                        "score": round(score, 4),
                        "graph_uuid": f"graph-{user.uuid}",
                    }
                )
        return 200, {"items": items, "next_cursor": None}
