"""The store's lock leaves no ``.lock`` file behind (issue 31: a refused ``bench-nb export``, to a folder that
is not a store or with runs that do not load, left a stray ``.lock``), and removing it keeps one writer at a
time; a refused first export leaves nothing it created (the folder, bench_nb_store.json, a run's files), and
an export waiting on it makes the store again. Real processes throughout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import bench_nb as bn

SRC = str(Path(bn.__file__).resolve().parents[1])
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "synthetic-no-memory"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC}


def _export(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", "export", *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_refused_export_leaves_no_lock_file(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-store"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    proc = _export(str(FIXTURE), "--to", str(folder))
    assert proc.returncode == 1 and "not a run store" in proc.stderr, proc.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    store = tmp_path / "store"
    proc = _export(str(tmp_path / "no-such-run"), "--to", str(store))
    assert proc.returncode == 1 and "no run exported" in proc.stderr, proc.stderr
    assert not (store / ".lock").exists()
    # A successful export leaves none either.
    proc = _export(str(FIXTURE), "--to", str(store))
    assert proc.returncode == 0, proc.stderr
    assert not (store / ".lock").exists()
    assert bn.runs_df(bn.load_runs(store), backend="polars")["run_id"].to_list() == ["synthetic-no-memory"]


_HOLD = """
import sys
from bench_nb.frames.store import lock_store
lock = lock_store(sys.argv[1])
print("locked", flush=True)
sys.stdin.readline()
lock.release()
"""

_REFUSED = """
import sys
from bench_nb.errors import RunFormatError
from bench_nb.frames.store import lock_store
try:
    lock_store(sys.argv[1], wait=False)
except RunFormatError as err:
    print("refused:", err)
"""


def test_a_refused_writer_leaves_the_holders_lock_and_the_waiter_cleans_up(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert _export(str(FIXTURE), "--to", str(store)).returncode == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(store)],
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "locked"
    refused = subprocess.run(
        [sys.executable, "-c", _REFUSED, str(store)], env=_env(), capture_output=True, text=True, timeout=60
    )
    assert f"process {holder.pid}" in refused.stdout, refused.stdout + refused.stderr
    assert (store / ".lock").exists()  # still the holder's: the refused writer removed nothing
    waiter = subprocess.Popen(
        [sys.executable, "-m", "bench_nb", "export", str(FIXTURE), "--to", str(store)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert waiter.stderr is not None
    assert "waiting for it to finish" in waiter.stderr.readline()
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.wait(timeout=30) == 0
    out, err = waiter.communicate(timeout=120)
    assert waiter.returncode == 0, err
    assert "0 run(s) written, 1 unchanged" in out
    assert not (store / ".lock").exists()


_COUNT = """
import sys, time
from pathlib import Path
from bench_nb.frames.store import lock_store
store, counter = sys.argv[1], Path(sys.argv[2])
for _ in range(40):
    with lock_store(store, on_wait=lambda message: None):
        n = int(counter.read_text())
        time.sleep(0.001)
        counter.write_text(str(n + 1))
"""


def test_removing_the_lock_file_keeps_one_writer_at_a_time(tmp_path: Path) -> None:
    """Three processes take and release the lock 40 times each around a read-increment-write: a lock file
    removed while another process waits on it must not let two writers in (each waiter re-checks the file)."""
    counter = tmp_path / "counter"
    counter.write_text("0")
    procs = [
        subprocess.Popen([sys.executable, "-c", _COUNT, str(tmp_path / "store"), str(counter)], env=_env())
        for _ in range(3)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert counter.read_text() == "120"
    assert not (tmp_path / "store" / ".lock").exists()


def _bad_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "checkpoint.json").write_text("{ not json")
    return folder


def test_a_refused_first_export_leaves_nothing_it_created(tmp_path: Path) -> None:
    # Nothing to export, into a folder (and parents) that did not exist: none of them is left.
    proc = _export(str(tmp_path / "no-such-run"), "--to", str(tmp_path / "new" / "deeper" / "store"))
    assert proc.returncode == 1 and "no run exported" in proc.stderr, proc.stderr
    assert not (tmp_path / "new").exists()
    # --strict stops at a run that does not load after writing one that does: an empty folder stays empty.
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a-good").symlink_to(FIXTURE, target_is_directory=True)
    _bad_run(runs / "b-bad")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = _export(str(runs / "a-good"), str(runs / "b-bad"), "--to", str(empty), "--strict")
    assert proc.returncode == 1 and "b-bad" in proc.stderr, proc.stderr
    assert list(empty.iterdir()) == []
    # A refused export to an existing store changes nothing in it.
    store = tmp_path / "store"
    assert _export(str(FIXTURE), "--to", str(store)).returncode == 0
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    proc = _export(str(runs / "b-bad"), "--to", str(store))
    assert proc.returncode == 1 and "no run exported" in proc.stderr, proc.stderr
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before
    assert bn.runs_df(bn.load_runs(store), backend="polars")["run_id"].to_list() == ["synthetic-no-memory"]


_REFUSED_AFTER_SIGNAL = """
import sys
from bench_nb.frames import store
real = store._export
def _export(*args):
    print("locked", flush=True)
    sys.stdin.readline()
    return real(*args)
store._export = _export
result = store.export_runs(sys.argv[1], sys.argv[2])
print("refused" if result.refused else "exported", flush=True)
"""


def test_an_export_waiting_on_a_refused_first_export_makes_the_store_again(tmp_path: Path) -> None:
    # A refused first export removes the folder it made while another export waits on its lock: the waiter
    # makes the folder again and exports (one writer throughout).
    store = tmp_path / "store"
    refused = subprocess.Popen(
        [sys.executable, "-c", _REFUSED_AFTER_SIGNAL, str(tmp_path / "no-such-run"), str(store)],
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert refused.stdin is not None and refused.stdout is not None
    assert refused.stdout.readline().strip() == "locked"
    waiter = subprocess.Popen(
        [sys.executable, "-m", "bench_nb", "export", str(FIXTURE), "--to", str(store)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert waiter.stderr is not None and "waiting for it to finish" in waiter.stderr.readline()
    refused.stdin.write("go\n")
    refused.stdin.flush()
    assert refused.stdout.readline().strip() == "refused"
    assert refused.wait(timeout=60) == 0
    out, err = waiter.communicate(timeout=120)
    assert waiter.returncode == 0, err
    assert "1 run(s) written" in out
    assert bn.runs_df(bn.load_runs(store), backend="polars")["run_id"].to_list() == ["synthetic-no-memory"]
    assert not (store / ".lock").exists()
