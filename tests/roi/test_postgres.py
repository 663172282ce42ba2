"""The Postgres store as an adversarial owner sees it: connected as owner bob's own role, with any SQL he is
allowed to run, he reads none of alice's memories, probes or results, cannot rewrite results, and cannot
grant himself a membership in alice's scope. The server role cannot rewrite results either."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pg_cluster import Cluster
from roi_memsets import mem, write_jsonl

from bench_nb.roi import (
    MemoryImportError,
    RoiStore,
    ScopeMember,
    TemplateProber,
    can_read,
    import_memories,
    pinned_scopes,
    run_roi,
    top_up,
)
from bench_nb.roi.memory import utc_now
from bench_nb.roi.pg_schema import SCHEMA

BOB_ROLE = "bench_nb_roi_owner_bob"


@pytest.fixture
def store_url(jsonl_file: Path, pg_db: str) -> str:
    """alice and bob imported (bob is a member of team.alice.platform), one finished run each."""
    import_memories(jsonl_file, pg_db, admin=True)
    for owner in ("alice", "bob"):
        run_roi(owner, pg_db)  # generates the pool
        run_roi(owner, pg_db)  # runs
    return pg_db


def _admin_url(postgres: Cluster, url: str) -> str:
    return postgres.url(database=url.split("/")[3].split("?")[0])


@pytest.fixture
def bob(postgres: Cluster, store_url: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection as bob's own owner role (given LOGIN by the admin, as a deployment would)."""
    admin = _admin_url(postgres, store_url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"ALTER ROLE {BOB_ROLE} LOGIN")
        conn.execute(f"ANALYZE {SCHEMA}.memories")  # statistics exist: they must not leak either
    database = store_url.split("/")[3].split("?")[0]
    with psycopg.connect(postgres.url(BOB_ROLE, database), autocommit=True) as conn:
        yield conn


def _denied(
    conn: psycopg.Connection[Any],
    sql: str,
    params: tuple[Any, ...] = (),
    errors: type[Exception] | tuple[type[Exception], ...] = psycopg.errors.InsufficientPrivilege,
) -> str:
    with pytest.raises(errors) as err:
        conn.execute(sql.encode(), params or None)
    return str(err.value)


def test_bob_reads_only_what_he_may_read_by_any_relation(
    bob: psycopg.Connection[Any], store_url: str
) -> None:
    with RoiStore(store_url) as store:
        everything = {r["id"]: r for r in store._rows("SELECT * FROM memories")}
        members = {s: store.members(s) for s in {m["scope"] for m in everything.values()}}
        alice_probes = {p.id for p in store.probes("alice")}
        alice_runs = {r["id"] for r in store.runs("alice")}
    from bench_nb.roi import Memory

    allowed = {
        i
        for i, r in everything.items()
        if can_read("bob", Memory(**{k: r[k] for k in Memory.__dataclass_fields__}), members[r["scope"]])
    }
    assert "a-team-1" in allowed and "a-team-private" not in allowed and "a-web-1" not in allowed

    relations = [
        r[0]
        for r in bob.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind IN ('r', 'v', 'm', 'p', 'f')",
            (SCHEMA,),
        )
    ]
    assert {"memories", "probes", "results", "recalls", "runs", "usage_events", "my_runs"} <= set(relations)
    readable: dict[str, list[tuple[Any, ...]]] = {}
    for rel in relations:
        try:
            readable[rel] = bob.execute(f"SELECT * FROM {SCHEMA}.{rel}".encode()).fetchall()
        except psycopg.errors.InsufficientPrivilege:
            continue
    # no privilege at all on probes, results, recalls, runs, usage events, the owner list, the import log
    assert set(readable) == {"memories", "scope_members", "my_runs"}
    seen = {row[0] for row in readable["memories"]}
    assert seen == allowed
    assert all(row[1] == "bob" or row[0].split(".")[1] == "bob" for row in readable["scope_members"])
    assert readable["my_runs"] and not {row[0] for row in readable["my_runs"]} & alice_runs
    # statistics, a setting that widens nothing, and leaky tricks show nothing more
    stats = bob.execute("SELECT * FROM pg_stats WHERE schemaname = %s", (SCHEMA,)).fetchall()
    assert not any("quarry" in str(row) or "VPN" in str(row) for row in stats)
    bob.execute("SELECT set_config('bench_nb_roi.read_scopes', '', false)")
    assert {r[0] for r in bob.execute(f"SELECT id FROM {SCHEMA}.memories")} == allowed
    assert not any(p in str(readable) for p in alice_probes)  # no probe id, hence no probe, anywhere


def test_bob_cannot_become_alice_or_the_server(bob: psycopg.Connection[Any]) -> None:
    _denied(bob, "SET ROLE bench_nb_roi_owner_alice")
    _denied(bob, "SET ROLE bench_nb_roi")
    _denied(bob, f"SELECT {SCHEMA}.ensure_owner('mallory')")
    _denied(bob, f"SELECT {SCHEMA}.register_owner('alice', %s)", (BOB_ROLE,))
    _denied(bob, f"SELECT pg_catalog.pg_advisory_lock(1) FROM {SCHEMA}.owners")


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE {s}.results SET with_memory = 0",
        "DELETE FROM {s}.results",
        "INSERT INTO {s}.results (run_id, probe_id, owner, memory_id, probe_mode, status, with_memory, "
        "without_memory, judge, created_at) SELECT run_id, probe_id, owner, memory_id, probe_mode, status, 0, 0, "
        "judge, created_at FROM {s}.results ON CONFLICT (run_id, probe_id) DO UPDATE SET with_memory = 0",
        "UPDATE {s}.recalls SET surfaced = '[]'",
        "DELETE FROM {s}.usage_events",
        "UPDATE {s}.runs SET status = 'done'",
        "DELETE FROM {s}.probes",
        "TRUNCATE {s}.results",
    ],
)
def test_results_are_append_only_by_privilege(
    bob: psycopg.Connection[Any], postgres: Cluster, store_url: str, sql: str
) -> None:
    statement = sql.format(s=SCHEMA)
    before = _counts(store_url)
    _denied(bob, statement)  # the owner: no privilege on results at all
    with psycopg.connect(store_url, autocommit=True) as server:  # the server: SELECT and INSERT only
        # (it may close a running run: a finished one is frozen by a trigger)
        frozen = psycopg.errors.RaiseException if "runs SET status" in statement else ()
        _denied(
            server, statement, errors=(psycopg.errors.InsufficientPrivilege, *([frozen] if frozen else []))
        )
    assert _counts(store_url) == before


def _counts(url: str) -> tuple[Any, ...]:
    with RoiStore(url) as store:
        row = store.execute(
            "SELECT count(*), sum(with_memory), (SELECT count(*) FROM recalls WHERE surfaced <> '[]'), "
            "(SELECT count(*) FROM usage_events), (SELECT count(*) FROM runs WHERE status = 'running') "
            "FROM results"
        ).fetchone()
        return tuple(row.values())


def test_a_finished_run_is_frozen_and_a_probe_is_only_retired(store_url: str) -> None:
    with RoiStore(store_url) as store:
        done = store.runs("alice", "benchmark")[-1]["id"]
        with pytest.raises(psycopg.errors.RaiseException, match="frozen"):
            store.execute("UPDATE runs SET error = 'edited' WHERE id = ?", (done,))
        probe = store.active_probes("alice")[0]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            store.execute("UPDATE probes SET question = 'rewritten' WHERE id = ?", (probe.id,))
        store.execute(
            "UPDATE probes SET retired_at = ?, retired_reason = 'test' WHERE id = ?", (utc_now(), probe.id)
        )
        with pytest.raises(psycopg.errors.RaiseException, match="only be retired"):
            store.execute("UPDATE probes SET retired_reason = 'again' WHERE id = ?", (probe.id,))


def test_an_import_granting_bob_membership_in_alices_scope_is_refused(
    tmp_path: Path, bob: psycopg.Connection[Any], store_url: str
) -> None:
    grab = write_jsonl(
        tmp_path / "bob-grab.jsonl",
        [
            mem("b-x", "proj.bob.web", "gotcha", "Bob: retries.", "2024-05-01T00:00:00Z"),
            {"record": "member", "scope": "proj.alice.web", "member": "bob"},
        ],
    )
    with pytest.raises(MemoryImportError, match="only the scope's owner 'alice' may grant it"):
        import_memories(grab, store_url)
    with RoiStore(store_url) as store:
        # past the Python check, the database refuses too: the membership is written in bob's role
        with pytest.raises(MemoryImportError, match="refused by the database"):
            store.add_members([ScopeMember("proj.alice.web", "bob")], owner="bob")
        with pytest.raises(MemoryImportError, match="refused by the database"):
            store.upsert_memories(
                [r for r in _memories(tmp_path, "proj.alice.web", owner="alice")], owner="bob"
            )
        assert "bob" not in store.members("proj.alice.web")
        assert store.memory("forged") is None
    # and so it does when bob writes SQL himself
    assert "row-level security" in _denied(
        bob, f"INSERT INTO {SCHEMA}.scope_members VALUES ('proj.alice.web', 'bob')"
    )
    assert "row-level security" in _denied(
        bob,
        f"INSERT INTO {SCHEMA}.memories VALUES ('forged', 'alice', 'proj.alice.web', 'shared', 'decision', "
        "'x', 't', NULL, NULL, NULL, 't')",
    )
    bob.execute(f"UPDATE {SCHEMA}.memories SET content = 'edited' WHERE owner = 'alice'")  # matches no row
    with RoiStore(store_url) as store:
        assert not any(m.content == "edited" for m in store.readable_memories("alice", ["proj.alice.web"]))


def test_a_membership_the_database_refuses_names_the_scope_field(store_url: str) -> None:
    # the refusal of a membership (not of a memory) says so: the field at fault is the scope
    with RoiStore(store_url) as store, pytest.raises(MemoryImportError) as err:
        store.add_members([ScopeMember("proj.alice.web", "bob")], owner="bob")
    assert err.value.field == "scope"
    assert "(field scope): membership refused by the database for owner 'bob'" in str(err.value)


def _memories(tmp_path: Path, scope: str, *, owner: str) -> list[Any]:
    from bench_nb.roi import read_memories

    path = write_jsonl(
        tmp_path / "forged.jsonl",
        [
            mem(
                "forged",
                scope,
                "decision",
                "Forged.",
                "2024-05-02T00:00:00Z",
                owner=owner,
                visibility="shared",
            )
        ],
    )
    return list(read_memories(path).memories)


def test_the_recall_reads_only_the_pinned_read_set_as_the_owner(store_url: str) -> None:
    with RoiStore(store_url) as store:
        scopes = pinned_scopes("bob", "team.alice.platform")
        ids = {m.id for m in store.readable_memories("bob", scopes)}
        assert ids == {"a-team-1", "b-team", "b-personal"}  # not alice's private team note, not proj.bob.web
        hits = store.search("bob", scopes, "healthz JSON database staging VPN", 10)
        assert {h.session_id for h in hits} <= ids and "a-team-private" not in {h.session_id for h in hits}
        assert {h.session_id for h in hits} >= {"a-team-1", "b-team"}


def test_the_same_probes_recall_the_same_memories_on_both_backends(
    jsonl_file: Path, sqlite_db: Path, pg_db: str
) -> None:
    surfaced: dict[str, dict[str, frozenset[str]]] = {}
    for db in (sqlite_db, pg_db):
        import_memories(jsonl_file, db, admin=True)
        with RoiStore(db) as store:
            top_up(store, "alice", TemplateProber())
        run = run_roi("alice", db)
        surfaced[str(db)] = {r.probe_id: frozenset(r.memory_ids) for r in run.recalls}
        sources = {p.id: p.memory_id for p in run.probes}
    lite, pg = surfaced[str(sqlite_db)], surfaced[pg_db]
    assert lite.keys() == pg.keys() and len(lite) == 20  # the same probes (ids are stable)
    # every probe's source memory is surfaced on both, or on neither
    assert {p for p, s in lite.items() if sources[p] in s} == {p for p, s in pg.items() if sources[p] in s}
    assert sum(sources[p] in s for p, s in pg.items()) >= 18


def test_setup_import_and_run_through_the_command_line(postgres: Cluster, jsonl_file: Path) -> None:
    import json

    from click.testing import CliRunner

    from bench_nb.cli import cli

    with psycopg.connect(postgres.url(), autocommit=True) as conn:
        conn.execute("CREATE DATABASE roi_cli")
    admin, server = postgres.url(database="roi_cli"), postgres.url("bench_nb_roi", "roi_cli")

    def invoke(*args: str) -> str:
        result = CliRunner().invoke(cli, ["roi", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    assert "set up the ROI schema" in invoke("setup", "--admin-db", admin)
    assert "already exists" in invoke("setup", "--admin-db", admin)
    assert json.loads(invoke("import", str(jsonl_file), "--db", server, "--admin", "--json"))["owners"] == [
        "alice",
        "bob",
    ]
    assert (
        json.loads(invoke("run", "--owner", "alice", "--db", server, "--deterministic", "--json"))["status"]
        == "generating"
    )
    done = json.loads(invoke("run", "--owner", "alice", "--db", server, "--deterministic", "--json"))
    assert (done["status"], done["judged"], done["provider"]) == ("done", 20, "postgres-fts")


def test_a_superuser_url_is_refused(postgres: Cluster, pg_db: str) -> None:
    from bench_nb.roi import StoreError

    with pytest.raises(StoreError, match="bypasses row-level security"):
        RoiStore(_admin_url(postgres, pg_db))


def test_a_store_that_is_not_set_up_is_named_with_the_fix(postgres: Cluster) -> None:
    from bench_nb.roi import StoreError

    with psycopg.connect(postgres.url(), autocommit=True) as conn:
        conn.execute("CREATE DATABASE roi_empty")
    with pytest.raises(StoreError, match="bench-nb roi setup --admin-db"):
        RoiStore(postgres.url("bench_nb_roi", "roi_empty"))


_NEW_OWNER = """
import sys
from bench_nb.roi import RoiStore
with RoiStore(sys.argv[1]) as store:
    print(store.owner_role("carol"))
"""


def test_two_processes_meeting_a_new_owner_at_once_get_one_role(tmp_path: Path, pg_db: str) -> None:
    import subprocess
    import sys

    script = tmp_path / "new_owner.py"
    script.write_text(_NEW_OWNER)
    procs = [
        subprocess.Popen([sys.executable, str(script), pg_db], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    assert outs == ["bench_nb_roi_owner_carol"] * 3
    with RoiStore(pg_db) as store:
        assert store.execute("SELECT count(*) FROM owners WHERE owner = 'carol'").fetchone()[0] == 1


def test_a_table_owner_that_is_not_superuser_is_refused_as_the_server_role(
    postgres: Cluster, jsonl_file: Path
) -> None:
    """Issue 38: the database owner with CREATEROLE (not a superuser) set the schema up, so it owns the ROI tables,
    and row-level security does not hold for a table's owner unless forced. Given as the server role's URL it was
    accepted, and `roi run` died with a raw InsufficientPrivilege traceback leaving a run with 0 judged. It is
    refused up front, with one error line, before anything is written."""
    import os
    import subprocess
    import sys

    with psycopg.connect(postgres.url(), autocommit=True) as conn:
        conn.execute("CREATE ROLE roi_dbowner LOGIN CREATEROLE")
        conn.execute("CREATE DATABASE roi_owned OWNER roi_dbowner")
    owner_url = postgres.url("roi_dbowner", "roi_owned")
    from bench_nb.roi.pg_store import setup_postgres

    assert setup_postgres(owner_url, server_role="bench_nb_roi_owned")
    import_memories(jsonl_file, postgres.url("bench_nb_roi_owned", "roi_owned"), admin=True)

    from bench_nb.roi import StoreError

    with pytest.raises(StoreError, match="owns the ROI tables") as err:
        RoiStore(owner_url)
    assert "row-level security" in str(err.value) and "--server-role" in str(err.value)
    env = os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"), "BENCH_NB_QUIET": "1"}
    args = ["roi", "run", "--owner", "alice", "--db", owner_url, "--deterministic", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "bench_nb", *args], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and "owns the ROI tables" in line
    with psycopg.connect(postgres.url(database="roi_owned"), autocommit=True) as conn:
        assert conn.execute(f"SELECT count(*) FROM {SCHEMA}.runs").fetchone() == (0,)
