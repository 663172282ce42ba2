"""The columnar run store against JSON run directories: per-run MemScore and per-type accuracy.

    .venv/bin/python bench/store.py                                   # 40 runs x 250 questions (~1 minute)
    .venv/bin/python bench/store.py --runs 1000 --questions 2000      # the issue's size (hours, ~25 GB)
    .venv/bin/python bench/store.py --dir DIR --clean                 # generate in DIR, delete it afterwards

1. Generates (once; reused while DIR holds runs of that size) N MemoryBench runs of M LoCoMo-like questions
   each (bench/load.py's question generator: every phase completed, 5 search results in the checkpoint;
   no results/ files, so no run has a missing-file problem), and exports them with ``export_runs`` into
   DIR/store (timed once, printed: export is a one-off cost per run, incremental after).
2. Measures, in this one process, the best of ``--repeat`` rounds of each:
   - ``json, all runs``: ``memscore`` + ``accuracy_by_type`` of ``questions_df`` over every run directory;
   - ``store, all runs``: the same over ``load_runs(STORE)`` (a fresh StoredRuns each round);
   - ``json, 3 runs`` / ``store, 3 runs``: the same over 3 runs (``load_runs(STORE, runs=[3 ids])``).
   It checks that the store's MemScore and per-type accuracy equal the JSON path's before printing.
3. Prints the times and the ratios store / json (below 1: the store is faster).

A compare report over 3 runs is not measured: ``bench-nb report`` reads run directories (docs/loading.md).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
from polars.testing import assert_frame_equal

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load as load_bench

import bench_nb as bn
from bench_nb.frames.store import export_runs


def generate_run(run_dir: Path, run_id: str, m: int, seed: int, texts: list[str]) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    questions: dict[str, Any] = {}
    for i in range(m):
        qid, entry, _ = load_bench._question(i, rng, texts)
        del entry["phases"]["search"]["resultFile"]
        entry["containerTag"] = f"{qid}-{run_id}"
        questions[qid] = entry
    checkpoint = {
        "runId": run_id,
        "dataSourceRunId": run_id,
        "status": "completed",
        "provider": f"provider-{seed % 4}",
        "benchmark": "locomo",
        "judge": "gpt-4o",
        "answeringModel": "gpt-4o",
        "createdAt": load_bench._stamp(0),
        "updatedAt": load_bench._stamp(m * 40.0),
        "sampling": {"mode": "full"},
        "targetQuestionIds": list(questions),
        "concurrency": {"default": 10},
        "questions": questions,
    }
    (run_dir / "checkpoint.json").write_bytes(msgspec.json.encode(checkpoint))


def generate(root: Path, n: int, m: int) -> list[Path]:
    runs_dir = root / "runs"
    marker = root / ".complete"
    dirs = [runs_dir / f"store-bench-{i:04d}" for i in range(n)]
    if marker.is_file() and marker.read_text() == f"{n}x{m}":
        return dirs
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(20261201)
    texts = [load_bench._text(rng, 250) for _ in range(500)]
    for i, d in enumerate(dirs):
        generate_run(d, d.name, m, seed=i, texts=texts)
    marker.write_text(f"{n}x{m}")
    return dirs


def summary(source: Any) -> tuple[Any, Any]:
    """Per-run MemScore and per-type accuracy (polars)."""
    questions = bn.questions_df(source, backend="polars")
    return bn.memscore(questions, backend="polars"), bn.accuracy_by_type(questions, backend="polars")


def best(fn: Any, repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--questions", type=int, default=250)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-nb-store")
    ap.add_argument("--clean", action="store_true", help="delete DIR afterwards")
    args = ap.parse_args()

    t0 = time.perf_counter()
    dirs = generate(args.dir, args.runs, args.questions)
    print(f"runs: {args.runs} x {args.questions} questions in {args.dir} ({time.perf_counter() - t0:.1f} s)")
    store = args.dir / "store"
    t0 = time.perf_counter()
    result = export_runs(dirs, store)
    print(f"export: {result} in {time.perf_counter() - t0:.1f} s")
    three = dirs[:: max(1, len(dirs) // 3)][:3]
    three_ids = [d.name for d in three]

    cases = {
        "all runs": (lambda: summary(dirs), lambda: summary(bn.load_runs(store))),
        "3 runs": (lambda: summary(three), lambda: summary(bn.load_runs(store, runs=three_ids))),
    }
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'':10} {'json s':>9} {'store s':>9} {'store/json':>11}")
    for name, (from_json, from_store) in cases.items():
        t_json, want = best(from_json, args.repeat)
        t_store, got = best(from_store, args.repeat)
        for g, w in zip(got, want, strict=True):
            assert_frame_equal(g, w)
        print(f"{name:10} {t_json:9.3f} {t_store:9.3f} {t_store / t_json:10.3f}x")
    if args.clean:
        shutil.rmtree(args.dir)


if __name__ == "__main__":
    main()
