"""A reader keeps reading the version of each run it opened, however many exports move its files out of the
tables while it reads (issue 31: a slow reader during repeated exports failed with FileNotFoundError once
its retries ran out). The race is forced: a real export moves a file the reader has just found, before it
reads it, on every read attempt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_store_concurrency import _make_runs

import bench_nb as bn
from bench_nb.frames.store import SUPERSEDED, export_runs, open_store


def _touch(run_dir: Path) -> None:
    path = run_dir / "judgments.jsonl"
    path.write_text(path.read_text() + "\n")


def test_every_file_moved_between_finding_and_reading_is_read_from_superseded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _make_runs(tmp_path / "runs", "r", 4)
    store = tmp_path / "store"
    export_runs(tmp_path / "runs", store)
    reader = open_store(store)
    expected = bn.questions_df(open_store(store), backend="polars")
    by_key = {f"run={run.name}": run for run in runs}
    scan_parquet = pl.scan_parquet
    moved: list[str] = []

    def export_under_the_reader(files: list[str], **kwargs: Any) -> pl.LazyFrame:
        # The reader has found these files; before it reads them an export replaces the run of the first
        # one still in its table, moving that file to superseded/ (one run per read attempt).
        live = [f for f in files if f"/{SUPERSEDED}/" not in f]
        if live:
            run_dir = by_key[Path(live[0]).parent.name]
            _touch(run_dir)
            assert export_runs(run_dir, store).written == [run_dir.name]
            assert not Path(live[0]).exists()
            moved.append(run_dir.name)
        return scan_parquet(files, **kwargs)

    monkeypatch.setattr(pl, "scan_parquet", export_under_the_reader)
    got = bn.questions_df(reader, backend="polars")
    monkeypatch.undo()
    assert moved == ["r-00", "r-01", "r-02", "r-03"]  # every file moved under the reader, one at a time
    assert_frame_equal(got, expected)  # the version it opened, read from superseded/
    assert len(reader.recorded_settings()) == 4
    # A new reader sees the new versions, from the tables.
    fresh = open_store(store)
    assert not any(f"/{SUPERSEDED}/" in f for f in fresh.files("questions"))
    assert set(fresh.runs["version"]).isdisjoint(reader.runs["version"])
