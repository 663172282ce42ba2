"""A local stand-in for the OpenAI and Anthropic APIs, for tests: real HTTP on 127.0.0.1, scripted replies,
injected faults, and a count of every call.

Endpoints (any path prefix, so ``/v1/...`` and Gemini's ``/v1beta/openai/...`` both work):

- ``POST .../chat/completions``: OpenAI Chat Completions (non-streaming)
- ``POST .../messages``: Anthropic Messages
- ``POST .../messages/count_tokens``: Anthropic token counting (``input_tokens`` = ``fake_token_count``)

Replies come from ``responder(request) -> str`` (by default: a correct verdict for judge-like requests, else
``"scripted answer"``), unless a scripted step is queued with ``server.script(...)``: ``Reply(text)`` or
``Fault(kind)`` with kind ``429`` (with ``Retry-After``), ``500``, ``400``, ``401-echo`` (a 401 whose message
quotes the API key the request carried, as some gateways do), ``slow`` (sleeps ``delay`` seconds, longer
than the client's timeout, then answers), ``malformed`` (a 200 whose body is not JSON) or ``truncated`` (a 200
whose body stops short of its Content-Length). Steps are consumed in order, one per call, whatever the path
(count_tokens calls excepted unless ``scope="all"``).

The server binds an ephemeral port, serves from a daemon thread, refuses more than ``max_requests`` calls,
and shuts itself down after ``idle_timeout`` seconds without a request (or when the fixture ends).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest

FaultKind = Literal["429", "500", "400", "401-echo", "slow", "malformed", "truncated"]


@dataclass(frozen=True)
class Reply:
    """Answer the next call with this text."""

    text: str


@dataclass(frozen=True)
class Fault:
    """Fail the next call this way."""

    kind: FaultKind
    retry_after: float = 1.0
    delay: float = 2.0


@dataclass
class Call:
    """One request the server received."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    outcome: str = ""
    at: float = field(default_factory=time.time)  # wall-clock time the request arrived (its body read)
    port: int = 0  # the client's port: requests with the same port came over one kept-alive connection


def fake_token_count(text: str) -> int:
    """The token count the fake API reports: whitespace-separated words."""
    return len(text.split())


def request_text(body: dict[str, Any]) -> str:
    """All prompt text of a Chat Completions or Messages request, in order."""
    parts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts.extend(str(b.get("text", "")) for b in system if isinstance(b, dict))
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


def default_responder(path: str, body: dict[str, Any]) -> str:
    text = request_text(body)
    if '"score"' in text or body.get("response_format"):
        return json.dumps({"score": 1, "label": "correct", "explanation": "scripted verdict"})
    return "scripted answer"


@dataclass
class LLMServer:
    """The running server: its URLs, script queue and call log."""

    max_requests: int = 500
    idle_timeout: float = 60.0
    responder: Callable[[str, dict[str, Any]], str] = default_responder
    always: Fault | None = None  # when set, every call (count_tokens excepted) fails this way
    calls: list[Call] = field(default_factory=list)
    _queue: deque[Reply | Fault] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: ThreadingHTTPServer | None = None
    _last_request: float = field(default_factory=time.monotonic)

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """Root URL (Anthropic's SDK appends ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """OpenAI-style base URL (the SDK appends ``/chat/completions``)."""
        return f"{self.base_url}/v1"

    def script(self, *steps: Reply | Fault) -> None:
        """Queue replies and faults for the next calls."""
        with self._lock:
            self._queue.extend(steps)

    def count(self, endpoint: str | None = None) -> int:
        """How many calls arrived (whose path ends with ``endpoint``, when given)."""
        with self._lock:
            return sum(1 for c in self.calls if endpoint is None or c.path.endswith(endpoint))

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self._queue.clear()

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> LLMServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        threading.Thread(target=self._watchdog, daemon=True).start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()

    def _watchdog(self) -> None:
        while self._httpd is not None:
            time.sleep(0.5)
            if time.monotonic() - self._last_request > self.idle_timeout:
                self.stop()

    # -- requests ----------------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        self._last_request = time.monotonic()
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b"{}"
        body = json.loads(raw or b"{}")
        call = Call(h.path, body, {k.lower(): v for k, v in h.headers.items()}, port=h.client_address[1])
        is_count = h.path.endswith("/count_tokens")
        with self._lock:
            self.calls.append(call)
            too_many = len(self.calls) > self.max_requests
            step = self._queue.popleft() if (self._queue and not is_count) else None
            if step is None and not is_count:
                step = self.always
        if too_many:
            call.outcome = "refused"
            return _send_json(h, 503, {"error": {"message": "test server: request limit reached"}})
        if is_count:
            call.outcome = "count"
            return _send_json(h, 200, {"input_tokens": fake_token_count(request_text(body))})
        if isinstance(step, Fault):
            call.outcome = step.kind
            if step.kind == "429":
                err = {"error": {"type": "rate_limit_error", "message": "slow down"}, "type": "error"}
                return _send_json(h, 429, err, {"Retry-After": f"{step.retry_after:g}"})
            if step.kind == "500":
                err = {"error": {"type": "api_error", "message": "boom"}, "type": "error"}
                return _send_json(h, 500, err)
            if step.kind == "400":
                err = {"error": {"type": "invalid_request_error", "message": "bad request"}, "type": "error"}
                return _send_json(h, 400, err)
            if step.kind == "401-echo":
                key = call.headers.get("x-api-key") or call.headers.get("authorization", "").removeprefix(
                    "Bearer "
                )
                message = f"Incorrect API key provided: {key}. Authorization header was: Bearer {key}"
                err = {"error": {"type": "authentication_error", "message": message}, "type": "error"}
                return _send_json(h, 401, err)
            if step.kind == "malformed":
                return _send_raw(h, 200, b'{"id": "x", "choices": [ not json', "application/json")
            if step.kind == "truncated":
                payload = json.dumps(self._reply_body(h.path, body, "cut short")).encode()
                return _send_raw(
                    h, 200, payload[: len(payload) // 2], "application/json", length=len(payload)
                )
            if step.kind == "slow":
                time.sleep(step.delay)
        text = step.text if isinstance(step, Reply) else self.responder(h.path, body)
        call.outcome = call.outcome or "ok"
        _send_json(h, 200, self._reply_body(h.path, body, text))

    @staticmethod
    def _reply_body(path: str, body: dict[str, Any], text: str) -> dict[str, Any]:
        n_in, n_out = fake_token_count(request_text(body)), fake_token_count(text)
        model = body.get("model", "unknown")
        if path.endswith("/messages"):
            return {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": n_in, "output_tokens": n_out},
            }
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
        }


def _send_json(
    h: BaseHTTPRequestHandler, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    _send_raw(h, status, json.dumps(payload).encode(), "application/json", headers=headers)


def _send_raw(
    h: BaseHTTPRequestHandler,
    status: int,
    data: bytes,
    content_type: str,
    *,
    length: int | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    try:
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data) if length is None else length))
        for key, value in (headers or {}).items():
            h.send_header(key, value)
        if length is not None:
            h.send_header("Connection", "close")
            h.close_connection = True
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): fine
        pass


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A fresh local LLM API server for one test."""
    server = LLMServer().start()
    try:
        yield server
    finally:
        server.stop()
