"""The ROI store's SQLite schema, with its version in ``PRAGMA user_version``.

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

SCHEMA_VERSION = 2

_APPEND_ONLY = ("results", "recalls", "usage_events", "import_log")
#: The keys an INSERT may collide on, per table: a colliding INSERT is refused (no REPLACE).
_KEYS = {
    "results": (("id",), ("run_id", "probe_id")),
    "recalls": (("run_id", "probe_id"),),
    "usage_events": (("id",),),
    "import_log": (("id",),),
    "probes": (("id",), ("memory_id",)),
    "runs": (("id",),),
}

DDL = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    scope TEXT NOT NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('private', 'shared')),
    kind TEXT NOT NULL CHECK (kind IN ('fact', 'decision', 'preference', 'convention', 'gotcha',
                                       'reference', 'episode', 'task', 'open-question')),
    content TEXT NOT NULL,
    created_at TEXT NOT NULL,
    invalidated_at TEXT,
    lang TEXT,
    source TEXT,
    imported_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_by_owner ON memories (owner, kind, created_at);
CREATE INDEX IF NOT EXISTS memories_by_scope ON memories (scope);

CREATE TABLE IF NOT EXISTS scope_members (
    scope TEXT NOT NULL,
    member TEXT NOT NULL,
    PRIMARY KEY (scope, member)
);

CREATE TABLE IF NOT EXISTS probes (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    memory_id TEXT NOT NULL UNIQUE REFERENCES memories (id),
    scope TEXT NOT NULL,
    question TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('template', 'paraphrase', 'llm')),
    model TEXT,
    created_at TEXT NOT NULL,
    retired_at TEXT,
    retired_reason TEXT
);
CREATE INDEX IF NOT EXISTS probes_by_owner ON probes (owner, retired_at);
CREATE TRIGGER IF NOT EXISTS probes_never_deleted BEFORE DELETE ON probes
BEGIN
    SELECT RAISE(ABORT, 'probes are never deleted: retire them');
END;
CREATE TRIGGER IF NOT EXISTS probes_only_retired BEFORE UPDATE ON probes
WHEN OLD.retired_at IS NOT NULL
  OR NEW.id IS NOT OLD.id OR NEW.owner IS NOT OLD.owner OR NEW.memory_id IS NOT OLD.memory_id
  OR NEW.scope IS NOT OLD.scope OR NEW.question IS NOT OLD.question OR NEW.mode IS NOT OLD.mode
  OR NEW.model IS NOT OLD.model OR NEW.created_at IS NOT OLD.created_at
BEGIN
    SELECT RAISE(ABORT, 'a probe can only be retired, once');
END;

CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('generate', 'benchmark')),
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'abandoned')),
    phase TEXT,
    provider TEXT,
    judge TEXT,
    prober TEXT,
    k INTEGER,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    finished_at TEXT,
    error TEXT,
    host TEXT,
    pid INTEGER,
    pid_started REAL
);
CREATE TRIGGER IF NOT EXISTS runs_never_deleted BEFORE DELETE ON runs
BEGIN
    SELECT RAISE(ABORT, 'runs are never deleted');
END;
CREATE TRIGGER IF NOT EXISTS runs_frozen_when_finished BEFORE UPDATE ON runs
WHEN OLD.status IS NOT 'running'
  OR NEW.id IS NOT OLD.id OR NEW.owner IS NOT OLD.owner OR NEW.kind IS NOT OLD.kind
  OR NEW.provider IS NOT OLD.provider OR NEW.judge IS NOT OLD.judge OR NEW.prober IS NOT OLD.prober
  OR NEW.k IS NOT OLD.k OR NEW.started_at IS NOT OLD.started_at OR NEW.host IS NOT OLD.host
  OR NEW.pid IS NOT OLD.pid OR NEW.pid_started IS NOT OLD.pid_started
BEGIN
    SELECT RAISE(ABORT, 'a finished run is frozen; a running run only changes its status, phase and heartbeat');
END;
CREATE UNIQUE INDEX IF NOT EXISTS one_running_run_per_owner ON runs (owner) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS runs_by_owner ON runs (owner, started_at);

CREATE TABLE IF NOT EXISTS recalls (
    run_id TEXT NOT NULL REFERENCES runs (id),
    probe_id TEXT NOT NULL REFERENCES probes (id),
    owner TEXT NOT NULL,
    surfaced TEXT NOT NULL,
    hits TEXT NOT NULL,
    dropped INTEGER NOT NULL,
    latency_ms REAL NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, probe_id)
);

CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs (id),
    probe_id TEXT NOT NULL REFERENCES probes (id),
    owner TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    probe_mode TEXT NOT NULL CHECK (probe_mode IN ('template', 'paraphrase', 'llm')),
    status TEXT NOT NULL CHECK (status IN ('judged', 'failed')),
    with_memory INTEGER CHECK (with_memory IN (0, 1)),
    without_memory INTEGER CHECK (without_memory IN (0, 1)),
    confidence REAL,
    judge TEXT NOT NULL,
    explanation TEXT,
    error TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (run_id, probe_id),
    CHECK ((status = 'judged') = (with_memory IS NOT NULL AND without_memory IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS results_by_owner ON results (owner, run_id);

CREATE TABLE IF NOT EXISTS usage_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    purpose TEXT NOT NULL CHECK (purpose IN ('prober', 'judge')),
    model TEXT NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    own_key INTEGER NOT NULL CHECK (own_key IN (0, 1)),
    run_id TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS import_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    importer TEXT NOT NULL,
    admin INTEGER NOT NULL CHECK (admin IN (0, 1)),
    owners TEXT NOT NULL,
    inserted INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    members INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
"""

#: From schema version 1: the columns naming a run's process (the tables and triggers come from SCHEMA).
MIGRATE_1_TO_2 = """
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN pid INTEGER;
ALTER TABLE runs ADD COLUMN pid_started REAL;
"""


def _append_only_triggers() -> str:
    parts = []
    for table in _APPEND_ONLY:
        for op in ("UPDATE", "DELETE"):
            parts.append(
                f"CREATE TRIGGER IF NOT EXISTS {table}_append_only_{op.lower()} BEFORE {op} ON {table}\n"
                f"BEGIN\n    SELECT RAISE(ABORT, '{table} are append-only: {op} is not allowed');\nEND;"
            )
    return "\n".join(parts)


def _no_replace_triggers() -> str:
    """A BEFORE INSERT trigger per table refusing an INSERT whose key exists (what REPLACE would delete)."""
    parts = []
    for table, keys in _KEYS.items():
        clash = " OR ".join(
            f"EXISTS (SELECT 1 FROM {table} WHERE " + " AND ".join(f"{c} = NEW.{c}" for c in key) + ")"
            for key in keys
        )
        parts.append(
            f"CREATE TRIGGER IF NOT EXISTS {table}_no_replace BEFORE INSERT ON {table}\nWHEN {clash}\n"
            f"BEGIN\n    SELECT RAISE(ABORT, '{table} are append-only: an INSERT may not replace a row');\nEND;"
        )
    return "\n".join(parts)


SCHEMA = DDL + _append_only_triggers() + "\n" + _no_replace_triggers()
