"""A damaged run store is repaired or refused, never emptied (issue 38): ``bench-nb export`` run as a real process
on real files. A runs.parquet with one corrupt byte is rebuilt from the runs' intact files (nothing intact is
moved to ``superseded/``); a store whose runs cannot be read back is refused with one ``error:`` line and left as
it was; a ``bench_nb_store.json`` that is not JSON is one ``error:`` line naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from polars.testing import assert_frame_equal

import bench_nb as bn

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RUNS = FIXTURES / "runs"
LMEV2 = FIXTURES / "lmev2_runs" / "no_retrieval_web_small"
RUN_IDS = ["synthetic-full-context", "synthetic-no-memory", "synthetic-sqlite"]
SRC = Path(__file__).resolve().parents[2] / "src"


def _export(*args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PYTHONPATH": str(SRC), "BENCH_NB_QUIET": "1"}
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", "export", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _files(store: Path) -> dict[str, bytes]:
    """Every file of the store but its lock, by relative name."""
    return {
        p.relative_to(store).as_posix(): p.read_bytes()
        for p in sorted(store.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def _corrupt_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the footer's magic: unreadable for any Parquet reader
    path.write_bytes(bytes(data))


def test_one_corrupt_byte_in_runs_parquet_loses_no_intact_run(tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = _export(str(RUNS), "--to", str(store))
    assert first.returncode == 0, first.stderr
    before = bn.questions_df(bn.load_runs(store), backend="polars")
    _corrupt_one_byte(store / "runs.parquet")

    done = _export(str(LMEV2), "--to", str(store))
    assert done.returncode == 0, done.stderr
    assert "written: no_retrieval_web_small" in done.stdout
    (line,) = [x for x in done.stderr.splitlines() if "runs.parquet" in x]
    assert line.startswith("problem: ") and "rebuilt from the 3 run(s) whose files are intact" in line
    stored = bn.load_runs(store)
    assert stored.run_ids == sorted([*RUN_IDS, "no_retrieval_web_small"])
    # nothing intact was retired: superseded/ holds no file of a run
    superseded = store / "superseded"
    assert not superseded.exists() or [p.name for p in superseded.rglob("*") if p.is_file()] == [
        "retired.json"
    ]
    again = bn.questions_df(bn.load_runs(store, runs=RUN_IDS), backend="polars")
    assert_frame_equal(again, before, check_row_order=True)
    assert_frame_equal(
        bn.runs_df(bn.load_runs(store, runs=RUN_IDS), backend="polars"),
        bn.runs_df(RUNS, backend="polars"),
        check_row_order=False,
    )
    # the rebuilt table keeps the fingerprints: the intact runs are unchanged for the next export
    third = _export(str(RUNS), "--to", str(store))
    assert third.returncode == 0 and "0 run(s) written, 3 unchanged" in third.stdout, third.stderr

    # lost whole, with an imported run among the runs and an empty partition folder a crash left: all four back
    frames = bn.questions_df(bn.load_runs(store), backend="polars")
    (store / "runs.parquet").unlink()
    (store / "settings" / "run=crashed").mkdir()
    fourth = _export(str(LMEV2), "--to", str(store))
    assert fourth.returncode == 0 and "0 run(s) written, 1 unchanged" in fourth.stdout, fourth.stderr
    assert "no runs.parquet: rebuilt from the 4 run(s) whose files are intact" in fourth.stderr
    assert_frame_equal(bn.questions_df(bn.load_runs(store), backend="polars"), frames)


def test_a_damaged_runs_table_whose_runs_cannot_be_read_back_is_refused_and_nothing_moves(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    assert _export(str(RUNS), "--to", str(store)).returncode == 0
    for settings in (store / "settings").rglob("*.json"):  # as a store written before the row was kept there
        record = json.loads(settings.read_text())
        del record["run"]
        settings.write_text(json.dumps(record))
    _corrupt_one_byte(store / "runs.parquet")
    files = _files(store)

    done = _export(str(LMEV2), "--to", str(store))
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {store}/runs.parquet") and "nothing was changed" in line
    assert _files(store) == files  # no run written, none retired


def test_a_store_marker_that_is_not_json_is_one_error_line(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "bench_nb_store.json").write_text("{not json")
    done = _export(str(RUNS / "synthetic-sqlite"), "--to", str(store))
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {store}/bench_nb_store.json") and "not JSON" in line
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in store.iterdir()) == ["bench_nb_store.json"]


def test_a_partition_damaged_beside_a_damaged_runs_table_is_refused_not_dropped(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert _export(str(RUNS), "--to", str(store)).returncode == 0
    (hits,) = (store / "hits" / "run=synthetic-sqlite").iterdir()
    _corrupt_one_byte(hits)
    _corrupt_one_byte(store / "runs.parquet")
    files = _files(store)
    done = _export(str(LMEV2), "--to", str(store))
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()
    assert "run partition 'synthetic-sqlite' cannot be read back" in line
    assert _files(store) == files


def test_a_harness_folder_exported_again_is_unchanged(tmp_path: Path) -> None:
    """The incremental check looked the run up by the file inside a harness's folder (per_question.jsonl) while
    the export was given the folder: a LongMemEval-V2 or EverMemOS folder was read and written again every time."""
    store = tmp_path / "store"
    assert _export(str(LMEV2), "--to", str(store)).returncode == 0
    again = _export(str(LMEV2), "--to", str(store))
    assert again.returncode == 0 and "0 run(s) written, 1 unchanged" in again.stdout, again.stdout
