"""Serving ``reports/`` on 127.0.0.1 for a quick look in a browser."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench_nb.errors import ReportError


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def make_server(
    directory: str | Path = "reports", port: int = 3000, host: str = "127.0.0.1"
) -> ThreadingHTTPServer:
    """An HTTP server for ``directory`` bound to ``host`` (loopback by default); call ``serve_forever``.

    ``port=0`` picks a free port (``server.server_address[1]``).
    """
    d = Path(directory)
    if not d.is_dir():
        raise ReportError(f"{d}: no such directory (build a report first: bench-nb report compare)")
    handler = functools.partial(_QuietHandler, directory=str(d))
    return ThreadingHTTPServer((host, port), handler)
