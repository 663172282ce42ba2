"""The ROI store: memories, scopes and memberships, probes, runs, recalls, results and usage events.

Two backends with the same tables and the same behaviour:

- **SQLite** (the embedded default, ``--db PATH``): one file. Every public method that writes opens
  ``BEGIN IMMEDIATE`` so concurrent processes serialize on the file (WAL mode, a busy timeout of
  :data:`BUSY_TIMEOUT_S`). Triggers make results, recalls and usage events append-only; who reads what is
  decided here, in Python (whoever holds the file holds everything).
- **Postgres** (``--db postgresql://...``, :mod:`bench_nb.roi.pg_store`): the database decides who reads what,
  with a role per owner and row-level security (see docs/roi.md).

``RoiStore(db)`` opens the backend ``db`` names. A store object belongs to one thread; open another one (cheap)
for another thread or process. SQL in this module is written once for both backends, with ``?`` placeholders.
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, astuple
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import psutil

from bench_nb.records import SearchHit
from bench_nb.redaction import redact as redact  # the name cli.roi imports for a store's URL
from bench_nb.roi.errors import MemoryImportError, RunInProgressError, StoreError
from bench_nb.roi.memory import Memory, ScopeMember, can_read, normalize_time, utc_now
from bench_nb.roi.records import ModelUsage, Probe, Purpose, Recall, RunKind, RunStatus
from bench_nb.roi.schema import MIGRATE_1_TO_2, REBUILT_FOR_3, SCHEMA, SCHEMA_VERSION, rebuild

BUSY_TIMEOUT_S = 30.0
#: A running run whose process cannot be checked (another host, or a store written by an older bench_nb)
#: and whose heartbeat is older than this is taken as crashed and marked ``abandoned``.
STALE_AFTER_S = 15 * 60.0

Row = Mapping[str, Any]

#: The Postgres store (``roi.pg_store``, which builds on this module), named rather than imported.
POSTGRES_STORE = "bench_nb.roi.pg_store:PostgresRoiStore"
_MEMORY_COLS = "id, owner, scope, visibility, kind, content, created_at, invalidated_at, lang, source"
_PROBE_COLS = "id, owner, memory_id, scope, question, mode, model, created_at, retired_at, retired_reason"


def is_postgres(db: object) -> bool:
    """Whether ``db`` names a Postgres store (a ``postgresql://`` or ``postgres://`` URL)."""
    return isinstance(db, str) and db.startswith(("postgresql://", "postgres://"))


def require_store(db: object) -> None:
    """Refuse to read a SQLite store that does not exist (opening one creates it): only ``bench-nb roi import``
    (``import_memories``) and ``bench-nb roi setup`` make a store; a command that reads one names the missing
    file instead of reading a new empty store. A Postgres URL or an open store passes (an unset-up database is
    refused when opened).

    Raises:
        StoreError: ``db`` is a path with no file.
    """
    if is_postgres(db) or isinstance(db, RoiStore) or not isinstance(db, (str, Path)):
        return
    path = Path(db)
    if not path.is_file():
        raise StoreError(
            f"{path}: no ROI store there (the file does not exist); create one with "
            f"bench-nb roi import FILE --db {path}, or check the path"
        )


class RoiStore:
    """The ROI benchmark's store. ``RoiStore(db)`` opens a SQLite file (created with its schema on first open)
    or, for a ``postgresql://`` URL, a Postgres store set up with ``bench-nb roi setup``.

    Args:
        db: a file path, or a Postgres connection URL (its role is the ROI server's role).
    """

    #: ``sqlite`` or ``postgres``.
    backend: ClassVar[str] = ""
    #: The provider that recalls by default (``start_run(provider=None)``).
    default_provider: ClassVar[str] = "sqlite"
    #: The file or URL (without password) the store was opened from, for messages.
    location: str

    def __new__(cls, db: str | Path) -> RoiStore:
        """Open the backend ``db`` names: a Postgres store for a ``postgresql://`` URL, else SQLite.

        Raises:
            StoreError: a Postgres URL turned into a ``Path``.
        """
        if isinstance(db, Path) and str(db).startswith(("postgresql:", "postgres:")):
            raise StoreError(f"{db}: a postgresql:// URL was turned into a file path; pass it as a string")
        if cls is RoiStore:
            if is_postgres(db):  # the Postgres backend (psycopg) is imported only when a URL names it
                module, name = POSTGRES_STORE.split(":")
                postgres: type[RoiStore] = getattr(importlib.import_module(module), name)
                return object.__new__(postgres)
            return object.__new__(SqliteRoiStore)
        return object.__new__(cls)

    # -- what a backend provides ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the store's connection."""
        raise NotImplementedError

    def __enter__(self) -> RoiStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write(self) -> AbstractContextManager[Any]:
        """A write transaction: committed on success, rolled back on error."""
        raise NotImplementedError

    def execute(self, sql: str, params: Iterable[Any] = ()) -> Any:
        """Raw SQL with ``?`` placeholders, as the server (for inspection and tests); returns a cursor."""
        raise NotImplementedError

    @property
    def schema_version(self) -> int:
        """The schema version the store holds."""
        raise NotImplementedError

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return [dict(r) for r in self.execute(sql, params).fetchall()]

    def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        row = self.execute(sql, params).fetchone()
        return None if row is None else dict(row)

    def _as_owner(self, owner: str, scopes: Sequence[str] = ()) -> Any:
        """A context in which queries run as ``owner`` (Postgres: a transaction in the owner's role, reads
        pinned to ``scopes``); the SQLite store has no roles (it filters in Python): a write transaction."""
        return self.write()

    def _importing(self, owner: str | None, where: str, *, membership: bool = False) -> Any:
        """An import's transaction: as ``owner`` (Postgres: in the owner's role, so the database refuses what
        the owner may not write), or as the server for an admin import (``owner`` None); ``where``: the file;
        ``membership``: it writes scope memberships (a refusal then names the field ``scope``)."""
        return self.write() if owner is None else self._as_owner(owner)

    def readable_memories(self, reader: str, scopes: Iterable[str]) -> list[Memory]:
        """The live memories of ``scopes`` that ``reader`` may read (see ``memory.can_read``), oldest first."""
        raise NotImplementedError

    def search(self, owner: str, scopes: Sequence[str], query: str, k: int) -> list[SearchHit]:
        """The store's own full-text search, as ``owner`` and pinned to ``scopes`` (Postgres only)."""
        raise StoreError(
            f"{self.location}: the {self.backend} store has no search of its own; use a provider"
        )

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
        force: bool = False,
    ) -> RunKind:
        """Start a run for ``owner``, unless one is running (then RunInProgressError); returns its kind.

        With ``kind`` None the kind is decided inside the same transaction: ``generate`` when the owner has no
        active probe, else ``benchmark``. A running run whose process is gone is marked ``abandoned`` first;
        with ``force`` a running run is abandoned even though its process looks alive (a hung process).
        """
        run = {"id": run_id, "phase": phase, "provider": provider, "judge": judge, "prober": prober, "k": k}
        return self._claim(owner, kind, run, stale_after_s=stale_after_s, force=force)

    def _claim(
        self, owner: str, kind: RunKind | None, run: dict[str, Any], *, stale_after_s: float, force: bool
    ) -> RunKind:
        """The backend's :meth:`claim_run`; ``run``: the running row's columns (id, phase, provider...)."""
        raise NotImplementedError

    def release_run(self, run_id: str) -> None:
        """Let go of whatever holds the owner's run lock for ``run_id`` (after :meth:`finish_run`)."""

    # -- memories ---------------------------------------------------------------------------------------

    def upsert_memories(
        self, memories: Iterable[Memory], *, where: str = "", owner: str | None = None
    ) -> tuple[int, int]:
        """Insert new memories and update known ones (same id); returns ``(inserted, updated)``.

        Args:
            memories: what to write.
            where: the file, for messages.
            owner: the importing owner (Postgres: written in that owner's role, so the database refuses
                a memory of another owner); None for an admin import (as the server).

        Raises:
            MemoryImportError: a known id belongs to another owner.
        """
        memories = list(memories)
        inserted = updated = 0
        now = utc_now()
        with self.write():
            known = {}
            for m in memories:
                row = self._one("SELECT owner FROM memories WHERE id = ?", (m.id,))
                if row is not None and row["owner"] != m.owner:
                    raise MemoryImportError(
                        where, f"memory {m.id!r} already belongs to owner {row['owner']!r}", field="owner"
                    )
                known[m.id] = row is not None
        with self._importing(owner, where):
            for m in memories:
                self.execute(
                    f"INSERT INTO memories ({_MEMORY_COLS}, imported_at) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT (id) DO UPDATE SET scope=excluded.scope, visibility=excluded.visibility, "
                    "kind=excluded.kind, content=excluded.content, created_at=excluded.created_at, "
                    "invalidated_at=excluded.invalidated_at, lang=excluded.lang, source=excluded.source, "
                    "imported_at=excluded.imported_at",
                    (*astuple(m), now),  # the fields in _MEMORY_COLS' order
                )
                inserted += not known[m.id]
                updated += known[m.id]
        return inserted, updated

    def add_members(self, members: Iterable[ScopeMember], *, owner: str | None = None) -> int:
        """Record scope memberships (idempotent); returns how many were new.

        ``owner``: the importing owner (Postgres: written in that owner's role, so the database refuses a
        membership in a scope the owner does not administer); None for an admin import.
        """
        n = 0
        with self._importing(owner, "", membership=True):
            for m in members:
                cur = self.execute(
                    "INSERT INTO scope_members (scope, member) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    (m.scope, m.member),
                )
                n += cur.rowcount
        return n

    def log_import(
        self,
        path: str,
        *,
        importer: str,
        admin: bool,
        owners: Iterable[str],
        inserted: int,
        updated: int,
        members: int,
    ) -> None:
        """Append one line to ``import_log`` (who imported what, and whether as an admin)."""
        with self.write():
            self.execute(
                "INSERT INTO import_log (path, importer, admin, owners, inserted, updated, members, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (path, importer, int(admin), ",".join(owners), inserted, updated, members, utc_now()),
            )

    def import_log(self) -> list[dict[str, Any]]:
        """Every import into the store, oldest first."""
        return self._rows("SELECT * FROM import_log ORDER BY id")

    def members(self, scope: str) -> frozenset[str]:
        """The members of a shared ``scope`` (a team or project)."""
        rows = self._rows("SELECT member FROM scope_members WHERE scope = ?", (scope,))
        return frozenset(r["member"] for r in rows)

    def memory(self, memory_id: str) -> Memory | None:
        """The memory with id ``memory_id``, forgotten or not; None when there is none."""
        row = self._one(f"SELECT {_MEMORY_COLS} FROM memories WHERE id = ?", (memory_id,))
        return None if row is None else Memory(**row)

    # -- probes -----------------------------------------------------------------------------------------

    def active_probes(self, owner: str) -> list[Probe]:
        """The owner's probes not retired, oldest first (ties by id)."""
        return [p for p in self.probes(owner) if p.retired_at is None]

    def probes(self, owner: str) -> list[Probe]:
        """All of the owner's probes, retired ones included."""
        rows = self._rows(
            f"SELECT {_PROBE_COLS} FROM probes WHERE owner = ? ORDER BY created_at, id", (owner,)
        )
        return [Probe(**r) for r in rows]

    def retire_invalidated(self, owner: str) -> int:
        """Retire the owner's active probes whose source memory is invalidated; returns how many."""
        with self.write():
            cur = self.execute(
                "UPDATE probes SET retired_at = ?, retired_reason = 'source memory invalidated' "
                "WHERE owner = ? AND retired_at IS NULL AND memory_id IN "
                "(SELECT id FROM memories WHERE invalidated_at IS NOT NULL)",
                (utc_now(), owner),
            )
            return int(cur.rowcount)

    def unprobed_memories(
        self, owner: str, kinds: Iterable[str], *, limit: int, skip: Iterable[str] = ()
    ) -> list[Memory]:
        """The owner's own live memories of ``kinds`` never probed, newest first (ties by id)."""
        kinds = tuple(kinds)
        skip = tuple(skip)
        rows = self._rows(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE owner = ? AND invalidated_at IS NULL "
            f"AND kind IN ({','.join('?' * len(kinds))}) "
            + (f"AND id NOT IN ({','.join('?' * len(skip))}) " if skip else "")
            + "AND NOT EXISTS (SELECT 1 FROM probes p WHERE p.memory_id = m.id) "
            "ORDER BY created_at DESC, id LIMIT ?",
            (owner, *kinds, *skip, limit),
        )
        return [Memory(**r) for r in rows]

    def count_unprobed(self, owner: str, kinds: Iterable[str]) -> int:
        """How many of the owner's own live memories of ``kinds`` were never probed."""
        kinds = tuple(kinds)
        row = self._rows(
            f"SELECT count(*) AS n FROM memories m WHERE owner = ? AND invalidated_at IS NULL "
            f"AND kind IN ({','.join('?' * len(kinds))}) "
            "AND NOT EXISTS (SELECT 1 FROM probes p WHERE p.memory_id = m.id)",
            (owner, *kinds),
        )[0]
        return int(row["n"])

    def insert_probes(self, probes: Iterable[Probe]) -> int:
        """Insert new probes in one transaction; returns how many."""
        with self.write():
            n = 0
            for p in probes:
                self.execute(f"INSERT INTO probes ({_PROBE_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?)", astuple(p))
                n += 1
            return n

    # -- runs -------------------------------------------------------------------------------------------

    def _decide_kind(self, owner: str, kind: RunKind | None) -> RunKind:
        if kind is not None:
            return kind
        active = self._rows(
            "SELECT count(*) AS n FROM probes WHERE owner = ? AND retired_at IS NULL", (owner,)
        )[0]["n"]
        return "benchmark" if active else "generate"

    def _running(self, owner: str) -> dict[str, Any] | None:
        return self._one("SELECT * FROM runs WHERE owner = ? AND status = 'running'", (owner,))

    def _abandon(self, run_id: str, reason: str) -> None:
        self.execute(
            "UPDATE runs SET status = 'abandoned', phase = NULL, finished_at = ?, error = ? "
            "WHERE id = ? AND status = 'running'",
            (utc_now(), redact(reason), run_id),
        )

    def _insert_run(self, owner: str, kind: RunKind, run: Mapping[str, Any]) -> None:
        """Insert the ``running`` row; ``run`` holds its id, phase and more columns (provider, judge...)."""
        host, pid, started = this_process()
        stamp = utc_now()
        cols = {
            **run,
            "owner": owner,
            "kind": kind,
            "status": "running",
            "started_at": stamp,
            "heartbeat_at": stamp,
            "host": host,
            "pid": pid,
            "pid_started": started,
        }
        self.execute(
            f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            tuple(cols.values()),
        )

    def heartbeat(self, run_id: str, phase: str | None = None) -> None:
        """Mark a running run alive now, and record its ``phase`` when given."""
        with self.write():
            self.execute(
                "UPDATE runs SET heartbeat_at = ?, phase = coalesce(?, phase) WHERE id = ? AND status = 'running'",
                (utc_now(), phase, run_id),
            )

    def finish_run(self, run_id: str, status: RunStatus, error: str | None = None) -> None:
        """End a running run with ``status`` (its error redacted of secrets) and release its lock."""
        with self.write():
            self.execute(
                "UPDATE runs SET status = ?, phase = NULL, finished_at = ?, error = ? "
                "WHERE id = ? AND status = 'running'",
                (status, utc_now(), None if error is None else redact(error), run_id),
            )
        self.release_run(run_id)

    def runs(self, owner: str, kind: RunKind | None = None) -> list[dict[str, Any]]:
        """The owner's runs, oldest first."""
        sql = (
            "SELECT * FROM runs WHERE owner = ?"
            + (" AND kind = ?" if kind else "")
            + " ORDER BY started_at, id"
        )
        return self._rows(sql, (owner, kind) if kind else (owner,))

    def run(self, owner: str, run_id: str) -> dict[str, Any] | None:
        """One run of ``owner`` (None if it does not exist or belongs to someone else)."""
        return self._one("SELECT * FROM runs WHERE id = ? AND owner = ?", (run_id, owner))

    # -- recalls, results, usage ------------------------------------------------------------------------

    def add_recall(self, run_id: str, owner: str, recall: Recall) -> None:
        """Store what a probe's pinned recall surfaced in run ``run_id``."""
        surfaced = [asdict(s) for s in recall.surfaced]  # memory_id, text, score
        with self.write():
            self.execute(
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
        with_memory: bool | None = None,
        without_memory: bool | None = None,
        confidence: float | None = None,
        explanation: str | None = None,
        error: str | None = None,
    ) -> None:
        """Append one probe's result: judged (both booleans set) or failed (``error`` set, booleans None).

        ``error`` is redacted here (``bench_nb.redaction``) before it is stored: results are append-only, so a
        secret written once could never be removed."""
        status = "failed" if with_memory is None or without_memory is None else "judged"
        with self.write():
            self.execute(
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
                    None if error is None else redact(error),
                    utc_now(),
                ),
            )

    def add_usage(
        self, owner: str, purpose: Purpose, usage: ModelUsage, *, own_key: bool, run_id: str | None
    ) -> None:
        """Record one model call of the prober or the judge."""
        with self.write():
            self.execute(
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

    # -- reading a run's numbers (summary, frames, metering) --------------------------------------------

    def run_probe_modes(self, owner: str, run_id: str) -> dict[str, int]:
        """How many of the run's recalled probes each probe mode wrote."""
        rows = self._rows(
            "SELECT p.mode, count(*) AS n FROM recalls r JOIN probes p ON p.id = r.probe_id "
            "WHERE r.run_id = ? AND r.owner = ? GROUP BY p.mode ORDER BY p.mode",
            (run_id, owner),
        )
        return {r["mode"]: int(r["n"]) for r in rows}

    def run_counts(self, owner: str, run_id: str) -> dict[str, int]:
        """``judged``, ``failed``, ``with_memory``, ``without_memory`` and ``exclusive`` of one run."""
        row = self._rows(
            "SELECT count(*) FILTER (WHERE status = 'judged') AS judged, "
            "count(*) FILTER (WHERE status = 'failed') AS failed, "
            "coalesce(sum(with_memory), 0) AS with_memory, coalesce(sum(without_memory), 0) AS without_memory, "
            "count(*) FILTER (WHERE with_memory = 1 AND without_memory = 0) AS exclusive "
            "FROM results WHERE run_id = ? AND owner = ?",
            (run_id, owner),
        )[0]
        return {k: int(v) for k, v in row.items()}

    def result_rows(self, owner: str, run_id: str | None = None) -> list[dict[str, Any]]:
        """One row per (run, probe) of ``owner``: result, probe and recall columns, in insertion order."""
        return self._rows(
            "SELECT r.run_id, r.probe_id, r.memory_id, p.scope, p.question, r.probe_mode, r.status, "
            "r.with_memory, r.without_memory, r.confidence, r.judge, r.explanation, r.error, "
            "c.surfaced, c.dropped, c.latency_ms "
            "FROM results r JOIN probes p ON p.id = r.probe_id AND p.owner = r.owner "
            "LEFT JOIN recalls c ON c.run_id = r.run_id AND c.probe_id = r.probe_id AND c.owner = r.owner "
            "WHERE r.owner = ?" + (" AND r.run_id = ?" if run_id else "") + " ORDER BY r.id",
            (owner, run_id) if run_id else (owner,),
        )

    def usage_rows(self, owner: str) -> list[dict[str, Any]]:
        """The owner's model calls, oldest first: purpose, model, tokens, whether on their own key, and the
        run."""
        return self._rows(
            "SELECT id, owner, purpose, model, input_tokens, output_tokens, own_key, run_id, created_at "
            "FROM usage_events WHERE owner = ? ORDER BY id",
            (owner,),
        )

    def usage_totals(self) -> list[dict[str, Any]]:
        """Calls and tokens per purpose, without calls made on owners' own keys."""
        return self._rows(
            "SELECT purpose, count(*) AS calls, coalesce(sum(input_tokens), 0) AS input_tokens, "
            "coalesce(sum(output_tokens), 0) AS output_tokens FROM usage_events WHERE own_key = 0 "
            "GROUP BY purpose"
        )


class SqliteRoiStore(RoiStore):
    """The embedded SQLite store (one file; its directory is created if needed)."""

    backend = "sqlite"
    default_provider = "sqlite"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._migrate()  # with foreign keys off (a table rebuild drops a referenced table), checked after
            self._db.execute("PRAGMA foreign_keys=ON")
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
                steps = _statements(MIGRATE_1_TO_2) if version == 1 else []
                if version in (1, 2):
                    tables = {
                        r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                    }
                    steps += [
                        s for name in REBUILT_FOR_3 if name in tables for s in _statements(rebuild(name))
                    ]
                for statement in steps + _statements(SCHEMA):
                    self._db.execute(statement)
                broken = self._db.execute("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise StoreError(
                        f"{self.path}: migrating the ROI store to schema version {SCHEMA_VERSION} would break "
                        f"{len(broken)} reference(s), e.g. table {broken[0][0]}: nothing was changed"
                    )
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @property
    def schema_version(self) -> int:
        """The SQLite file's schema version (``PRAGMA user_version``)."""
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Close the SQLite connection."""
        self._db.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``): committed on success, rolled back on error."""
        if self._db.in_transaction:  # nested: part of the enclosing transaction
            yield self._db
            return
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

    def readable_memories(self, reader: str, scopes: Iterable[str]) -> list[Memory]:
        """The live memories of ``scopes`` that ``reader`` may read, scope by scope, oldest first."""
        out: list[Memory] = []
        for scope in dict.fromkeys(scopes):
            members = self.members(scope)
            rows = self._rows(
                f"SELECT {_MEMORY_COLS} FROM memories WHERE scope = ? AND invalidated_at IS NULL "
                "ORDER BY created_at, id",
                (scope,),
            )
            out.extend(m for m in (Memory(**r) for r in rows) if can_read(reader, m, members))
        return out

    def _claim(
        self, owner: str, kind: RunKind | None, run: dict[str, Any], *, stale_after_s: float, force: bool
    ) -> RunKind:
        """The running row names its process (host, pid, start time): a run whose process is gone is abandoned
        at once; one on another host, or from an older store, after ``stale_after_s`` without a heartbeat. The
        unique partial index on running runs makes this hold across processes."""
        with self.write():
            row = self._running(owner)
            if row is not None:
                reason = "taken over with --force" if force else _stale_reason(row, stale_after_s)
                if reason is None:
                    raise RunInProgressError(owner, row["id"], row["phase"], holder=describe_holder(row))
                self._abandon(row["id"], reason)
            kind = self._decide_kind(owner, kind)
            try:
                self._insert_run(owner, kind, run)
            except sqlite3.IntegrityError as err:  # the index caught a race this process could not see
                raise RunInProgressError(owner, "another run", None) from err
        return kind


def borrow_store(db: str | Path | RoiStore) -> AbstractContextManager[RoiStore]:
    """For ``with``: an open store as it is (left open), or a store opened on a path or URL and closed after."""
    return nullcontext(db) if isinstance(db, RoiStore) else RoiStore(db)


# -- which process holds a run ------------------------------------------------------------------------------


def this_process() -> tuple[str, int, float]:
    """``(host, pid, start time)`` of this process: what a running run records about its holder."""
    pid = os.getpid()
    return socket.gethostname(), pid, psutil.Process(pid).create_time()


def holder_alive(host: str | None, pid: int | None, started: float | None) -> bool | None:
    """Whether the process that claimed a run still runs: None when that cannot be told from here (another
    host, or no pid recorded). A pid reused by a newer process (another start time) counts as gone."""
    if host is None or pid is None or host != socket.gethostname():
        return None
    try:
        created = psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.Error:
        return None
    if started is not None and abs(created - started) > 1.0:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def describe_holder(row: Row) -> str | None:
    """Who holds a running run, for messages (process, host, since when); None when the row names no process."""
    if row.get("pid") is None:
        return None
    return f"process {row['pid']} on {row.get('host') or 'an unknown host'}, since {row['started_at']}"


def _stale_reason(row: Row, stale_after_s: float) -> str | None:
    """Why the running run ``row`` may be abandoned, or None while it may still be alive."""
    alive = holder_alive(row.get("host"), row.get("pid"), row.get("pid_started"))
    if alive is False:
        return f"its process {row['pid']} on {row['host']} is gone (killed or crashed)"
    if alive is None:
        stale_before = normalize_time(datetime.now(UTC) - timedelta(seconds=stale_after_s))
        if row["heartbeat_at"] < stale_before:
            return f"no heartbeat for {stale_after_s:.0f} s (crashed?)"
    return None


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
