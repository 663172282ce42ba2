"""The ROI store: one SQLite file holding memories, probes, runs, recalls, results and usage events.

Every public method that writes opens ``BEGIN IMMEDIATE`` so concurrent processes serialize on the file
(WAL mode, a busy timeout of :data:`BUSY_TIMEOUT_S`). A store object belongs to one thread; open another one
(cheap) for another thread or process.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench_nb.roi.errors import MemoryImportError, RunInProgressError, StoreError
from bench_nb.roi.memory import Memory, ScopeMember, can_read, normalize_time, utc_now
from bench_nb.roi.records import (
    ModelUsage,
    Probe,
    Purpose,
    Recall,
    RunKind,
    RunStatus,
)
from bench_nb.roi.schema import SCHEMA, SCHEMA_VERSION

BUSY_TIMEOUT_S = 30.0
#: A running run whose heartbeat is older than this is taken as crashed and marked ``abandoned``.
STALE_AFTER_S = 15 * 60.0

_MEMORY_COLS = "id, owner, scope, visibility, kind, content, created_at, invalidated_at, lang, source"
_PROBE_COLS = "id, owner, memory_id, scope, question, mode, model, created_at, retired_at, retired_reason"


class RoiStore:
    """The ROI benchmark's SQLite store (created with its schema on first open).

    Args:
        path: the database file; its directory is created if needed.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as err:
            raise StoreError(f"{self.path}: cannot open the ROI store ({err})") from err

    def _migrate(self) -> None:
        with self.write():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: ROI store schema version {version} is newer than this bench_nb "
                    f"({SCHEMA_VERSION}); upgrade bench_nb"
                )
            if version < SCHEMA_VERSION:
                for statement in _statements(SCHEMA):
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RoiStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``): committed on success, rolled back on error."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def execute(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Cursor:
        """Raw SQL (for inspection and tests)."""
        return self._db.execute(sql, tuple(params))

    # -- memories ---------------------------------------------------------------------------------------

    def upsert_memories(self, memories: Iterable[Memory], *, where: str = "") -> tuple[int, int]:
        """Insert new memories and update known ones (same id); returns ``(inserted, updated)``.

        Raises:
            MemoryImportError: a known id belongs to another owner.
        """
        inserted = updated = 0
        now = utc_now()
        with self.write() as db:
            for m in memories:
                row = db.execute("SELECT owner FROM memories WHERE id = ?", (m.id,)).fetchone()
                if row is not None and row["owner"] != m.owner:
                    raise MemoryImportError(
                        where, f"memory {m.id!r} already belongs to owner {row['owner']!r}", field="owner"
                    )
                db.execute(
                    f"INSERT INTO memories ({_MEMORY_COLS}, imported_at) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT (id) DO UPDATE SET scope=excluded.scope, visibility=excluded.visibility, "
                    "kind=excluded.kind, content=excluded.content, created_at=excluded.created_at, "
                    "invalidated_at=excluded.invalidated_at, lang=excluded.lang, source=excluded.source, "
                    "imported_at=excluded.imported_at",
                    (*_memory_values(m), now),
                )
                inserted += row is None
                updated += row is not None
        return inserted, updated

    def add_members(self, members: Iterable[ScopeMember]) -> int:
        """Record scope memberships (idempotent); returns how many were new."""
        with self.write() as db:
            before = db.total_changes
            for m in members:
                db.execute(
                    "INSERT OR IGNORE INTO scope_members (scope, member) VALUES (?, ?)", (m.scope, m.member)
                )
            return db.total_changes - before

    def members(self, scope: str) -> frozenset[str]:
        rows = self._db.execute("SELECT member FROM scope_members WHERE scope = ?", (scope,))
        return frozenset(r["member"] for r in rows)

    def memory(self, memory_id: str) -> Memory | None:
        row = self._db.execute(f"SELECT {_MEMORY_COLS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return None if row is None else _memory(row)

    def readable_memories(self, reader: str, scopes: Iterable[str]) -> list[Memory]:
        """The live memories of ``scopes`` that ``reader`` may read (see ``memory.can_read``), oldest first."""
        out: list[Memory] = []
        for scope in dict.fromkeys(scopes):
            members = self.members(scope)
            rows = self._db.execute(
                f"SELECT {_MEMORY_COLS} FROM memories WHERE scope = ? AND invalidated_at IS NULL "
                "ORDER BY created_at, id",
                (scope,),
            )
            out.extend(m for m in map(_memory, rows) if can_read(reader, m, members))
        return out

    def count_memories(self, owner: str) -> int:
        return int(self._db.execute("SELECT count(*) FROM memories WHERE owner = ?", (owner,)).fetchone()[0])

    # -- probes -----------------------------------------------------------------------------------------

    def active_probes(self, owner: str) -> list[Probe]:
        rows = self._db.execute(
            f"SELECT {_PROBE_COLS} FROM probes WHERE owner = ? AND retired_at IS NULL ORDER BY created_at, id",
            (owner,),
        )
        return [_probe(r) for r in rows]

    def probes(self, owner: str) -> list[Probe]:
        """All of the owner's probes, retired ones included."""
        rows = self._db.execute(
            f"SELECT {_PROBE_COLS} FROM probes WHERE owner = ? ORDER BY created_at, id", (owner,)
        )
        return [_probe(r) for r in rows]

    def retire_invalidated(self, owner: str) -> int:
        """Retire the owner's active probes whose source memory is invalidated; returns how many."""
        with self.write() as db:
            cur = db.execute(
                "UPDATE probes SET retired_at = ?, retired_reason = 'source memory invalidated' "
                "WHERE owner = ? AND retired_at IS NULL AND memory_id IN "
                "(SELECT id FROM memories WHERE invalidated_at IS NOT NULL)",
                (utc_now(), owner),
            )
            return cur.rowcount

    def retire_probe(self, probe_id: str, reason: str) -> None:
        with self.write() as db:
            db.execute(
                "UPDATE probes SET retired_at = ?, retired_reason = ? WHERE id = ? AND retired_at IS NULL",
                (utc_now(), reason, probe_id),
            )

    def unprobed_memories(
        self, owner: str, kinds: Iterable[str], *, limit: int, skip: Iterable[str] = ()
    ) -> list[Memory]:
        """The owner's own live memories of ``kinds`` never probed, newest first (ties by id)."""
        kinds = tuple(kinds)
        skip = tuple(skip)
        rows = self._db.execute(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE owner = ? AND invalidated_at IS NULL "
            f"AND kind IN ({','.join('?' * len(kinds))}) "
            f"AND id NOT IN ({','.join('?' * len(skip))}) "
            "AND NOT EXISTS (SELECT 1 FROM probes p WHERE p.memory_id = m.id) "
            "ORDER BY created_at DESC, id LIMIT ?",
            (owner, *kinds, *skip, limit),
        )
        return [_memory(r) for r in rows]

    def count_unprobed(self, owner: str, kinds: Iterable[str]) -> int:
        """How many of the owner's own live memories of ``kinds`` were never probed."""
        kinds = tuple(kinds)
        row = self._db.execute(
            f"SELECT count(*) FROM memories m WHERE owner = ? AND invalidated_at IS NULL "
            f"AND kind IN ({','.join('?' * len(kinds))}) "
            "AND NOT EXISTS (SELECT 1 FROM probes p WHERE p.memory_id = m.id)",
            (owner, *kinds),
        ).fetchone()
        return int(row[0])

    def insert_probes(self, probes: Iterable[Probe]) -> int:
        with self.write() as db:
            n = 0
            for p in probes:
                db.execute(
                    f"INSERT INTO probes ({_PROBE_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (
                        p.id,
                        p.owner,
                        p.memory_id,
                        p.scope,
                        p.question,
                        p.mode,
                        p.model,
                        p.created_at,
                        None,
                        None,
                    ),
                )
                n += 1
            return n

    # -- runs -------------------------------------------------------------------------------------------

    def claim_run(
        self,
        run_id: str,
        owner: str,
        kind: RunKind | None = None,
        *,
        phase: str,
        provider: str | None = None,
        judge: str | None = None,
        prober: str | None = None,
        k: int | None = None,
        stale_after_s: float = STALE_AFTER_S,
    ) -> RunKind:
        """Start a run for ``owner``, unless one is running (then RunInProgressError); returns its kind.

        With ``kind`` None the kind is decided inside the same transaction: ``generate`` when the owner has no
        active probe, else ``benchmark``.

        A running run whose heartbeat is older than ``stale_after_s`` (its process crashed) is marked
        ``abandoned`` first. The unique partial index on running runs makes this hold across processes.
        """
        now = datetime.now(UTC)
        with self.write() as db:
            row = db.execute(
                "SELECT id, phase, heartbeat_at FROM runs WHERE owner = ? AND status = 'running'", (owner,)
            ).fetchone()
            if row is not None:
                stale_before = normalize_time(now - timedelta(seconds=stale_after_s))
                if row["heartbeat_at"] >= stale_before:
                    raise RunInProgressError(owner, row["id"], row["phase"])
                db.execute(
                    "UPDATE runs SET status = 'abandoned', finished_at = ?, error = ? WHERE id = ?",
                    (normalize_time(now), f"no heartbeat for {stale_after_s:.0f} s (crashed?)", row["id"]),
                )
            if kind is None:
                active = db.execute(
                    "SELECT count(*) FROM probes WHERE owner = ? AND retired_at IS NULL", (owner,)
                ).fetchone()[0]
                kind = "benchmark" if active else "generate"
            stamp = normalize_time(now)
            try:
                db.execute(
                    "INSERT INTO runs (id, owner, kind, status, phase, provider, judge, prober, k, started_at, "
                    "heartbeat_at) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                    (run_id, owner, kind, phase, provider, judge, prober, k, stamp, stamp),
                )
            except sqlite3.IntegrityError as err:  # the index caught a race this process could not see
                raise RunInProgressError(owner, "another run", None) from err
        return kind

    def heartbeat(self, run_id: str, phase: str | None = None) -> None:
        with self.write() as db:
            db.execute(
                "UPDATE runs SET heartbeat_at = ?, phase = coalesce(?, phase) WHERE id = ? AND status = 'running'",
                (utc_now(), phase, run_id),
            )

    def finish_run(self, run_id: str, status: RunStatus, error: str | None = None) -> None:
        with self.write() as db:
            db.execute(
                "UPDATE runs SET status = ?, phase = NULL, finished_at = ?, error = ? "
                "WHERE id = ? AND status = 'running'",
                (status, utc_now(), error, run_id),
            )

    def runs(self, owner: str, kind: RunKind | None = None) -> list[sqlite3.Row]:
        """The owner's runs, oldest first."""
        sql = (
            "SELECT * FROM runs WHERE owner = ?"
            + (" AND kind = ?" if kind else "")
            + " ORDER BY started_at, id"
        )
        return list(self._db.execute(sql, (owner, kind) if kind else (owner,)))

    def run(self, owner: str, run_id: str) -> sqlite3.Row | None:
        """One run of ``owner`` (None if it does not exist or belongs to someone else)."""
        return self._db.execute("SELECT * FROM runs WHERE id = ? AND owner = ?", (run_id, owner)).fetchone()

    # -- recalls, results, usage ------------------------------------------------------------------------

    def add_recall(self, run_id: str, owner: str, recall: Recall) -> None:
        surfaced = [{"memory_id": s.memory_id, "text": s.text, "score": s.score} for s in recall.surfaced]
        with self.write() as db:
            db.execute(
                "INSERT INTO recalls (run_id, probe_id, owner, surfaced, hits, dropped, latency_ms, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    recall.probe_id,
                    owner,
                    json.dumps(list(recall.memory_ids)),
                    json.dumps(surfaced, ensure_ascii=False),
                    recall.dropped,
                    recall.latency_ms,
                    utc_now(),
                ),
            )

    def add_result(
        self,
        run_id: str,
        probe: Probe,
        *,
        judge: str,
        with_memory: bool | None,
        without_memory: bool | None,
        confidence: float | None,
        explanation: str | None = None,
        error: str | None = None,
    ) -> None:
        """Append one probe's result: judged (both booleans set) or failed (``error`` set, booleans None)."""
        status = "failed" if with_memory is None or without_memory is None else "judged"
        with self.write() as db:
            db.execute(
                "INSERT INTO results (run_id, probe_id, owner, memory_id, probe_mode, status, with_memory, "
                "without_memory, confidence, judge, explanation, error, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    probe.id,
                    probe.owner,
                    probe.memory_id,
                    probe.mode,
                    status,
                    None if with_memory is None else int(with_memory),
                    None if without_memory is None else int(without_memory),
                    confidence,
                    judge,
                    explanation,
                    error,
                    utc_now(),
                ),
            )

    def add_usage(
        self, owner: str, purpose: Purpose, usage: ModelUsage, *, own_key: bool, run_id: str | None
    ) -> None:
        """Record one model call of the prober or the judge."""
        with self.write() as db:
            db.execute(
                "INSERT INTO usage_events (owner, purpose, model, input_tokens, output_tokens, own_key, run_id, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    owner,
                    purpose,
                    usage.model,
                    usage.input_tokens,
                    usage.output_tokens,
                    int(own_key),
                    run_id,
                    utc_now(),
                ),
            )


def _statements(script: str) -> list[str]:
    """Split a schema script into statements (trigger bodies contain ';', so use sqlite3.complete_statement)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


def _memory_values(m: Memory) -> tuple[Any, ...]:
    return (
        m.id,
        m.owner,
        m.scope,
        m.visibility,
        m.kind,
        m.content,
        m.created_at,
        m.invalidated_at,
        m.lang,
        m.source,
    )


def _memory(row: sqlite3.Row) -> Memory:
    return Memory(**dict(row))


def _probe(row: sqlite3.Row) -> Probe:
    return Probe(**dict(row))
