"""Fixtures of the benchmark tests: a local file server on 127.0.0.1 and a scratch registry entry.

The server binds an ephemeral port, serves the files put in ``server.files`` (anything else is a 404), counts
requests, refuses more than ``MAX_REQUESTS``, and stops when the fixture ends or after ``IDLE_TIMEOUT`` seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench_nb.benchmarks import registry

MAX_REQUESTS = 50
IDLE_TIMEOUT = 60.0


@dataclass
class FileServer:
    base_url: str
    files: dict[str, bytes] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    last_request: float = field(default_factory=time.monotonic)

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"


@pytest.fixture
def file_server() -> Iterator[FileServer]:
    state = FileServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            state.last_request = time.monotonic()
            body = state.files.get(self.path.lstrip("/"))
            if len(state.requests) > MAX_REQUESTS or body is None:
                self.send_response(404 if body is None else 429)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(0, len(body), 4096):  # several chunks, like a real download
                self.wfile.write(body[i : i + 4096])

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    stop = threading.Event()

    def watchdog() -> None:
        while not stop.wait(0.5):
            if time.monotonic() - state.last_request > IDLE_TIMEOUT:
                server.shutdown()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        yield state
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def scratch_registry() -> Iterator[None]:
    """Restore the benchmark registry after a test that registers its own entries."""
    benchmarks = registry._BENCHMARKS
    saved, saved_aliases = dict(benchmarks._items), dict(benchmarks._aliases)
    try:
        yield
    finally:
        benchmarks._items.clear()
        benchmarks._items.update(saved)
        benchmarks._aliases.clear()
        benchmarks._aliases.update(saved_aliases)
