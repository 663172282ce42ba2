"""The ROI store's SQLite schema, with its version in ``PRAGMA user_version``: the tables of
:mod:`bench_nb.roi.tables` in SQLite's types, and the triggers that enforce their write rules.

The database itself enforces the rules that matter for trust:

- ``results``, ``recalls``, ``usage_events`` and ``import_log`` are append-only: an UPDATE or DELETE aborts, and
  so does an INSERT that would replace a row (``REPLACE INTO``, ``INSERT OR REPLACE``: SQLite deletes the
  conflicting row without firing DELETE triggers, so a BEFORE INSERT trigger refuses any conflicting insert);
- ``probes`` are never deleted or replaced, and the only change a probe accepts is being retired (once);
- ``runs`` are never deleted or replaced; a finished run is frozen, a running one only changes its status,
  phase, heartbeat, end and error;
- at most one run per owner has ``status = 'running'`` (a unique partial index), which is how one run at a time
  per owner holds across processes.

The Postgres schema (:mod:`bench_nb.roi.pg_schema`) has the same tables and rules, enforced by privileges and
row-level security.
"""

from __future__ import annotations

from bench_nb.roi.tables import (
    INTEGER,
    REAL,
    ROW_ID,
    TABLES,
    TEXT,
    ColumnType,
    Table,
    create_table,
    create_tables,
)

SCHEMA_VERSION = 3

#: Each column type of bench_nb.roi.tables in SQLite.
TYPES: dict[ColumnType, str] = {
    TEXT: "TEXT",
    INTEGER: "INTEGER",
    REAL: "REAL",
    ROW_ID: "INTEGER PRIMARY KEY AUTOINCREMENT",
}

#: From schema version 1: the columns naming a run's process (the tables and triggers come from SCHEMA).
MIGRATE_1_TO_2 = """
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN pid INTEGER;
ALTER TABLE runs ADD COLUMN pid_started REAL;
"""


#: From schema version 2: the tables whose CHECK constraints list the probe modes (``tables.PROBE_MODES``,
#: ``distractor`` added). SQLite cannot alter a CHECK constraint, so each is rebuilt: a copy made with the new
#: definition, every row copied into it, the old table dropped (its triggers and indexes with it, so no
#: append-only trigger fires) and the copy renamed; SCHEMA then recreates the triggers and indexes. Run with
#: foreign keys off (the store checks them before committing), as SQLite's own procedure for changing a table.
REBUILT_FOR_3 = ("probes", "results")


def rebuild(name: str) -> str:
    """The statements rebuilding table ``name`` with today's definition, keeping every row."""
    table = next(t for t in TABLES if t.name == name)
    columns = ", ".join(c.name for c in table.columns)
    return (
        create_table(table, TYPES, name=f"{name}_new")
        + f"\nINSERT INTO {name}_new ({columns}) SELECT {columns} FROM {name};"
        + f"\nDROP TABLE {name};\nALTER TABLE {name}_new RENAME TO {name};\n"
    )


def _trigger(name: str, when: str, table: str, message: str, condition: str = "") -> str:
    condition = f"\nWHEN {condition}" if condition else ""
    return (
        f"CREATE TRIGGER IF NOT EXISTS {name} {when} ON {table}{condition}\n"
        f"BEGIN\n    SELECT RAISE(ABORT, '{message}');\nEND;"
    )


def _triggers(table: Table) -> list[str]:
    """The triggers enforcing a table's write rules (none for a table without any)."""
    out = []
    if table.append_only:
        for op in ("UPDATE", "DELETE"):
            message = f"{table.name} are append-only: {op} is not allowed"
            out.append(
                _trigger(f"{table.name}_append_only_{op.lower()}", f"BEFORE {op}", table.name, message)
            )
    if table.guard is not None:
        guard = table.guard
        out.append(_trigger(f"{table.name}_never_deleted", "BEFORE DELETE", table.name, guard.not_deleted))
        frozen = [c.name for c in table.columns if c.name not in guard.updatable]
        changed = " OR ".join([guard.frozen_when, *(f"NEW.{c} IS NOT OLD.{c}" for c in frozen)])
        out.append(_trigger(guard.trigger, "BEFORE UPDATE", table.name, guard.refused, changed))
    if table.sealed:
        # a BEFORE INSERT trigger refusing an INSERT whose key exists (what REPLACE would delete)
        clash = " OR ".join(
            f"EXISTS (SELECT 1 FROM {table.name} WHERE " + " AND ".join(f"{c} = NEW.{c}" for c in key) + ")"
            for key in table.keys
        )
        message = f"{table.name} are append-only: an INSERT may not replace a row"
        out.append(_trigger(f"{table.name}_no_replace", "BEFORE INSERT", table.name, message, clash))
    return out


SCHEMA = (
    create_tables(TYPES, if_not_exists=True)
    + "\n".join(t for table in TABLES for t in _triggers(table))
    + "\n"
)
