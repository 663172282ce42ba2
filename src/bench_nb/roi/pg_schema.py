"""The ROI store's Postgres schema: the tables of :mod:`bench_nb.roi.tables` (as the SQLite one) in Postgres'
types, with the rules enforced by roles, privileges, triggers and row-level security (docs/roi.md, "The
Postgres store"). Its own parts: the tables ``meta`` (the schema version) and ``owners`` (owner labels and
their roles, locked to claim a run), the column ``runs.lock_backend`` and the full-text index on memories.

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

from bench_nb.roi.tables import (
    INTEGER,
    PROBE_MODES,
    REAL,
    ROW_ID,
    TABLES,
    TEXT,
    Column,
    ColumnType,
    create_tables,
)

SCHEMA = "bench_nb_roi"
DEFAULT_SERVER_ROLE = "bench_nb_roi"
PG_SCHEMA_VERSION = 2

_ROLE_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

#: Each column type of bench_nb.roi.tables in Postgres.
TYPES: dict[ColumnType, str] = {
    TEXT: "TEXT",
    INTEGER: "INTEGER",
    REAL: "DOUBLE PRECISION",
    ROW_ID: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
}
#: Postgres' own columns of the shared tables: the backend holding a run's claim (pg_store.claim_run).
EXTRA_COLUMNS: dict[str, tuple[Column, ...]] = {"runs": (Column("lock_backend", INTEGER),)}
#: An UPDATE of a probe must retire it (the column privileges already keep every other column as it was).
_ALSO_REFUSED = {"probes": "NEW.retired_at IS NULL"}

# Substituted: {server} (a checked role name), {version}, and what bench_nb.roi.tables makes: {tables} (the
# shared tables and indexes), {guards} and {guarded_updates} (its guarded tables' triggers and column
# privileges). Everything else is literal.
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

{tables}CREATE INDEX memories_fts ON memories USING gin (to_tsvector('english', content));

-- a probe can only be retired, once; a finished run is frozen (the column privileges allow no more anyway)
{guards}
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
{guarded_updates}
GRANT UPDATE (claimed_at) ON owners TO {server};
GRANT SELECT, INSERT ON memories, scope_members TO bench_nb_roi_owners;
GRANT UPDATE (scope, visibility, kind, content, created_at, invalidated_at, lang, source, imported_at)
  ON memories TO bench_nb_roi_owners;
GRANT SELECT ON my_runs TO bench_nb_roi_owners;

INSERT INTO meta VALUES ('schema_version', '{version}');
"""


def _guards() -> tuple[str, str]:
    """A trigger per guarded table refusing an update of a frozen row, and the server's column privileges
    (the columns an update may change)."""
    triggers, grants = [], []
    for table in TABLES:
        guard = table.guard
        if guard is None:
            continue
        refuse = " OR ".join(c for c in (guard.frozen_when, _ALSO_REFUSED.get(table.name)) if c)
        triggers.append(
            f"CREATE FUNCTION {guard.trigger}() RETURNS trigger LANGUAGE plpgsql AS $f$\n"
            f"BEGIN\n  IF {refuse} THEN\n    RAISE EXCEPTION '{guard.refused}';\n  END IF;\n  RETURN NEW;\nEND $f$;\n"
            f"CREATE TRIGGER {guard.trigger} BEFORE UPDATE ON {table.name}\n"
            f"  FOR EACH ROW EXECUTE FUNCTION {guard.trigger}();\n"
        )
        grants.append(f"GRANT UPDATE ({', '.join(guard.updatable)}) ON {table.name} TO {{server}};")
    return "".join(triggers), "\n".join(grants)


def setup_sql(server_role: str = DEFAULT_SERVER_ROLE) -> str:
    """The script that creates the schema, the roles and the policies (run once, as the admin).

    Raises:
        ValueError: ``server_role`` is not a plain lower-case role name.
    """
    if not _ROLE_RE.match(server_role):
        raise ValueError(f"server role {server_role!r}: use a plain lower-case name ([a-z_][a-z0-9_]*)")
    triggers, updates = _guards()
    script = (
        _SETUP.replace("{tables}", create_tables(TYPES, if_not_exists=False, extra_columns=EXTRA_COLUMNS))
        .replace("{guards}", triggers)
        .replace("{guarded_updates}", updates)
    )
    return script.replace("{server}", server_role).replace("{version}", str(PG_SCHEMA_VERSION))


_MODES = ", ".join(f"'{m}'" for m in PROBE_MODES)
#: Each older schema version's step to the next, run as the admin (``pg_store.migrate_postgres``, called by
#: ``bench-nb roi setup`` on a store set up before). 1 -> 2: the probe modes' CHECK constraints (Postgres'
#: default names for a column's CHECK) accept ``distractor``; every row stays.
MIGRATE: dict[int, str] = {
    1: f"""
SET LOCAL search_path = {SCHEMA}, pg_catalog;
ALTER TABLE probes DROP CONSTRAINT probes_mode_check,
  ADD CONSTRAINT probes_mode_check CHECK (mode IN ({_MODES}));
ALTER TABLE results DROP CONSTRAINT results_probe_mode_check,
  ADD CONSTRAINT results_probe_mode_check CHECK (probe_mode IN ({_MODES}));
UPDATE meta SET value = '2' WHERE key = 'schema_version';
""",
}
