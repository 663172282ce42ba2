"""The on-disk response cache: a rerun or a re-judge replays earlier replies with no HTTP call.

One SQLite file (default ``data/cache/llm.sqlite``; ``$BENCH_NB_LLM_CACHE`` or ``ClientSettings.cache_path``
changes it, ``off`` disables it). The key is the sha256 of the canonical JSON of everything that decides the
reply: the API, the model id, the messages and the parameters (temperature, max tokens, JSON mode). The API
key and the base URL are not part of it, so a key rotation or a proxy does not empty the cache. Only successful
replies are stored. WAL mode lets several processes share the file.

**Identical requests, one reply** (``ResponseCache.get_or_call``). Requests with one key made at once share a
single call (single-flight): in a process, the first thread calls and the others wait for its reply; across
processes sharing the file (a sweep's workers), the first claims the key in the ``pending`` table and the others
poll until its reply is stored. A claim whose process is gone (killed) or which is older than ``STALE_CLAIM_S``
is taken over; when the caller fails, its claim is released and the next waiter calls. The first reply stored
for a key is the one kept (never replaced), and every caller returns the stored reply, so what a run was given
is what its rerun replays.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import tenacity

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    api TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS pending (
    key TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    claimed_at REAL NOT NULL
)
"""
#: A claim older than this is taken over whatever its process (one on another host cannot be checked).
STALE_CLAIM_S = 30 * 60.0
#: How often a process waiting for another's reply looks at the file.
POLL_S = 0.05


@dataclass(frozen=True)
class CachedReply:
    """A model's reply as cached: its text and the tokens the call used."""

    text: str
    input_tokens: int | None
    output_tokens: int | None


def cache_key(request: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a request description (api, model, messages, params)."""
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """A thread-safe SQLite cache of model replies."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        # Processes opening a new cache file at once: switching it to WAL can fail at once with "database is
        # locked" (SQLite does not wait its busy timeout there), so opening is tried again for up to 30 s.
        for attempt in tenacity.Retrying(
            retry=tenacity.retry_if_exception(lambda e: "locked" in str(e)),
            stop=tenacity.stop_after_delay(30),
            wait=tenacity.wait_random(0.01, 0.1),
            reraise=True,
        ):
            with attempt, self._lock:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.executescript(_SCHEMA)
                self._conn.commit()
        self._flights: dict[str, threading.Event] = {}  # keys this process is calling for, by key
        self._flights_lock = threading.Lock()

    def _get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT text, input_tokens, output_tokens FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return CachedReply(row[0], row[1], row[2]) if row else None

    def put(
        self, request: dict[str, Any], text: str, input_tokens: int | None, output_tokens: int | None
    ) -> CachedReply:
        """Store a successful reply unless one is stored already; returns the stored one (the first kept)."""
        key = cache_key(request)
        with self._lock:
            self._conn.execute(
                "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    str(request.get("api", "")),
                    str(request.get("model", "")),
                    json.dumps(request, sort_keys=True, ensure_ascii=False),
                    text,
                    input_tokens,
                    output_tokens,
                    time.time(),
                ),
            )
            self._conn.commit()
        stored = self._get(key)
        return stored if stored is not None else CachedReply(text, input_tokens, output_tokens)

    def get_or_call(
        self,
        request: dict[str, Any],
        call: Callable[[], tuple[str, int | None, int | None]],
        *,
        time_left: Callable[[], float | None] = lambda: None,
        on_timeout: Callable[[], BaseException] = TimeoutError,
    ) -> tuple[CachedReply, bool]:
        """The stored reply to ``request``, or ``call()``'s, made once for every identical request at once.

        Returns the reply and whether it came from the cache (True also for a caller that waited for another's
        call: it made none). ``time_left`` says how long a caller may still wait (None: no limit); when it runs
        out, ``on_timeout()`` is raised. An error of ``call`` propagates to its caller; a waiter then calls.
        """
        key = cache_key(request)
        while True:
            hit = self._get(key)
            if hit is not None:
                return hit, True
            with self._flights_lock:
                flight = self._flights.get(key)
                mine = flight is None
                if mine:
                    flight = self._flights[key] = threading.Event()
            assert flight is not None
            if not mine:  # another thread of this process is calling: wait for it, then look again
                left = time_left()
                if left is not None and left <= 0:
                    raise on_timeout()
                flight.wait(timeout=None if left is None else left)
                continue
            try:
                return self._call_claimed(key, request, call, time_left, on_timeout)
            finally:
                with self._flights_lock:
                    del self._flights[key]
                flight.set()

    def _call_claimed(
        self,
        key: str,
        request: dict[str, Any],
        call: Callable[[], tuple[str, int | None, int | None]],
        time_left: Callable[[], float | None],
        on_timeout: Callable[[], BaseException],
    ) -> tuple[CachedReply, bool]:
        """Claim ``key`` across processes (or wait for the process holding it), then call and store."""
        while not self._claim(key):
            hit = self._get(key)
            if hit is not None:
                return hit, True
            left = time_left()
            if left is not None and left <= 0:
                raise on_timeout()
            time.sleep(POLL_S if left is None else min(POLL_S, left))
        try:
            hit = self._get(key)  # stored between our look and our claim
            if hit is not None:
                return hit, True
            text, n_in, n_out = call()
            return self.put(request, text, n_in, n_out), False
        finally:
            self._release(key)

    def _claim(self, key: str) -> bool:
        """Take ``key``'s claim: True if it is ours now (a stale claim is taken over)."""
        host, pid, now = socket.gethostname(), os.getpid(), time.time()
        with self._lock:
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO pending VALUES (?, ?, ?, ?)", (key, host, pid, now)
            )
            self._conn.commit()
            if cur.rowcount == 1:
                return True
            row = self._conn.execute(
                "SELECT host, pid, claimed_at FROM pending WHERE key = ?", (key,)
            ).fetchone()
            if row is None or not _stale(row[0], int(row[1]), float(row[2]), now):
                return False
            cur = self._conn.execute(  # take it over, unless someone else just did
                "UPDATE pending SET host = ?, pid = ?, claimed_at = ? "
                "WHERE key = ? AND host = ? AND pid = ? AND claimed_at = ?",
                (host, pid, now, key, row[0], row[1], row[2]),
            )
            self._conn.commit()
            return cur.rowcount == 1

    def _release(self, key: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM pending WHERE key = ? AND pid = ?", (key, os.getpid()))
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the cache's SQLite connection."""
        with self._lock:
            self._conn.close()


def _stale(host: str, pid: int, claimed_at: float, now: float) -> bool:
    """Whether a claim's process is gone: on this host, no process with its pid (or our own pid: this process
    holds no such claim, its threads share the in-process flight); elsewhere, older than ``STALE_CLAIM_S``."""
    if now - claimed_at > STALE_CLAIM_S:
        return True
    if host != socket.gethostname():
        return False
    return pid == os.getpid() or not psutil.pid_exists(pid)  # another user's live process exists too
