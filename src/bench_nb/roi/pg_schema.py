"""The ROI store's Postgres schema: the same tables as the SQLite one, with the rules enforced by roles,
privileges and row-level security (docs/roi.md, "The Postgres store").

Roles:

- the **admin** who runs :func:`setup_sql` (a superuser, or the database owner with CREATEROLE) owns every
  object; nobody else may change the schema;
- the **server** role (default ``bench_nb_roi``): the role of the ``--db postgresql://...`` URL that
  bench_nb connects with. It reads everything; it may only INSERT into ``results``, ``recalls``,
  ``usage_events`` and ``import_log`` (no UPDATE, no DELETE: append-only by privilege, and ``INSERT ... ON
  CONFLICT DO UPDATE`` needs UPDATE), only retire probes and only close runs (column privileges plus a
  trigger); it never deletes anything;
- one **owner role** per owner (``bench_nb_roi_owner_<owner>``, created by :data:`ensure_owner`, or an
  existing role registered with ``register_owner``), member of the group ``bench_nb_roi_owners``. The server is
  a member of every owner role and runs an owner's recalls and imports after ``SET LOCAL ROLE``. An owner role
  may read only the memories its owner may read (policies on ``memories`` and ``scope_members``), write only
  its own memories in scopes it owns or belongs to, grant memberships only in scopes it owns, and read its
  own runs' numbers through the views ``my_runs``; it has no privilege on probes, results, recalls, runs,
  usage events or the owner list.

The reads of a recall are also pinned to the probe's scopes: the server sets ``bench_nb_roi.read_scopes``
for the transaction and a restrictive policy keeps only those scopes (a caller setting it can only narrow
what it reads).
"""

from __future__ import annotations

import re

SCHEMA = "bench_nb_roi"
OWNERS_GROUP = "bench_nb_roi_owners"
DEFAULT_SERVER_ROLE = "bench_nb_roi"
PG_SCHEMA_VERSION = 1

_ROLE_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

# {server} is substituted (a checked role name); everything else is literal.
_SETUP = """
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{server}') THEN CREATE ROLE {server} LOGIN; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bench_nb_roi_owners') THEN
    CREATE ROLE bench_nb_roi_owners NOLOGIN;
  END IF;
END $$;

CREATE SCHEMA bench_nb_roi;
REVOKE ALL ON SCHEMA bench_nb_roi FROM PUBLIC;
GRANT USAGE ON SCHEMA bench_nb_roi TO {server}, bench_nb_roi_owners;
SET LOCAL search_path = bench_nb_roi, pg_catalog;

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE owners (
    owner TEXT PRIMARY KEY CHECK (owner ~ '^[A-Za-z0-9_-]{1,40}$'),
    role_name NAME NOT NULL UNIQUE,
    claimed_at TEXT
);

CREATE TABLE memories (
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
CREATE INDEX memories_by_owner ON memories (owner, kind, created_at);
CREATE INDEX memories_by_scope ON memories (scope);
CREATE INDEX memories_fts ON memories USING gin (to_tsvector('english', content));

CREATE TABLE scope_members (
    scope TEXT NOT NULL,
    member TEXT NOT NULL,
    PRIMARY KEY (scope, member)
);

CREATE TABLE probes (
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
CREATE INDEX probes_by_owner ON probes (owner, retired_at);

CREATE TABLE runs (
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
    pid_started DOUBLE PRECISION,
    lock_backend INTEGER
);
CREATE UNIQUE INDEX one_running_run_per_owner ON runs (owner) WHERE status = 'running';
CREATE INDEX runs_by_owner ON runs (owner, started_at);

CREATE TABLE recalls (
    run_id TEXT NOT NULL REFERENCES runs (id),
    probe_id TEXT NOT NULL REFERENCES probes (id),
    owner TEXT NOT NULL,
    surfaced TEXT NOT NULL,
    hits TEXT NOT NULL,
    dropped INTEGER NOT NULL,
    latency_ms DOUBLE PRECISION NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, probe_id)
);

CREATE TABLE results (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (id),
    probe_id TEXT NOT NULL REFERENCES probes (id),
    owner TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    probe_mode TEXT NOT NULL CHECK (probe_mode IN ('template', 'paraphrase', 'llm')),
    status TEXT NOT NULL CHECK (status IN ('judged', 'failed')),
    with_memory INTEGER CHECK (with_memory IN (0, 1)),
    without_memory INTEGER CHECK (without_memory IN (0, 1)),
    confidence DOUBLE PRECISION,
    judge TEXT NOT NULL,
    explanation TEXT,
    error TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (run_id, probe_id),
    CHECK ((status = 'judged') = (with_memory IS NOT NULL AND without_memory IS NOT NULL))
);
CREATE INDEX results_by_owner ON results (owner, run_id);

CREATE TABLE usage_events (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner TEXT NOT NULL,
    purpose TEXT NOT NULL CHECK (purpose IN ('prober', 'judge')),
    model TEXT NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    own_key INTEGER NOT NULL CHECK (own_key IN (0, 1)),
    run_id TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE import_log (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    path TEXT NOT NULL,
    importer TEXT NOT NULL,
    admin INTEGER NOT NULL CHECK (admin IN (0, 1)),
    owners TEXT NOT NULL,
    inserted INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    members INTEGER NOT NULL,
    created_at TEXT NOT NULL
);

-- a probe can only be retired, once; a finished run is frozen (the column privileges allow no more anyway)
CREATE FUNCTION probes_only_retired() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF OLD.retired_at IS NOT NULL OR NEW.retired_at IS NULL THEN
    RAISE EXCEPTION 'a probe can only be retired, once';
  END IF;
  RETURN NEW;
END $f$;
CREATE TRIGGER probes_only_retired BEFORE UPDATE ON probes FOR EACH ROW EXECUTE FUNCTION probes_only_retired();
CREATE FUNCTION runs_frozen_when_finished() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  IF OLD.status <> 'running' THEN
    RAISE EXCEPTION 'a finished run is frozen; a running run only changes its status, phase and heartbeat';
  END IF;
  RETURN NEW;
END $f$;
CREATE TRIGGER runs_frozen_when_finished BEFORE UPDATE ON runs
  FOR EACH ROW EXECUTE FUNCTION runs_frozen_when_finished();

-- who an owner role is: its owner label (NULL for any other role)
CREATE FUNCTION owner_of(role_name NAME) RETURNS TEXT LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog AS $f$ SELECT owner FROM bench_nb_roi.owners o WHERE o.role_name = $1 $f$;
GRANT EXECUTE ON FUNCTION owner_of(NAME) TO PUBLIC;

-- the server creates an owner's role on first use (as the admin): NOLOGIN, in the owners' group, SET ROLE-able
-- by the server only
CREATE FUNCTION ensure_owner(p_owner TEXT) RETURNS NAME LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog AS $f$
DECLARE r NAME;
BEGIN
  SELECT o.role_name INTO r FROM bench_nb_roi.owners o WHERE o.owner = p_owner;
  IF FOUND THEN RETURN r; END IF;
  IF p_owner !~ '^[A-Za-z0-9_-]{1,40}$' THEN RAISE EXCEPTION 'not an owner label: %', p_owner; END IF;
  r := 'bench_nb_roi_owner_' || p_owner;
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
      EXECUTE format('CREATE ROLE %I NOLOGIN', r);
    END IF;
    PERFORM bench_nb_roi.register_owner(p_owner, r);
  EXCEPTION WHEN unique_violation OR duplicate_object THEN
    -- another session registered the same owner at the same moment: use its row
    SELECT o.role_name INTO STRICT r FROM bench_nb_roi.owners o WHERE o.owner = p_owner;
  END;
  RETURN r;
END $f$;
REVOKE ALL ON FUNCTION ensure_owner(TEXT) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ensure_owner(TEXT) TO {server};

-- an admin maps an owner label to an existing role (e.g. the owner's own login role)
CREATE FUNCTION register_owner(p_owner TEXT, p_role NAME) RETURNS VOID LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog AS $f$
BEGIN
  EXECUTE format('GRANT bench_nb_roi_owners TO %I', p_role);
  EXECUTE format('GRANT %I TO {server}', p_role);
  INSERT INTO bench_nb_roi.owners (owner, role_name) VALUES (p_owner, p_role);
END $f$;
REVOKE ALL ON FUNCTION register_owner(TEXT, NAME) FROM PUBLIC;

-- row-level security: memories and memberships
ALTER TABLE memories ENABLE ROW LEVEL SECURITY;
CREATE POLICY server_all ON memories TO {server} USING (true) WITH CHECK (true);
CREATE POLICY owner_reads ON memories FOR SELECT TO bench_nb_roi_owners USING (
  owner = owner_of(current_user)
  OR (visibility = 'shared' AND (
        split_part(scope, '.', 2) = owner_of(current_user)
        OR EXISTS (SELECT 1 FROM scope_members s WHERE s.scope = memories.scope
                   AND s.member = owner_of(current_user)))));
CREATE POLICY pinned_reads ON memories AS RESTRICTIVE FOR SELECT TO bench_nb_roi_owners USING (
  coalesce(current_setting('bench_nb_roi.read_scopes', true), '') = ''
  OR scope = ANY (string_to_array(current_setting('bench_nb_roi.read_scopes', true), ',')));
CREATE POLICY owner_writes ON memories FOR INSERT TO bench_nb_roi_owners WITH CHECK (
  owner = owner_of(current_user)
  AND (split_part(scope, '.', 2) = owner_of(current_user)
       OR (scope !~ '^user[.]' AND EXISTS (SELECT 1 FROM scope_members s WHERE s.scope = memories.scope
                                          AND s.member = owner_of(current_user)))));
CREATE POLICY owner_updates ON memories FOR UPDATE TO bench_nb_roi_owners
  USING (owner = owner_of(current_user))
  WITH CHECK (
  owner = owner_of(current_user)
  AND (split_part(scope, '.', 2) = owner_of(current_user)
       OR (scope !~ '^user[.]' AND EXISTS (SELECT 1 FROM scope_members s WHERE s.scope = memories.scope
                                          AND s.member = owner_of(current_user)))));

ALTER TABLE scope_members ENABLE ROW LEVEL SECURITY;
CREATE POLICY server_all ON scope_members TO {server} USING (true) WITH CHECK (true);
CREATE POLICY owner_reads ON scope_members FOR SELECT TO bench_nb_roi_owners
  USING (member = owner_of(current_user) OR split_part(scope, '.', 2) = owner_of(current_user));
CREATE POLICY owner_grants ON scope_members FOR INSERT TO bench_nb_roi_owners
  WITH CHECK (split_part(scope, '.', 2) = owner_of(current_user) AND scope ~ '^(proj|team)[.]');

-- an owner's own runs and their numbers (the views run with the admin's rights, filtered to the caller)
CREATE VIEW my_runs WITH (security_barrier) AS
SELECT r.id AS run_id, r.kind, r.status, r.started_at, r.finished_at, r.provider, r.judge,
       count(x.id) FILTER (WHERE x.status = 'judged') AS judged,
       count(x.id) FILTER (WHERE x.status = 'failed') AS failed,
       coalesce(sum(x.with_memory), 0) AS with_memory,
       coalesce(sum(x.without_memory), 0) AS without_memory,
       count(x.id) FILTER (WHERE x.with_memory = 1 AND x.without_memory = 0) AS exclusive
FROM runs r LEFT JOIN results x ON x.run_id = r.id AND x.owner = r.owner
WHERE r.owner = owner_of(current_user)
GROUP BY r.id;

-- privileges: nothing for PUBLIC; the server appends; owners read and write under the policies
REVOKE ALL ON ALL TABLES IN SCHEMA bench_nb_roi FROM PUBLIC;
GRANT SELECT ON ALL TABLES IN SCHEMA bench_nb_roi TO {server};
GRANT INSERT, UPDATE ON memories TO {server};
GRANT INSERT ON scope_members, probes, runs, recalls, results, usage_events, import_log TO {server};
GRANT UPDATE (retired_at, retired_reason) ON probes TO {server};
GRANT UPDATE (status, phase, heartbeat_at, finished_at, error) ON runs TO {server};
GRANT UPDATE (claimed_at) ON owners TO {server};
GRANT SELECT, INSERT ON memories, scope_members TO bench_nb_roi_owners;
GRANT UPDATE (scope, visibility, kind, content, created_at, invalidated_at, lang, source, imported_at)
  ON memories TO bench_nb_roi_owners;
GRANT SELECT ON my_runs TO bench_nb_roi_owners;

INSERT INTO meta VALUES ('schema_version', '{version}');
"""


def setup_sql(server_role: str = DEFAULT_SERVER_ROLE) -> str:
    """The script that creates the schema, the roles and the policies (run once, as the admin).

    Raises:
        ValueError: ``server_role`` is not a plain lower-case role name.
    """
    if not _ROLE_RE.match(server_role):
        raise ValueError(f"server role {server_role!r}: use a plain lower-case name ([a-z_][a-z0-9_]*)")
    return _SETUP.replace("{server}", server_role).replace("{version}", str(PG_SCHEMA_VERSION))
