from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from roi_memsets import mem, write_jsonl

from bench_nb.roi import RoiStore, StoreError, import_memories, top_up
from bench_nb.roi.memory import utc_now
from bench_nb.roi.probers import TemplateProber
from bench_nb.roi.schema import SCHEMA_VERSION


def _store_with_result(tmp_path: Path) -> RoiStore:
    db = tmp_path / "roi.sqlite"
    import_memories(
        write_jsonl(
            tmp_path / "m.jsonl",
            [mem("m1", "proj.alice.web", "decision", "Use tabs.", "2024-01-01T00:00:00Z")],
        ),
        db,
    )
    store = RoiStore(db)
    top_up(store, "alice", TemplateProber())
    (probe,) = store.active_probes("alice")
    store.claim_run("run-1", "alice", "benchmark", phase="judging")
    store.add_result(
        "run-1", probe, judge="deterministic", with_memory=True, without_memory=False, confidence=1.0
    )
    return store


def test_schema_is_versioned(sqlite_db: Path) -> None:
    with RoiStore(sqlite_db) as store:
        assert store.schema_version == SCHEMA_VERSION
    with RoiStore(sqlite_db) as store:  # reopening keeps it
        assert store.schema_version == SCHEMA_VERSION


def test_a_newer_schema_is_refused(sqlite_db: Path) -> None:
    RoiStore(sqlite_db).close()
    with sqlite3.connect(sqlite_db) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer than this bench_nb"):
        RoiStore(sqlite_db)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE results SET with_memory = 0",
        "UPDATE results SET explanation = 'edited'",
        "DELETE FROM results",
        "UPDATE recalls SET surfaced = '[]'",
        "DELETE FROM recalls",
    ],
)
def test_results_are_append_only_in_the_database(tmp_path: Path, sql: str) -> None:
    store = _store_with_result(tmp_path)
    if "recalls" in sql:
        from bench_nb.roi.records import Recall

        store.add_recall("run-1", "alice", Recall(store.active_probes("alice")[0].id, (), 0, 1.0))
    # through a raw connection too: the rule lives in the database, not in our code
    with sqlite3.connect(store.path) as raw, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        raw.execute(sql)
    assert store.execute("SELECT count(*) FROM results").fetchone()[0] == 1
    assert store.execute("SELECT with_memory FROM results").fetchone()[0] == 1


def test_usage_events_are_append_only(tmp_path: Path) -> None:
    from bench_nb.roi.records import ModelUsage

    store = _store_with_result(tmp_path)
    store.add_usage("alice", "judge", ModelUsage("m", 10, 2), own_key=False, run_id="run-1")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.execute("UPDATE usage_events SET input_tokens = 0")


def test_probes_are_never_deleted_only_retired_once(tmp_path: Path) -> None:
    store = _store_with_result(tmp_path)
    (probe,) = store.active_probes("alice")
    with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
        store.execute("DELETE FROM probes")
    with pytest.raises(sqlite3.IntegrityError, match="only be retired"):
        store.execute("UPDATE probes SET question = 'rewritten'")
    store.execute(
        "UPDATE probes SET retired_at = ?, retired_reason = 'test' WHERE id = ?", (utc_now(), probe.id)
    )
    assert store.active_probes("alice") == []
    with pytest.raises(sqlite3.IntegrityError, match="only be retired"):
        store.execute("UPDATE probes SET retired_reason = 'again'")
    assert len(store.probes("alice")) == 1


def test_a_failed_result_has_no_booleans(tmp_path: Path) -> None:
    store = _store_with_result(tmp_path)
    (probe,) = store.active_probes("alice")
    store.claim_run("run-2", "bob", "benchmark", phase="x")
    with pytest.raises(sqlite3.IntegrityError):  # judged without booleans is refused by a CHECK
        store.execute(
            "INSERT INTO results (run_id, probe_id, owner, memory_id, probe_mode, status, judge, created_at) "
            "VALUES ('run-1', ?, 'alice', 'm1', 'template', 'judged', 'x', 'now')",
            (probe.id,),
        )


_RESULT_COLS = "id, run_id, probe_id, owner, memory_id, probe_mode, status, with_memory, without_memory, judge, created_at"


@pytest.mark.parametrize(
    "sql",
    [
        f"REPLACE INTO results ({_RESULT_COLS}) SELECT id, run_id, probe_id, owner, memory_id, probe_mode, "
        "status, 0, 0, judge, created_at FROM results",
        f"INSERT OR REPLACE INTO results ({_RESULT_COLS}) SELECT id + 100, run_id, probe_id, owner, memory_id, "
        "probe_mode, status, 1, 1, judge, created_at FROM results",
        f"INSERT INTO results ({_RESULT_COLS}) SELECT id, run_id, probe_id, owner, memory_id, probe_mode, status, "
        "0, 0, judge, created_at FROM results WHERE true ON CONFLICT DO UPDATE SET with_memory = 0",
        "REPLACE INTO recalls SELECT run_id, probe_id, owner, '[]', '[]', 0, 0, created_at FROM recalls",
        "REPLACE INTO probes SELECT id, owner, memory_id, scope, 'rewritten', mode, model, created_at, NULL, NULL "
        "FROM probes",
        "REPLACE INTO runs (id, owner, kind, status, started_at, heartbeat_at) "
        "SELECT id, owner, kind, 'done', started_at, heartbeat_at FROM runs",
    ],
)
def test_no_insert_replaces_a_row_of_an_append_only_table(tmp_path: Path, sql: str) -> None:
    """REPLACE deletes the conflicting row without firing DELETE triggers: a BEFORE INSERT trigger refuses it."""
    from bench_nb.roi.records import Recall

    store = _store_with_result(tmp_path)
    (probe,) = store.active_probes("alice")
    store.add_recall("run-1", "alice", Recall(probe.id, (), 0, 1.0))
    with (
        sqlite3.connect(store.path) as raw,
        pytest.raises(sqlite3.IntegrityError, match=r"append-only|frozen"),
    ):
        raw.execute(sql)
    assert store.execute("SELECT count(*), sum(with_memory), sum(without_memory) FROM results").fetchone()[
        :
    ] == (
        1,
        1,
        0,
    )
    assert store.active_probes("alice")[0].question == probe.question
    assert store.run("alice", "run-1")["status"] == "running"  # type: ignore[index]


_V1_RUNS = """CREATE TABLE runs (id TEXT PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL,
status TEXT NOT NULL, phase TEXT, provider TEXT, judge TEXT, prober TEXT, k INTEGER, started_at TEXT NOT NULL,
heartbeat_at TEXT NOT NULL, finished_at TEXT, error TEXT)"""


def test_a_version_1_store_is_migrated_and_sealed(tmp_path: Path) -> None:
    """A store of the previous schema gets the columns naming a run's process and the no-replace triggers."""
    db = tmp_path / "v1.sqlite"
    with sqlite3.connect(db) as raw:
        raw.execute(_V1_RUNS)
        raw.execute(
            "INSERT INTO runs VALUES ('old', 'alice', 'benchmark', 'done', NULL, NULL, NULL, NULL, "
            "5, 't0', 't0', 't1', NULL)"
        )
        raw.execute("PRAGMA user_version = 1")
    with RoiStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION
        cols = {r["name"] for r in store.execute("PRAGMA table_info(runs)")}
        assert {"host", "pid", "pid_started"} <= cols
        triggers = {r[0] for r in store.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert {
            "results_no_replace",
            "recalls_no_replace",
            "probes_no_replace",
            "runs_no_replace",
        } <= triggers
        assert [r["id"] for r in store.runs("alice")] == ["old"]
