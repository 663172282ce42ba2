"""Both backends' live tables, read back from a real database each (SQLite's schema through its pragmas,
Postgres' information_schema), have the columns, types, nullability and keys of the one definition in
bench_nb.roi.tables; the only other columns are a backend's own, declared beside its schema."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
from pg_cluster import Cluster

from bench_nb.roi import RoiStore
from bench_nb.roi.pg_schema import EXTRA_COLUMNS, SCHEMA
from bench_nb.roi.tables import INTEGER, REAL, ROW_ID, TABLES, TEXT, Column, Table

# Each definition type as the database reports it (information_schema spells Postgres' types its own way;
# a ROW_ID is SQLite's AUTOINCREMENT rowid and Postgres' identity column).
REPORTED = {
    "sqlite": {TEXT: "TEXT", INTEGER: "INTEGER", REAL: "REAL", ROW_ID: "INTEGER AUTOINCREMENT"},
    "postgres": {TEXT: "text", INTEGER: "integer", REAL: "double precision", ROW_ID: "bigint identity"},
}
OWN_TABLES = {"sqlite": {"sqlite_sequence"}, "postgres": {"meta", "owners"}}
OWN_COLUMNS = {"sqlite": {}, "postgres": EXTRA_COLUMNS}


@dataclass(frozen=True)
class Shape:
    columns: tuple[tuple[str, str, bool], ...]  # (name, type as reported, NOT NULL)
    primary_key: tuple[str, ...]
    unique: frozenset[tuple[str, ...]]
    references: frozenset[tuple[str, str]]  # (column, "table (column)")


def expected(table: Table, backend: str) -> Shape:
    pk = table.primary_key or tuple(c.name for c in table.columns if c.primary_key or c.type == ROW_ID)
    columns: tuple[Column, ...] = (*table.columns, *OWN_COLUMNS[backend].get(table.name, ()))

    def not_null(c: Column) -> bool:
        # Postgres makes a primary key's columns NOT NULL; SQLite reports only what was declared
        return c.not_null or (backend == "postgres" and c.name in pk)

    return Shape(
        columns=tuple((c.name, REPORTED[backend][c.type], not_null(c)) for c in columns),
        primary_key=pk,
        unique=frozenset({*((c.name,) for c in table.columns if c.unique), *table.unique}),
        references=frozenset((c.name, c.references) for c in table.columns if c.references),
    )


def sqlite_shapes(path: Path) -> dict[str, Shape]:
    with sqlite3.connect(path) as db:
        tables = {
            name: sql for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        }
        out = {}
        for name, sql in tables.items():
            info = db.execute(
                f"PRAGMA table_info({name})"
            ).fetchall()  # cid, name, type, notnull, default, pk
            autoincrement = "AUTOINCREMENT" in sql.upper()
            columns = tuple(
                (col, f"{typ} AUTOINCREMENT" if pk and autoincrement else typ, bool(notnull))
                for _, col, typ, notnull, _, pk in info
            )
            unique = frozenset(
                tuple(r[2] for r in db.execute(f"PRAGMA index_info({index})"))
                for _, index, _, origin, _ in db.execute(f"PRAGMA index_list({name})")
                if origin == "u"
            )
            references = frozenset(
                (r[3], f"{r[2]} ({r[4]})") for r in db.execute(f"PRAGMA foreign_key_list({name})")
            )
            out[name] = Shape(
                columns=columns,
                primary_key=tuple(col for _, col, *_, pk in sorted(info, key=lambda r: r[5]) if pk),
                unique=unique,
                references=references,
            )
    return out


def postgres_shapes(url: str) -> dict[str, Shape]:
    import psycopg

    with psycopg.connect(url) as conn:
        columns: dict[str, list[tuple[str, str, bool]]] = {}
        for table, col, typ, nullable, identity in conn.execute(
            "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, c.is_identity "
            "FROM information_schema.columns c JOIN information_schema.tables t "
            "  ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
            "WHERE c.table_schema = %s AND t.table_type = 'BASE TABLE' "
            "ORDER BY c.table_name, c.ordinal_position",
            (SCHEMA,),
        ):
            reported = f"{typ} identity" if identity == "YES" else typ
            columns.setdefault(table, []).append((col, reported, nullable == "NO"))
        keys: dict[tuple[str, str], list[str]] = {}
        kinds: dict[str, str] = {}
        for table, constraint, kind, col in conn.execute(
            "SELECT t.table_name, t.constraint_name, t.constraint_type, k.column_name "
            "FROM information_schema.table_constraints t JOIN information_schema.key_column_usage k "
            "  ON k.constraint_schema = t.constraint_schema AND k.constraint_name = t.constraint_name "
            "WHERE t.table_schema = %s AND t.constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') "
            "ORDER BY t.table_name, t.constraint_name, k.ordinal_position",
            (SCHEMA,),
        ):
            keys.setdefault((table, constraint), []).append(col)
            kinds[constraint] = kind
        targets = {
            constraint: f"{table} ({col})"
            for constraint, table, col in conn.execute(
                "SELECT constraint_name, table_name, column_name FROM information_schema.constraint_column_usage "
                "WHERE constraint_schema = %s",
                (SCHEMA,),
            )
            if kinds.get(constraint) == "FOREIGN KEY"
        }
    out = {}
    for table, cols in columns.items():
        mine = {c: tuple(k) for (t, c), k in keys.items() if t == table}
        out[table] = Shape(
            columns=tuple(cols),
            primary_key=next((k for c, k in mine.items() if kinds[c] == "PRIMARY KEY"), ()),
            unique=frozenset(k for c, k in mine.items() if kinds[c] == "UNIQUE"),
            references=frozenset((k[0], targets[c]) for c, k in mine.items() if kinds[c] == "FOREIGN KEY"),
        )
    return out


@pytest.fixture
def live(request: pytest.FixtureRequest, db: Path | str) -> tuple[str, dict[str, Shape]]:
    """A backend's name and its live tables' shapes, read from a database just created by bench_nb."""
    if isinstance(db, Path):
        RoiStore(db).close()
        return "sqlite", sqlite_shapes(db)
    cluster: Cluster = request.getfixturevalue("postgres")
    database = db.split("/")[3].split("?")[0]
    return "postgres", postgres_shapes(cluster.url(database=database))  # as the admin, who owns the tables


def test_the_live_tables_are_the_ones_defined(live: tuple[str, dict[str, Shape]]) -> None:
    backend, shapes = live
    assert set(shapes) == {t.name for t in TABLES} | OWN_TABLES[backend]
    for table in TABLES:
        assert shapes[table.name] == expected(table, backend), table.name


def test_a_sqlite_store_of_schema_version_1_has_the_defined_tables_once_opened(tmp_path: Path) -> None:
    """A store migrated from version 1 (runs without the process columns, no other table) ends with the same
    tables as a new one: the added columns take the defined types."""
    path = tmp_path / "v1.sqlite"
    with sqlite3.connect(path) as raw:
        raw.execute(
            "CREATE TABLE runs (id TEXT PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, "
            "phase TEXT, provider TEXT, judge TEXT, prober TEXT, k INTEGER, started_at TEXT NOT NULL, "
            "heartbeat_at TEXT NOT NULL, finished_at TEXT, error TEXT)"
        )
        raw.execute("PRAGMA user_version = 1")
    RoiStore(path).close()
    shapes = sqlite_shapes(path)
    for table in TABLES:
        assert shapes[table.name] == expected(table, "sqlite"), table.name
