"""Schema version 3 (SQLite) and 2 (Postgres): the probe modes' CHECK constraints accept ``distractor``, and a
store made before opens, migrates and keeps every row (issue 31).

``tests/fixtures/roi/schema-v2.sqlite`` is a store written by bench_nb at schema version 2 (the commit before
this change): the sample memories imported as an admin, the pool generated, one deterministic paraphrase run
(29 memories, 20 probes, 2 runs, 20 recalls, 20 results, 1 import). The Postgres case sets a fresh database's
schema back to version 1 (the old CHECK constraints, meta's version) around data written through the store."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from pg_cluster import Cluster
from test_roi_tables import expected, sqlite_shapes

from bench_nb.cli import cli
from bench_nb.roi import DistractorProber, RoiStore, import_memories, run_roi, top_up
from bench_nb.roi.errors import StoreError
from bench_nb.roi.sample import write_sample_memories
from bench_nb.roi.schema import SCHEMA_VERSION
from bench_nb.roi.tables import TABLES

V2_STORE = Path(__file__).resolve().parents[1] / "fixtures" / "roi" / "schema-v2.sqlite"
TABLE_NAMES = (
    "memories",
    "scope_members",
    "probes",
    "runs",
    "recalls",
    "results",
    "usage_events",
    "import_log",
)


def _dump(path: Path) -> dict[str, list[tuple]]:
    with sqlite3.connect(path) as db:
        return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in TABLE_NAMES}


def _add_distractor_probes_and_run(db: Path | str) -> None:
    """Two memories were never probed: a distractor top-up probes them, and a run judges all 22."""
    with RoiStore(db) as store:
        assert top_up(store, "demo", DistractorProber(), target=22).added == 2
    summary = run_roi("demo", db).summary()
    assert summary.judged == 22 and summary.probe_modes == {"paraphrase": 20, "distractor": 2}
    assert summary.probe_mode == "mixed"


def test_a_version_2_sqlite_store_migrates_and_keeps_its_rows(tmp_path: Path) -> None:
    db = tmp_path / "v2.sqlite"
    shutil.copy(V2_STORE, db)
    before = _dump(db)
    assert [len(before[t]) for t in ("memories", "probes", "runs", "recalls", "results")] == [
        29,
        20,
        2,
        20,
        20,
    ]
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 2
    with RoiStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION == 3
        # still sealed: the rebuilt tables got their triggers back
        with pytest.raises(Exception, match="append-only"):
            store.execute("UPDATE results SET with_memory = 0")
        with pytest.raises(Exception, match="never deleted"):
            store.execute("DELETE FROM probes")
    assert _dump(db) == before
    shapes = sqlite_shapes(db)
    for table in TABLES:
        assert shapes[table.name] == expected(table, "sqlite"), table.name
    _add_distractor_probes_and_run(db)
    after = _dump(db)
    for table in TABLE_NAMES:
        assert set(before[table]) <= set(after[table]), table  # every old row is still there, as it was
    with RoiStore(db) as store:  # opening again changes nothing
        assert store.schema_version == 3


def _downgrade_to_v1(admin_url: str) -> None:
    import psycopg

    old = "'template', 'paraphrase', 'llm'"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            "SET search_path = bench_nb_roi;"
            "ALTER TABLE probes DROP CONSTRAINT probes_mode_check,"
            f"  ADD CONSTRAINT probes_mode_check CHECK (mode IN ({old}));"
            "ALTER TABLE results DROP CONSTRAINT results_probe_mode_check,"
            f"  ADD CONSTRAINT results_probe_mode_check CHECK (probe_mode IN ({old}));"
            "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
        )


def test_a_version_1_postgres_store_is_refused_until_setup_migrates_it(
    tmp_path: Path, postgres: Cluster, pg_db: str
) -> None:
    url = pg_db
    admin_url = postgres.url(database=url.split("@/")[1].split("?")[0])
    import_memories(write_sample_memories(tmp_path / "sample.jsonl"), url, admin=True)
    run_roi("demo", url)
    run_roi("demo", url)
    _downgrade_to_v1(admin_url)
    with pytest.raises(StoreError, match=r"older than this bench_nb.s .*bench-nb roi setup --admin-db"):
        RoiStore(url)
    result = CliRunner().invoke(cli, ["roi", "setup", "--admin-db", admin_url], catch_exceptions=False)
    assert result.exit_code == 0 and "from version 1 to 2" in result.output, result.output
    with RoiStore(url) as store:
        assert store.schema_version == 2
        counts = {t: store.execute(f"SELECT count(*) AS n FROM {t}").fetchone()["n"] for t in TABLE_NAMES}
    assert {t: counts[t] for t in ("memories", "probes", "runs", "recalls", "results")} == {
        "memories": 29,
        "probes": 20,
        "runs": 2,
        "recalls": 20,
        "results": 20,
    }
    _add_distractor_probes_and_run(url)
    result = CliRunner().invoke(cli, ["roi", "setup", "--admin-db", admin_url], catch_exceptions=False)
    assert "already exists" in result.output and "(version 2)" in result.output
