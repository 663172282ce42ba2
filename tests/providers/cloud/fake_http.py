"""A small local HTTP service for the cloud-provider tests: 127.0.0.1, an ephemeral port, a bounded number of
requests and a bounded lifetime (it stops by itself), every request recorded, faults injected on demand.

A service subclass lists its routes (method, path pattern, handler). A handler gets the parsed request and
returns ``(status, body)`` or ``(status, body, headers)``; it calls ``reject`` for a request that breaks the
API's documented contract (a missing required field, a wrong type), which answers 400 and records the
violation, so the tests can assert that the SDK calls our adapters make are the documented ones.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "the a an and or of to in on at for is are was were be been did do does what when where who why how "  # noqa: SIM905
    "with as by from that this it its his her their they them she he you your i me my we our not".split()
)


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def overlap(query: str, text: str) -> float:
    """The share of the query's words that ``text`` holds (0 to 1): a stand-in for a provider's relevance."""
    q = words(query)
    return len(q & words(text)) / len(q) if q else 0.0


@dataclass
class Request:
    """One request the service received."""

    method: str
    path: str  # without the service's prefix, percent-decoded
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: Any
    at: float = field(default_factory=time.monotonic)


class Rejected(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int  # 0 = drop the connection without answering
    headers: dict[str, str]
    body: Any
    times: int


Reply = tuple[int, Any] | tuple[int, Any, dict[str, str]]
Route = tuple[str, str, Callable[..., Reply]]


class FakeService:
    """Base of the fake provider APIs (see the module docstring).

    Args:
        key: the API key the service accepts; ``auth`` the Authorization scheme (``Bearer``, ``Token``, ...).
        prefix: a path prefix every route sits under (Zep's ``/api/v4``).
        delay_s: how long every answer takes (to make concurrent requests overlap).
        max_requests: the service stops after this many requests.
        lifetime_s: the service stops after this long, whatever happens.
    """

    auth = "Bearer"
    prefix = ""

    def __init__(
        self,
        key: str = "test-key-123456",
        *,
        delay_s: float = 0.0,
        max_requests: int = 20_000,
        lifetime_s: float = 300.0,
    ) -> None:
        self.key = key
        self.delay_s = delay_s
        self.max_requests = max_requests
        self.lifetime_s = lifetime_s
        self.requests: list[Request] = []
        self.violations: list[str] = []
        self.faults: list[Fault] = []
        self.lock = threading.RLock()
        self.in_flight = 0
        self.max_in_flight = 0
        self._server: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None
        self._routes = [(m, re.compile(p), h) for m, p, h in self.routes()]

    # -- what subclasses provide ------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        raise NotImplementedError

    # -- life -------------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None, "start the service first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.prefix}"

    def start(self) -> FakeService:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall between

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _handle(self) -> None:
                service._dispatch(self)

            do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if self._timer is not None:
            self._timer.cancel()
        if server is not None:
            threading.Thread(target=lambda: (server.shutdown(), server.server_close()), daemon=True).start()

    def __enter__(self) -> FakeService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- faults and records -----------------------------------------------------------------------------

    def inject(
        self,
        method: str,
        pattern: str,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        body: Any = None,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` requests matching ``method`` and ``pattern`` (a regex searched in the
        path) with ``status`` (0: drop the connection) instead of serving them."""
        with self.lock:
            self.faults.append(Fault(method, re.compile(pattern), status, headers or {}, body, times))

    def calls(self, method: str, pattern: str) -> list[Request]:
        """The recorded requests matching ``method`` and ``pattern`` (searched in the path)."""
        rx = re.compile(pattern)
        with self.lock:
            return [r for r in self.requests if r.method == method and rx.search(r.path)]

    def reject(self, message: str, status: int = 400) -> None:
        """Answer 400 (or ``status``) and record ``message`` as a contract violation."""
        raise Rejected(status, message)

    def require(self, body: Any, name: str, kind: type | tuple[type, ...], *, non_empty: bool = True) -> Any:
        """``body[name]``, rejecting a missing field, a wrong type, or (``non_empty``) an empty value."""
        if not isinstance(body, dict) or name not in body:
            self.reject(f"missing required field {name!r}")
        value = body[name]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            self.reject(f"field {name!r} has the wrong type ({type(value).__name__})")
        if non_empty and isinstance(value, str | list | dict) and not value:
            self.reject(f"field {name!r} is empty")
        return value

    # -- serving ----------------------------------------------------------------------------------------

    def _dispatch(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = parts.path
        if self.prefix and path.startswith(self.prefix):
            path = path[len(self.prefix) :]
        req = Request(
            method=h.command,
            path=unquote(path),
            query={k: v[-1] for k, v in parse_qs(parts.query).items()},
            headers={k.lower(): v for k, v in h.headers.items()},
            body=body,
        )
        with self.lock:
            self.requests.append(req)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            over = len(self.requests) > self.max_requests
        try:
            if over:
                self.stop()
                status, payload, headers = 503, {"error": "request budget of the test service used up"}, {}
            else:
                if self.delay_s:
                    time.sleep(self.delay_s)
                reply = self._serve(req)
                if reply is None:  # an injected dropped connection
                    h.close_connection = True
                    return
                status, payload, headers = reply
        finally:
            with self.lock:
                self.in_flight -= 1
        data = b"" if payload is None else json.dumps(payload).encode("utf-8")
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(data)

    def _serve(self, req: Request) -> tuple[int, Any, dict[str, str]] | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and fault.method == req.method and fault.pattern.search(req.path):
                    fault.times -= 1
                    if fault.status == 0:
                        return None
                    return (
                        fault.status,
                        fault.body if fault.body is not None else {"error": "injected"},
                        fault.headers,
                    )
        expected = f"{self.auth} {self.key}"
        if req.headers.get("authorization") != expected:
            self.violations.append(
                f"{req.method} {req.path}: Authorization header is not '{self.auth} <key>'"
            )
            return 401, {"error": "unauthorized"}, {}
        for method, pattern, handler in self._routes:
            match = pattern.fullmatch(req.path)
            if method == req.method and match:
                try:
                    with self.lock:
                        reply = handler(req, *match.groups())
                except Rejected as err:
                    self.violations.append(f"{req.method} {req.path}: {err}")
                    return err.status, {"error": str(err)}, {}
                status, payload, *rest = reply
                return status, payload, (rest[0] if rest else {})
        self.violations.append(f"{req.method} {req.path}: no such endpoint")
        return 404, {"error": f"no route for {req.method} {req.path}"}, {}
