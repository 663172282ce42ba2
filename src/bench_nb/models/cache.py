"""The on-disk response cache: a rerun or a re-judge replays earlier replies with no HTTP call.

One SQLite file (default ``data/cache/llm.sqlite``; ``$BENCH_NB_LLM_CACHE`` or ``ClientSettings.cache_path``
changes it, ``off`` disables it). The key is the sha256 of the canonical JSON of everything that decides the
reply: the API, the model id, the messages and the parameters (temperature, max tokens, JSON mode). The API
key and the base URL are not part of it, so a key rotation or a proxy does not empty the cache. Only successful
replies are stored. WAL mode lets several processes share the file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
)
"""


@dataclass(frozen=True)
class CachedReply:
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
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()

    def get(self, request: dict[str, Any]) -> CachedReply | None:
        """The stored reply to ``request``, if any."""
        with self._lock:
            row = self._conn.execute(
                "SELECT text, input_tokens, output_tokens FROM responses WHERE key = ?", (cache_key(request),)
            ).fetchone()
        return CachedReply(row[0], row[1], row[2]) if row else None

    def put(
        self, request: dict[str, Any], text: str, input_tokens: int | None, output_tokens: int | None
    ) -> None:
        """Store a successful reply (replacing any earlier one for the same request)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    cache_key(request),
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

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
