"""A run store under concurrent writers and readers, with real processes: one writer at a time (the store's
lock), readers that never see a half-swapped store, superseded files kept out of the glob and cleaned later,
corrupt files named and repaired by a re-export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import bench_nb as bn
from bench_nb.errors import RunFormatError
from bench_nb.frames import store as store_mod
from bench_nb.frames.store import export_runs, open_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
SRC = str(Path(bn.__file__).resolve().parents[1])


def _make_runs(folder: Path, prefix: str, n: int) -> list[Path]:
    """``n`` copies of the fixture run synthetic-no-memory under new run ids."""
    source = json.loads((FIXTURES / "synthetic-no-memory" / "checkpoint.json").read_text())
    judgments = (FIXTURES / "synthetic-no-memory" / "judgments.jsonl").read_text()
    paths = []
    for i in range(n):
        run_id = f"{prefix}-{i:02d}"
        ck = dict(source, runId=run_id, dataSourceRunId=run_id)
        run_dir = folder / run_id
        run_dir.mkdir(parents=True)
        (run_dir / "checkpoint.json").write_text(json.dumps(ck))
        (run_dir / "judgments.jsonl").write_text(
            judgments.replace('"synthetic-no-memory"', json.dumps(run_id))
        )
        paths.append(run_dir)
    return paths


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC}


def _export_process(sources: Path, store: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench_nb", "export", str(sources), "--to", str(store)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _live_files(store: Path) -> set[str]:
    return {
        p.relative_to(store).as_posix()
        for table in ("questions", "judgments", "hits", "settings")
        if (store / table).is_dir()
        for p in (store / table).rglob("*")
        if p.is_file()
    }


def _referenced(store: Path) -> set[str]:
    stored = open_store(store)
    return {
        f"{table}/run={key}/{version}.{'json' if table == 'settings' else 'parquet'}"
        for key, version in stored.runs.select("partition", "version").iter_rows()
        for table in ("questions", "judgments", "hits", "settings")
    }


def test_two_concurrent_exports_keep_every_run_and_leave_no_orphans(tmp_path: Path) -> None:
    _make_runs(tmp_path / "a", "a", 12)
    _make_runs(tmp_path / "b", "b", 12)
    store = tmp_path / "store"
    first, second = _export_process(tmp_path / "a", store), _export_process(tmp_path / "b", store)
    outs = [p.communicate(timeout=300) for p in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outs
    stored = bn.load_runs(store)
    assert len(stored) == 24
    assert _live_files(store) == _referenced(store)  # no orphan, nothing current missing
    assert bn.questions_df(stored, backend="polars").height == 24 * 50
    # The documented glob counts every question once.
    raw = pl.scan_parquet(store / "questions" / "*" / "*.parquet", hive_partitioning=True)
    assert raw.select(pl.len()).collect().item() == 24 * 50


def test_a_second_writer_waits_for_the_lock_and_names_the_holder(tmp_path: Path) -> None:
    _make_runs(tmp_path / "a", "a", 2)
    store = tmp_path / "store"
    export_runs(tmp_path / "a", store)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from bench_nb.frames.store import lock_store\n"
            f"lock = lock_store({str(store)!r})\nprint('locked', flush=True)\ntime.sleep(8)\n",
        ],
        env=_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    proc = subprocess.run(
        [sys.executable, "-m", "bench_nb", "export", str(tmp_path / "a"), "--to", str(store)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    holder.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert holder.returncode == 0
    assert f"process {holder.pid}" in proc.stderr  # ...and said whom it waited for
    assert "0 run(s) written, 2 unchanged" in proc.stdout


_LOAD_LOOP = """
import sys, time
import bench_nb as bn
store, seconds = sys.argv[1], float(sys.argv[2])
ok = failed = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    try:
        s = bn.load_runs(store)
        q = bn.questions_df(s, backend="polars")
        j = bn.judgments_df(s, backend="polars")
        s.recorded_settings()
        assert q.height == 50 * len(s), (q.height, len(s))
        ok += 1
    except Exception as err:
        failed += 1
        print(type(err).__name__, err, file=sys.stderr)
print(ok, failed)
"""


def test_loads_during_repeated_exports_never_fail(tmp_path: Path) -> None:
    runs = _make_runs(tmp_path / "runs", "r", 6)
    store = tmp_path / "store"
    export_runs(tmp_path / "runs", store)
    reader = subprocess.Popen(
        [sys.executable, "-c", _LOAD_LOOP, str(store), "20"],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Re-export changed runs again and again while the reader loads: every export replaces every run.
    exports = 0
    while reader.poll() is None:
        for run_dir in runs:
            path = run_dir / "judgments.jsonl"
            path.write_text(path.read_text() + "\n")
        export_runs(tmp_path / "runs", store)
        exports += 1
    out, err = reader.communicate()
    ok, failed = map(int, out.split())
    assert exports >= 3 and ok >= 3
    assert failed == 0, err[-3000:]


def test_superseded_files_leave_the_glob_and_are_deleted_after_the_grace_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (run_dir,) = _make_runs(tmp_path / "runs", "r", 1)
    store = tmp_path / "store"
    export_runs(run_dir, store)
    old = open_store(store)  # readers that opened the store before the next export
    stale = open_store(store)
    (run_dir / "judgments.jsonl").write_text((run_dir / "judgments.jsonl").read_text() + "\n")
    export_runs(run_dir, store)
    assert _live_files(store) == _referenced(store)
    superseded = sorted(p.name for p in (store / "superseded").rglob("*.parquet"))
    assert len(superseded) == 3  # the old version's questions, judgments and hits
    # The reader that opened the old version still reads it.
    assert bn.questions_df(old, backend="polars").height == 50
    assert len(old.recorded_settings()) == 1
    # A later export deletes superseded files only once they are older than the grace period.
    export_runs(run_dir, store)
    assert len(list((store / "superseded").rglob("*.parquet"))) == 3
    monkeypatch.setattr(store_mod, "KEEP_SUPERSEDED_S", 0.0)
    export_runs(run_dir, store)
    assert list((store / "superseded").rglob("*.parquet")) == []
    with pytest.raises(RunFormatError, match="exported again since it was opened"):
        bn.questions_df(stale)  # opened before the version it reads was deleted: says so


def test_orphans_an_earlier_export_left_are_cleaned(tmp_path: Path) -> None:
    (run_dir,) = _make_runs(tmp_path / "runs", "r", 1)
    store = tmp_path / "store"
    export_runs(run_dir, store)
    # What a concurrent export of older code left: files of a version no runs.parquet row names.
    for table in ("questions", "judgments", "hits"):
        folder = store / table / "run=r-00"
        (folder / "20250101T000000-deadbeef.parquet").write_bytes(next(folder.iterdir()).read_bytes())
    (store / "questions" / "run=gone").mkdir()
    (store / "questions" / "run=gone" / "20250101T000000-deadbeef.parquet").write_bytes(b"x")
    export_runs(run_dir, store)
    assert _live_files(store) == _referenced(store)
    raw = pl.scan_parquet(store / "questions" / "*" / "*.parquet", hive_partitioning=True)
    assert raw.select(pl.len()).collect().item() == 50


def test_a_corrupt_store_file_is_named_and_a_re_export_repairs_it(tmp_path: Path) -> None:
    (run_dir,) = _make_runs(tmp_path / "runs", "r", 1)
    store = tmp_path / "store"
    export_runs(run_dir, store)
    (path,) = (store / "questions" / "run=r-00").iterdir()
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(RunFormatError) as err:
        bn.questions_df(bn.load_runs(store))
    assert str(path) in str(err.value) and "export" in str(err.value)
    result = export_runs(run_dir, store)
    assert result.written == ["r-00"]
    assert bn.questions_df(bn.load_runs(store), backend="polars").height == 50
    # A corrupt runs table: named; a re-export rebuilds it from the runs' intact files (issue 38: the run is
    # current again, unchanged, not written again).
    (store / "runs.parquet").write_bytes(b"PAR1 not parquet")
    with pytest.raises(RunFormatError, match=r"runs\.parquet"):
        bn.load_runs(store)
    result = export_runs(run_dir, store)
    assert result.unchanged == ["r-00"] and any("runs.parquet" in str(p) for p in result.problems)
    assert bn.questions_df(bn.load_runs(store), backend="polars").height == 50
    assert _live_files(store) == _referenced(store)


def test_export_dataset_reaches_imported_files(
    tmp_path: Path, harness_results: Path, locomo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from bench_nb.cli import cli

    monkeypatch.chdir(tmp_path)  # no data/benchmarks download cache here: only --dataset finds LoCoMo
    files = [harness_results / "zep" / "zep_locomo_grades.json", harness_results / "mem0" / "results.json"]
    out = CliRunner().invoke(
        cli, ["export", *map(str, files), "--to", str(tmp_path / "store"), "--dataset", str(locomo_path)]
    )
    assert out.exit_code == 0, out.output
    assert "2 run(s) written" in out.output
    stored = bn.load_runs(tmp_path / "store")
    want = bn.load_runs(files, dataset=locomo_path)
    got = bn.questions_df(stored, backend="polars").drop("run_path").sort("run_id", "question_id")
    expected = bn.questions_df(want, dataset=locomo_path, backend="polars").drop("run_path")
    assert_frame_equal(got, expected.sort("run_id", "question_id"))
