"""Fixtures of the ROI tests (the memory sets are in roi_memsets.py).

``db`` is parametrised over both backends: a SQLite file, and a fresh database of a throwaway Postgres server
(pg_cluster.py; one server per session, one database per test, copied from a template set up once). Without
Postgres the ``postgres`` cases skip with the reason; BENCH_NB_REQUIRE_POSTGRES=1 (set by .ci/run) makes that a
failure. ``sqlite_db`` is for the tests of the SQLite file itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pg_cluster import Cluster, start_cluster
from roi_memsets import MEMBERS, alice_and_bob, write_jsonl

from needs import need

TEMPLATE = "roi_template"
_counter = itertools.count()


@pytest.fixture
def rows() -> list[dict[str, Any]]:
    return alice_and_bob()


@pytest.fixture
def jsonl_file(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    return write_jsonl(tmp_path / "memories.jsonl", [*rows, *MEMBERS])


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    """A running throwaway Postgres server, with the ROI schema set up in a template database."""
    try:
        import psycopg
    except ImportError:
        psycopg = None
    need(
        psycopg is not None,
        "psycopg is not installed (pip install 'bench-nb[postgres]')",
        env="BENCH_NB_REQUIRE_POSTGRES",
    )
    cluster = start_cluster()
    need(isinstance(cluster, Cluster), str(cluster), env="BENCH_NB_REQUIRE_POSTGRES")
    assert isinstance(cluster, Cluster)
    from bench_nb.roi.pg_store import setup_postgres

    try:
        with psycopg.connect(cluster.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {TEMPLATE}")
        assert setup_postgres(cluster.url(database=TEMPLATE))
        yield cluster
    finally:
        cluster.stop()


def new_database(cluster: Cluster) -> str:
    """A fresh database with the ROI schema; returns its URL for the server role."""
    import psycopg

    name = f"roi_{next(_counter)}"
    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    return cluster.url("bench_nb_roi", name)


@pytest.fixture
def pg_db(request: pytest.FixtureRequest) -> str:
    return new_database(request.getfixturevalue("postgres"))


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Path:
    return tmp_path / "roi.sqlite"


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """The ROI store under test: a SQLite path, or a Postgres URL (the server role's)."""
    if request.param == "sqlite":
        return tmp_path / "roi.sqlite"
    return new_database(request.getfixturevalue("postgres"))
