"""The on-disk message store shared by the embedded providers: one SQLite file per container.

Layout: ``<run_dir>/memory/<provider>/<container-file>.sqlite``, one file per container (the file name is
the container name made safe for a file system, plus a short hash of it). One file per container keeps
each container's BM25 statistics its own: a container's ranking never depends on which other containers
of the run exist yet, so a resumed or concurrent run ranks exactly as an uninterrupted one. It also lets
containers be ingested in parallel (SQLite has one writer per file).

Each file has a ``messages`` table, one row per message (container, session id, session date, position,
speaker, message id, timestamp, text), an FTS5 index on it (``messages_fts``, kept in step by triggers,
Porter stemming over Unicode words, diacritics folded), and a ``meta`` table naming the container. Files
use WAL mode; every operation opens its own connection (about 0.1 ms), so any thread may call any method.
Connections are not cached per thread: a run may have hundreds of containers and dozens of threads, which
would hold thousands of open files, and ``clear`` deletes a container's file.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from bench_nb.errors import ProviderError
from bench_nb.records import SearchHit, Session

SCHEMA_VERSION = "1"
BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    container TEXT NOT NULL,
    session_id TEXT NOT NULL,
    session_index INTEGER NOT NULL,
    session_date TEXT,
    position INTEGER NOT NULL,
    speaker TEXT NOT NULL,
    message_id TEXT NOT NULL,
    timestamp TEXT,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_session ON messages (session_id);
CREATE INDEX IF NOT EXISTS messages_order ON messages (session_index, position);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5 (
    text, speaker, content='messages', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, text, speaker) VALUES (new.id, new.text, new.speaker);
END;
CREATE TRIGGER IF NOT EXISTS messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text, speaker) VALUES ('delete', old.id, old.text, old.speaker);
END;
"""

_COLUMNS = (
    "id, container, session_id, session_index, session_date, position, speaker, message_id, timestamp, text"
)


@dataclass(frozen=True)
class MessageRow:
    """One stored message; ``message_id`` is the dataset's id (e.g. LoCoMo ``D1:3``) or ``<session>:<n>``."""

    id: int
    container: str
    session_id: str
    session_index: int
    session_date: str | None
    position: int
    speaker: str
    message_id: str
    timestamp: str | None
    text: str

    @property
    def date(self) -> str | None:
        """The message's own timestamp when it has one, else its session's date."""
        return self.timestamp or self.session_date

    def render(self) -> str:
        """The text an answerer sees: ``[2023-05-08T13:56:00] Priya: ...`` (no brackets without a date)."""
        prefix = f"[{self.date}] " if self.date else ""
        return f"{prefix}{self.speaker}: {self.text}"

    def to_hit(self, score: float | None = None) -> SearchHit:
        """This row as a SearchHit: rendered text, message id as ``hit_id``, the row as ``raw``."""
        return SearchHit(
            text=self.render(),
            score=score,
            session_id=self.session_id,
            date=self.date,
            hit_id=self.message_id,
            raw=asdict(self),
        )


def container_file_name(container: str) -> str:
    """A file name for ``container``: its safe characters plus a hash, so distinct names never collide."""
    if not container:
        raise ProviderError("a container name must not be empty")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", container).strip("._")[:80] or "container"
    digest = hashlib.sha256(container.encode()).hexdigest()[:12]
    return f"{safe}-{digest}.sqlite"


class MessageStore:
    """Messages of every container of one provider, one SQLite file per container under ``root``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def path(self, container: str) -> Path:
        """The SQLite file of ``container`` (which may not exist yet)."""
        return self.root / container_file_name(container)

    def check(self, container: str) -> None:
        """Raise ProviderError unless ``container`` was ingested (and not cleared since)."""
        path = self.path(container)
        if not path.is_file():
            raise ProviderError(
                f"container {container!r} has no index at {path}: ingest it first "
                "(a resumed run needs the memory/ folder of its run directory)"
            )

    def _write_lock(self, container: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(container, threading.Lock())

    @contextmanager
    def connect(self, container: str, *, create: bool = False) -> Iterator[sqlite3.Connection]:
        """A fresh connection to the container's file, closed afterwards.

        Raises:
            ProviderError: the container was never ingested (and ``create`` is False), or its file is not a
                store of this container.
        """
        path = self.path(container)
        if not create:
            self.check(container)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)) as conn:
                if create:
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.executescript(_SCHEMA)
                    conn.execute(
                        "INSERT OR IGNORE INTO meta (key, value) VALUES ('container', ?), ('schema', ?)",
                        (container, SCHEMA_VERSION),
                    )
                stored = conn.execute("SELECT value FROM meta WHERE key = 'container'").fetchone()
                if stored is None or stored[0] != container:
                    found = None if stored is None else stored[0]
                    raise ProviderError(f"{path} holds container {found!r}, not {container!r}")
                yield conn
        except sqlite3.Error as err:
            raise ProviderError(f"SQLite error on container {container!r} ({path}): {err}") from err

    def ingest(
        self,
        container: str,
        sessions: Sequence[Session],
        also: Callable[[sqlite3.Connection, list[MessageRow]], None] | None = None,
    ) -> list[MessageRow]:
        """Store every message of ``sessions`` in one transaction; returns the stored rows in order.

        Idempotent: the sessions' earlier rows (from a crashed or repeated ingest) are deleted first, and a
        session ingested again keeps its place in the container's order. ``also(conn, rows)`` runs inside
        the same transaction (a provider's own tables, e.g. embeddings).
        """
        with self._write_lock(container), self.connect(container, create=True) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                rows = self._replace_sessions(conn, container, sessions)
                if also is not None:
                    also(conn, rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return rows

    @staticmethod
    def _replace_sessions(
        conn: sqlite3.Connection, container: str, sessions: Sequence[Session]
    ) -> list[MessageRow]:
        order: dict[str, int] = {}
        for s in sessions:
            if s.session_id in order:
                continue
            found = conn.execute(
                "SELECT MIN(session_index) FROM messages WHERE session_id = ?", (s.session_id,)
            ).fetchone()[0]
            order[s.session_id] = found if found is not None else -1
        next_index = conn.execute("SELECT COALESCE(MAX(session_index), -1) + 1 FROM messages").fetchone()[0]
        conn.executemany("DELETE FROM messages WHERE session_id = ?", [(sid,) for sid in order])
        for sid, index in order.items():
            if index < 0:
                order[sid], next_index = next_index, next_index + 1
        rows: list[MessageRow] = []
        offsets: dict[str, int] = {}  # a session id given twice keeps both copies, one after the other
        for s in sessions:
            start = offsets.get(s.session_id, 0)
            for i, m in enumerate(s.messages, start=start):
                values = (
                    container,
                    s.session_id,
                    order[s.session_id],
                    s.date,
                    i,
                    m.role,
                    m.message_id or f"{s.session_id}:{i}",
                    m.timestamp,
                    m.content,
                )
                cur = conn.execute(
                    "INSERT INTO messages (container, session_id, session_index, session_date, position,"
                    " speaker, message_id, timestamp, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    values,
                )
                assert cur.lastrowid is not None
                rows.append(MessageRow(cur.lastrowid, *values))
            offsets[s.session_id] = start + len(s.messages)
        return rows

    def count(self, container: str) -> int:
        """How many messages ``container`` holds."""
        with self.connect(container) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])

    def rows(self, container: str) -> list[MessageRow]:
        """Every message of ``container`` in haystack order (sessions as first ingested, then position)."""
        with self.connect(container) as conn:
            cur = conn.execute(f"SELECT {_COLUMNS} FROM messages ORDER BY session_index, position, id")
            return [MessageRow(*r) for r in cur]

    def rows_by_id(self, container: str, ids: Sequence[int]) -> dict[int, MessageRow]:
        """The rows with these row ids."""
        if not ids:
            return {}
        with self.connect(container) as conn:
            marks = ",".join("?" * len(ids))
            cur = conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE id IN ({marks})", list(ids))
            return {r[0]: MessageRow(*r) for r in cur}

    def bm25(self, container: str, match: str, limit: int) -> list[tuple[MessageRow, float]]:
        """Rows matching the FTS5 expression ``match``, best first, with FTS5's ``bm25()`` value (lower is
        better: FTS5 returns negated BM25 scores). The ``speaker`` column weighs half as much as ``text``."""
        with self.connect(container) as conn:
            cur = conn.execute(
                "WITH top AS (SELECT rowid, bm25(messages_fts, 1.0, 0.5) AS rank FROM messages_fts"
                " WHERE messages_fts MATCH ? ORDER BY rank, rowid LIMIT ?)"
                f" SELECT {_COLUMNS}, top.rank FROM top JOIN messages ON messages.id = top.rowid"
                " ORDER BY top.rank, messages.id",
                (match, limit),
            )
            return [(MessageRow(*r[:-1]), float(r[-1])) for r in cur]

    def clear(self, container: str) -> None:
        """Delete the container's file (and its WAL files). Do not search a container while clearing it."""
        with self._write_lock(container):
            path = self.path(container)
            for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                p.unlink(missing_ok=True)
