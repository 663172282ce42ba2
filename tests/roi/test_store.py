from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from roi_memsets import mem, write_jsonl

from bench_nb.roi import RoiStore, StoreError, import_memories, top_up
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


def test_schema_is_versioned(db: Path) -> None:
    with RoiStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION
    with RoiStore(db) as store:  # reopening keeps it
        assert store.schema_version == SCHEMA_VERSION


def test_a_newer_schema_is_refused(db: Path) -> None:
    RoiStore(db).close()
    with sqlite3.connect(db) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer than this bench_nb"):
        RoiStore(db)


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
    store.retire_probe(probe.id, "test")
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
