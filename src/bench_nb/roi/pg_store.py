"""The ROI store on Postgres: the same tables and behaviour as the SQLite store, with the database deciding who
reads what (roles, privileges and row-level security: see :mod:`bench_nb.roi.pg_schema`).

bench_nb connects with the URL's role, the **server** role. What an owner reads or writes for itself (the read
set and the search of a recall, an owner's import) runs in a transaction after ``SET LOCAL ROLE`` to the owner's
role, so the policies decide; the search is pinned to the probe's scopes by a transaction-local setting.

One run per owner: a claim locks the owner's row of ``owners`` (``SELECT ... FOR UPDATE NOWAIT``) in a
transaction of its own connection, held until the run finishes. A second claim fails at once and reports the
run in progress; when the holder's process dies its connection closes, Postgres releases the lock, and the
next claim marks the orphaned ``running`` row abandoned. The unique partial index on running runs backs this up.

Needs ``psycopg`` (``pip install 'bench-nb[postgres]'``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bench_nb.providers.query import query_terms
from bench_nb.records import SearchHit
from bench_nb.redaction import redact
from bench_nb.roi.errors import MemoryImportError, RunInProgressError, StoreError
from bench_nb.roi.memory import Memory, utc_now
from bench_nb.roi.pg_schema import DEFAULT_SERVER_ROLE, MIGRATE, PG_SCHEMA_VERSION, SCHEMA, setup_sql
from bench_nb.roi.records import RunKind
from bench_nb.roi.store import _MEMORY_COLS, RoiStore, describe_holder

try:
    import psycopg
    from psycopg import sql as pgsql
except ImportError:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]

#: A run's lock connections, by run id (a run may be finished by another store object or thread).
_HELD: dict[str, Any] = {}
_HELD_LOCK = threading.Lock()
FORCE_LOCK_TIMEOUT_S = 10
#: How long a refused claim waits for the holder's running row to be committed, to name it.
HOLDER_ROW_WAIT_S = 2.0


def _need_psycopg() -> None:
    if psycopg is None:
        raise StoreError("a postgresql:// store needs psycopg: pip install 'bench-nb[postgres]'")


class _Row(dict[str, Any]):
    """A row by column name, or by position (``row[0]``), like ``sqlite3.Row``."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int):
            return list(self.values())[key]
        return super().__getitem__(key)


def _row_factory(cursor: Any) -> Any:
    names = [c.name for c in cursor.description] if cursor.description else []
    return lambda values: _Row(zip(names, values, strict=True))


def _connect(dsn: str, *, autocommit: bool = True) -> Any:
    _need_psycopg()
    return psycopg.connect(
        dsn, autocommit=autocommit, row_factory=_row_factory, options=f"-c search_path={SCHEMA}"
    )


def setup_postgres(admin_dsn: str, *, server_role: str | None = None) -> bool:
    """Create the ROI schema, roles and policies in the database of ``admin_dsn`` (once; returns False when
    it is already set up). Run as a superuser, or the database owner with CREATEROLE."""
    _need_psycopg()
    script = setup_sql(server_role or DEFAULT_SERVER_ROLE)
    try:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,)).fetchone()
            if exists:
                return False
            with conn.transaction():
                conn.execute(script.encode())
    except psycopg.Error as err:
        raise StoreError(f"{redact(admin_dsn)}: cannot set up the ROI schema ({err})") from err
    return True


def migrate_postgres(admin_dsn: str) -> tuple[int, int]:
    """Bring a ROI schema set up by an older bench_nb to this one's version (as the admin who owns it), in one
    transaction, keeping every row; returns the versions before and after (equal: nothing to do).

    Raises:
        StoreError: no ROI schema there, a newer one, or a step failed (nothing is changed then).
    """
    _need_psycopg()
    try:
        with psycopg.connect(admin_dsn, autocommit=True) as conn, conn.transaction():
            row = conn.execute(
                f"SELECT value FROM {SCHEMA}.meta WHERE key = 'schema_version' FOR UPDATE"
            ).fetchone()
            if row is None:
                raise StoreError(
                    f"{redact(admin_dsn)}: the ROI schema has no schema version in its meta table"
                )
            before = version = int(row[0])
            if version > PG_SCHEMA_VERSION:
                raise StoreError(
                    f"{redact(admin_dsn)}: ROI store schema version {version} is newer than this bench_nb "
                    f"({PG_SCHEMA_VERSION}); upgrade bench_nb"
                )
            while version < PG_SCHEMA_VERSION:
                conn.execute(MIGRATE[version].encode())
                version += 1
    except psycopg.Error as err:
        raise StoreError(f"{redact(admin_dsn)}: cannot migrate the ROI schema ({err})") from err
    return before, version


class PostgresRoiStore(RoiStore):
    """The ROI store in a Postgres database set up by :func:`setup_postgres` (``bench-nb roi setup``).

    Args:
        dsn: a ``postgresql://`` URL whose role is the server role.
    """

    backend = "postgres"
    default_provider = "postgres-fts"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.location = redact(dsn)
        self._roles: dict[str, str] = {}
        _need_psycopg()
        try:
            self._conn = _connect(dsn)
        except psycopg.Error as err:
            raise StoreError(f"{self.location}: cannot connect to the ROI store ({err})") from err
        me = self._conn.execute(
            "SELECT rolname, rolsuper OR rolbypassrls AS bypass FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        if me["bypass"]:
            self.close()
            raise StoreError(
                f"{self.location}: role {me['rolname']!r} bypasses row-level security (a superuser?): connect "
                "as the ROI server role (`bench-nb roi setup --server-role`), so that the database's rules hold"
            )
        owned = self._conn.execute(
            "SELECT string_agg(c.relname, ', ' ORDER BY c.relname) AS tables FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relrowsecurity "
            "AND NOT c.relforcerowsecurity AND pg_has_role(current_user, c.relowner, 'USAGE')",
            (SCHEMA,),
        ).fetchone()
        if owned["tables"]:
            self.close()
            raise StoreError(
                f"{self.location}: role {me['rolname']!r} owns the ROI tables ({owned['tables']}) or has their "
                "owner's privileges (the admin who set them up?), and row-level security does not hold for a "
                "table's owner: connect as the ROI server role (`bench-nb roi setup --server-role`), so that "
                "the database's rules hold"
            )
        version = self.schema_version
        if version > PG_SCHEMA_VERSION:
            self.close()
            raise StoreError(
                f"{self.location}: ROI store schema version {version} is newer than this bench_nb "
                f"({PG_SCHEMA_VERSION}); upgrade bench_nb"
            )
        if version < PG_SCHEMA_VERSION:
            self.close()  # the server role may not change the schema: its admin migrates it, once
            raise StoreError(
                f"{self.location}: ROI store schema version {version} is older than this bench_nb's "
                f"({PG_SCHEMA_VERSION}); migrate it once, keeping its data, with "
                "`bench-nb roi setup --admin-db <admin URL>`"
            )

    @property
    def schema_version(self) -> int:
        """The ROI schema version the database holds (its ``meta`` table).

        Raises:
            StoreError: the role can read no ROI schema (set it up with ``bench-nb roi setup``).
        """
        try:
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except psycopg.Error as err:
            raise StoreError(
                f"{self.location}: no ROI schema readable by this role ({err.diag.message_primary}); "
                "set it up once with `bench-nb roi setup --admin-db <admin URL>`"
            ) from err
        return int(row["value"])

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    @contextmanager
    def write(self) -> Iterator[Any]:
        """A write transaction: committed on success, rolled back on error."""
        with self._conn.transaction():
            yield self._conn

    def execute(self, sql: str, params: Iterable[Any] = ()) -> Any:
        """Raw SQL with ``?`` placeholders (rewritten to psycopg's ``%s``); returns a cursor."""
        params = tuple(params)
        if params:
            sql = sql.replace("%", "%%").replace("?", "%s")
        return self._conn.execute(sql.encode(), params or None)

    # -- acting as an owner -------------------------------------------------------------------------

    def owner_role(self, owner: str) -> str:
        """The owner's role (created on first use by the database's ``ensure_owner``)."""
        role = self._roles.get(owner)
        if role is None:
            try:
                role = str(self._conn.execute("SELECT ensure_owner(%s) AS r", (owner,)).fetchone()["r"])
            except psycopg.Error as err:
                raise StoreError(f"{self.location}: no role for owner {owner!r} ({err})") from err
            self._roles[owner] = role
        return role

    @contextmanager
    def _as_owner(self, owner: str, scopes: Sequence[str] = ()) -> Iterator[Any]:
        role = self.owner_role(owner)
        with self._conn.transaction():
            self._conn.execute(pgsql.SQL("SET LOCAL ROLE {}").format(pgsql.Identifier(role)))
            self._conn.execute("SELECT set_config('bench_nb_roi.read_scopes', %s, true)", (",".join(scopes),))
            yield self._conn

    def readable_memories(self, reader: str, scopes: Iterable[str]) -> list[Memory]:
        """As ``reader``, pinned to ``scopes``: the query filters nothing itself, the policies do."""
        with self._as_owner(reader, tuple(dict.fromkeys(scopes))):
            rows = self._rows(
                f"SELECT {_MEMORY_COLS} FROM memories WHERE invalidated_at IS NULL ORDER BY created_at, id"
            )
        return [Memory(**r) for r in rows]

    def search(self, owner: str, scopes: Sequence[str], query: str, k: int) -> list[SearchHit]:
        """Full-text search (``to_tsvector('english')``, the query's words OR-ed, ranked by ``ts_rank``), the
        counterpart of the sqlite provider's FTS5/BM25, run as ``owner`` pinned to ``scopes``."""
        terms = query_terms(query)
        if not terms:
            return []
        tsquery = " || ".join(["plainto_tsquery('english', %s)"] * len(terms))
        with self._as_owner(owner, scopes):
            rows = self._conn.execute(
                "SELECT id, content, created_at, ts_rank(to_tsvector('english', content), q) AS score "
                f"FROM memories CROSS JOIN (SELECT {tsquery}) AS t(q) "
                "WHERE invalidated_at IS NULL AND to_tsvector('english', content) @@ q "
                "ORDER BY score DESC, id LIMIT %s",
                (*terms, k),
            ).fetchall()
        return [
            SearchHit(
                text=r["content"],
                score=float(r["score"]),
                session_id=r["id"],
                date=r["created_at"],
                hit_id=r["id"],
            )
            for r in rows
        ]

    @contextmanager
    def _importing(self, owner: str | None, where: str, *, membership: bool = False) -> Iterator[Any]:
        """An import's transaction; a write the database's row rules refuse is a ``MemoryImportError`` (a
        membership's names the field ``scope``)."""
        try:
            with super()._importing(owner, where, membership=membership) as conn:
                yield conn
        except psycopg.errors.InsufficientPrivilege as err:
            raise MemoryImportError(
                where,
                f"{'membership ' if membership else ''}refused by the database for owner {owner!r}: "
                f"{err.diag.message_primary}",
                "scope" if membership else None,
            ) from err

    # -- runs -----------------------------------------------------------------------------------------

    def _claim(
        self, owner: str, kind: RunKind | None, run: dict[str, Any], *, stale_after_s: float, force: bool
    ) -> RunKind:
        """The owner's lock is a row lock held by this run's own connection; a running row found while holding
        it belongs to a process that is gone. ``force`` ends the session of a holder that hangs
        (``pg_terminate_backend``). ``stale_after_s`` is not needed here."""
        self.owner_role(owner)  # the owner's row exists
        lock = _connect(self.dsn, autocommit=False)
        try:
            forced = False
            try:
                lock.execute("SELECT claimed_at FROM owners WHERE owner = %s FOR UPDATE NOWAIT", (owner,))
            except psycopg.errors.LockNotAvailable:
                lock.rollback()
                row = self._holders_row(owner)
                if not force:
                    raise RunInProgressError(
                        owner,
                        row["id"] if row else "another run",
                        row["phase"] if row else None,
                        holder=describe_holder(row) if row else None,
                    ) from None
                if row is not None and row.get("lock_backend"):
                    self._conn.execute("SELECT pg_terminate_backend(%s)", (row["lock_backend"],))
                lock.execute(f"SET LOCAL lock_timeout = '{FORCE_LOCK_TIMEOUT_S}s'")
                lock.execute("SELECT claimed_at FROM owners WHERE owner = %s FOR UPDATE", (owner,))
                forced = True
            lock.execute("UPDATE owners SET claimed_at = %s WHERE owner = %s", (utc_now(), owner))
            backend = lock.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
            with self.write():
                row = self._running(owner)
                if row is not None:
                    self._abandon(
                        row["id"],
                        "taken over with --force"
                        if forced
                        else f"its process {row['pid']} on {row['host']} is gone "
                        "(its connection closed, which released the run lock)",
                    )
                kind = self._decide_kind(owner, kind)
                self._insert_run(owner, kind, {**run, "lock_backend": backend})
        except psycopg.errors.UniqueViolation as err:  # the index on running runs: a claim that took no lock
            lock.close()
            raise RunInProgressError(owner, "another run", None) from err
        except BaseException:
            lock.close()
            raise
        with _HELD_LOCK:
            _HELD[run["id"]] = lock
        return kind

    def _holders_row(self, owner: str) -> dict[str, Any] | None:
        """The running row of the lock's holder: it may not be committed yet when its claim is this close."""
        deadline = time.monotonic() + HOLDER_ROW_WAIT_S
        while (row := self._running(owner)) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return row

    def release_run(self, run_id: str) -> None:
        """Commit and close the connection that holds the owner's run lock for ``run_id``, if this process
        holds it."""
        with _HELD_LOCK:
            lock = _HELD.pop(run_id, None)
        if lock is not None:
            try:
                lock.commit()
            finally:
                lock.close()
