"""The ROI store's tables, defined once: columns, types, keys, constraints, indexes and the write rules both
backends enforce.

Each backend's DDL is made from :data:`TABLES` by :func:`create_tables`:

- :mod:`bench_nb.roi.schema` (SQLite) adds the triggers that enforce the write rules there;
- :mod:`bench_nb.roi.pg_schema` (Postgres) adds its own tables (``meta``, ``owners``), the column
  ``runs.lock_backend``, the full-text index, and the roles, privileges, triggers and policies that enforce
  the same rules there.

A column type here is one of four words; each backend maps them to its own SQL types (:data:`TEXT`,
:data:`INTEGER`, :data:`REAL`, and :data:`ROW_ID`: an integer key the database assigns). CHECK conditions and
index conditions are written in the SQL both dialects share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

ColumnType = Literal["text", "integer", "real", "row id"]
TEXT: ColumnType = "text"
INTEGER: ColumnType = "integer"
REAL: ColumnType = "real"
ROW_ID: ColumnType = "row id"  # the table's primary key, assigned by the database on INSERT


@dataclass(frozen=True)
class Column:
    """A column: its name, one of the four column types, and its constraints."""

    name: str
    type: ColumnType
    not_null: bool = False
    primary_key: bool = False  # a key of one column; a ROW_ID column is always the primary key
    unique: bool = False
    references: str | None = None  # "table (column)"
    check: str | None = None


@dataclass(frozen=True)
class Index:
    """An index of a table, unique or not, partial when ``where`` is given."""

    name: str
    columns: tuple[str, ...]
    unique: bool = False
    where: str | None = None  # a partial index's condition


@dataclass(frozen=True)
class Guard:
    """A table whose rows are never deleted or replaced and accept only some changes: an UPDATE may change
    only ``updatable``, and nothing once ``frozen_when`` holds of the row as it was (``OLD``)."""

    trigger: str  # the name of the trigger that refuses other updates (both backends)
    updatable: tuple[str, ...]
    frozen_when: str
    refused: str  # the error of a refused UPDATE
    not_deleted: str  # the error of a DELETE


@dataclass(frozen=True)
class Table:
    """A table: its columns, keys, constraints, indexes and write rules (append-only, or a guard)."""

    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()  # a key of several columns (one column: Column.primary_key)
    unique: tuple[tuple[str, ...], ...] = ()  # UNIQUE constraints of several columns
    checks: tuple[str, ...] = ()  # CHECK constraints over several columns
    indexes: tuple[Index, ...] = ()
    append_only: bool = False  # no UPDATE, no DELETE, no INSERT that replaces a row
    guard: Guard | None = None

    @property
    def sealed(self) -> bool:
        """Rows are never replaced: an INSERT colliding on one of :attr:`keys` is refused."""
        return self.append_only or self.guard is not None

    @property
    def keys(self) -> tuple[tuple[str, ...], ...]:
        """The primary key, then every unique key: what an INSERT may collide on."""
        single = tuple((c.name,) for c in self.columns if c.primary_key or c.type == ROW_ID)
        unique = tuple((c.name,) for c in self.columns if c.unique)
        return (*single, *((self.primary_key,) if self.primary_key else ()), *unique, *self.unique)


_KINDS = "'fact', 'decision', 'preference', 'convention', 'gotcha', 'reference', 'episode', 'task', 'open-question'"
#: The probe modes the store accepts (``records.ProbeMode``); a new one needs a schema migration (SQLite
#: ``schema.MIGRATE_2_TO_3``, Postgres ``pg_schema.MIGRATE``), since both backends check it.
PROBE_MODES = ("template", "paraphrase", "llm", "distractor")
_PROBE_MODES = ", ".join(f"'{m}'" for m in PROBE_MODES)

TABLES: tuple[Table, ...] = (
    Table(
        "memories",
        (
            Column("id", TEXT, primary_key=True),
            Column("owner", TEXT, not_null=True),
            Column("scope", TEXT, not_null=True),
            Column("visibility", TEXT, not_null=True, check="visibility IN ('private', 'shared')"),
            Column("kind", TEXT, not_null=True, check=f"kind IN ({_KINDS})"),
            Column("content", TEXT, not_null=True),
            Column("created_at", TEXT, not_null=True),
            Column("invalidated_at", TEXT),
            Column("lang", TEXT),
            Column("source", TEXT),
            Column("imported_at", TEXT, not_null=True),
        ),
        indexes=(
            Index("memories_by_owner", ("owner", "kind", "created_at")),
            Index("memories_by_scope", ("scope",)),
        ),
    ),
    Table(
        "scope_members",
        (Column("scope", TEXT, not_null=True), Column("member", TEXT, not_null=True)),
        primary_key=("scope", "member"),
    ),
    Table(
        "probes",
        (
            Column("id", TEXT, primary_key=True),
            Column("owner", TEXT, not_null=True),
            Column("memory_id", TEXT, not_null=True, unique=True, references="memories (id)"),
            Column("scope", TEXT, not_null=True),
            Column("question", TEXT, not_null=True),
            Column("mode", TEXT, not_null=True, check=f"mode IN ({_PROBE_MODES})"),
            Column("model", TEXT),
            Column("created_at", TEXT, not_null=True),
            Column("retired_at", TEXT),
            Column("retired_reason", TEXT),
        ),
        indexes=(Index("probes_by_owner", ("owner", "retired_at")),),
        guard=Guard(
            trigger="probes_only_retired",
            updatable=("retired_at", "retired_reason"),
            frozen_when="OLD.retired_at IS NOT NULL",
            refused="a probe can only be retired, once",
            not_deleted="probes are never deleted: retire them",
        ),
    ),
    Table(
        "runs",
        (
            Column("id", TEXT, primary_key=True),
            Column("owner", TEXT, not_null=True),
            Column("kind", TEXT, not_null=True, check="kind IN ('generate', 'benchmark')"),
            Column(
                "status", TEXT, not_null=True, check="status IN ('running', 'done', 'failed', 'abandoned')"
            ),
            Column("phase", TEXT),
            Column("provider", TEXT),
            Column("judge", TEXT),
            Column("prober", TEXT),
            Column("k", INTEGER),
            Column("started_at", TEXT, not_null=True),
            Column("heartbeat_at", TEXT, not_null=True),
            Column("finished_at", TEXT),
            Column("error", TEXT),
            # the process running the run (schema version 2 of the SQLite store)
            Column("host", TEXT),
            Column("pid", INTEGER),
            Column("pid_started", REAL),
        ),
        indexes=(
            # at most one running run per owner: one run at a time per owner, across processes
            Index("one_running_run_per_owner", ("owner",), unique=True, where="status = 'running'"),
            Index("runs_by_owner", ("owner", "started_at")),
        ),
        guard=Guard(
            trigger="runs_frozen_when_finished",
            updatable=("status", "phase", "heartbeat_at", "finished_at", "error"),
            frozen_when="OLD.status <> 'running'",
            refused="a finished run is frozen; a running run only changes its status, phase and heartbeat",
            not_deleted="runs are never deleted",
        ),
    ),
    Table(
        "recalls",
        (
            Column("run_id", TEXT, not_null=True, references="runs (id)"),
            Column("probe_id", TEXT, not_null=True, references="probes (id)"),
            Column("owner", TEXT, not_null=True),
            Column("surfaced", TEXT, not_null=True),
            Column("hits", TEXT, not_null=True),
            Column("dropped", INTEGER, not_null=True),
            Column("latency_ms", REAL, not_null=True),
            Column("created_at", TEXT, not_null=True),
        ),
        primary_key=("run_id", "probe_id"),
        append_only=True,
    ),
    Table(
        "results",
        (
            Column("id", ROW_ID),
            Column("run_id", TEXT, not_null=True, references="runs (id)"),
            Column("probe_id", TEXT, not_null=True, references="probes (id)"),
            Column("owner", TEXT, not_null=True),
            Column("memory_id", TEXT, not_null=True),
            Column("probe_mode", TEXT, not_null=True, check=f"probe_mode IN ({_PROBE_MODES})"),
            Column("status", TEXT, not_null=True, check="status IN ('judged', 'failed')"),
            Column("with_memory", INTEGER, check="with_memory IN (0, 1)"),
            Column("without_memory", INTEGER, check="without_memory IN (0, 1)"),
            Column("confidence", REAL),
            Column("judge", TEXT, not_null=True),
            Column("explanation", TEXT),
            Column("error", TEXT),
            Column("created_at", TEXT, not_null=True),
        ),
        unique=(("run_id", "probe_id"),),
        checks=("(status = 'judged') = (with_memory IS NOT NULL AND without_memory IS NOT NULL)",),
        indexes=(Index("results_by_owner", ("owner", "run_id")),),
        append_only=True,
    ),
    Table(
        "usage_events",
        (
            Column("id", ROW_ID),
            Column("owner", TEXT, not_null=True),
            Column("purpose", TEXT, not_null=True, check="purpose IN ('prober', 'judge')"),
            Column("model", TEXT, not_null=True),
            Column("input_tokens", INTEGER),
            Column("output_tokens", INTEGER),
            Column("own_key", INTEGER, not_null=True, check="own_key IN (0, 1)"),
            Column("run_id", TEXT),
            Column("created_at", TEXT, not_null=True),
        ),
        append_only=True,
    ),
    Table(
        "import_log",
        (
            Column("id", ROW_ID),
            Column("path", TEXT, not_null=True),
            Column("importer", TEXT, not_null=True),
            Column("admin", INTEGER, not_null=True, check="admin IN (0, 1)"),
            Column("owners", TEXT, not_null=True),
            Column("inserted", INTEGER, not_null=True),
            Column("updated", INTEGER, not_null=True),
            Column("members", INTEGER, not_null=True),
            Column("created_at", TEXT, not_null=True),
        ),
        append_only=True,
    ),
)


def create_tables(
    types: Mapping[ColumnType, str],
    *,
    if_not_exists: bool,
    extra_columns: Mapping[str, tuple[Column, ...]] | None = None,
) -> str:
    """The CREATE TABLE and CREATE INDEX statements of :data:`TABLES` in one dialect.

    Args:
        types: each column type's SQL (a ``ROW_ID``'s includes its key: ``INTEGER PRIMARY KEY AUTOINCREMENT``).
        if_not_exists: write ``IF NOT EXISTS`` (SQLite runs the script on every migration).
        extra_columns: a backend's own columns, appended to a table's.
    """
    extra = extra_columns or {}
    exists = " IF NOT EXISTS" if if_not_exists else ""
    parts = []
    for table in TABLES:
        parts.append(create_table(table, types, if_not_exists=if_not_exists, extra=extra.get(table.name, ())))
        for index in table.indexes:
            unique = " UNIQUE" if index.unique else ""
            where = f" WHERE {index.where}" if index.where else ""
            parts.append(
                f"CREATE{unique} INDEX{exists} {index.name} ON {table.name} ({', '.join(index.columns)}){where};"
            )
    return "\n".join(parts) + "\n"


def create_table(
    table: Table,
    types: Mapping[ColumnType, str],
    *,
    if_not_exists: bool = False,
    extra: tuple[Column, ...] = (),
    name: str | None = None,
) -> str:
    """The CREATE TABLE statement of ``table`` (named ``name`` when given: a migration's new copy)."""
    lines = [_column_sql(c, types) for c in (*table.columns, *extra)]
    if table.primary_key:
        lines.append(f"PRIMARY KEY ({', '.join(table.primary_key)})")
    lines += [f"UNIQUE ({', '.join(key)})" for key in table.unique]
    lines += [f"CHECK ({check})" for check in table.checks]
    body = ",\n    ".join(lines)
    exists = " IF NOT EXISTS" if if_not_exists else ""
    return f"CREATE TABLE{exists} {name or table.name} (\n    {body}\n);"


def _column_sql(column: Column, types: Mapping[ColumnType, str]) -> str:
    words = [column.name, types[column.type]]
    if column.not_null:
        words.append("NOT NULL")
    if column.primary_key:
        words.append("PRIMARY KEY")
    if column.unique:
        words.append("UNIQUE")
    if column.references:
        words.append(f"REFERENCES {column.references}")
    if column.check:
        words.append(f"CHECK ({column.check})")
    return " ".join(words)
