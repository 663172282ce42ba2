"""The ROI store's SQLite schema, with its version in ``PRAGMA user_version``.

The database itself enforces the rules that matter for trust:

- ``results``, ``recalls`` and ``usage_events`` are append-only: an UPDATE or DELETE aborts;
- ``probes`` are never deleted, and the only change a probe accepts is being retired (once);
- at most one run per owner has ``status = 'running'`` (a unique partial index), which is how one run at a time
  per owner holds across processes.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

_APPEND_ONLY = ("results", "recalls", "usage_events")

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
    error TEXT
);
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


SCHEMA = DDL + _append_only_triggers()
