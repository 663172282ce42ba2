"""Serving ``reports/`` on 127.0.0.1 for a quick look in a browser."""

from __future__ import annotations

import errno
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

    Raises:
        ReportError: ``directory`` is missing, or the port cannot be bound (one line naming it: in use).
    """
    d = Path(directory)
    if not d.is_dir():
        raise ReportError(f"{d}: no such directory (build a report first: bench-nb report compare)")
    handler = functools.partial(_QuietHandler, directory=str(d))
    try:
        return ThreadingHTTPServer((host, port), handler)
    except OSError as err:
        hint = " (another server is using it: pick another with --port, or --port 0 for a free one)"
        busy = err.errno == errno.EADDRINUSE
        raise ReportError(
            f"cannot serve {d} on {host}:{port}: {err.strerror or err}{hint if busy else ''}"
        ) from None
