"""The run store's export, per run, at three run counts (issue 41): is it linear in runs?

    .venv/bin/python bench/store_export.py                                  # 20, 60, 200 runs x 500 questions
    .venv/bin/python bench/store_export.py --runs 100 300 1000 --questions 2000   # the issue's sizes

Generates the largest count of runs once with bench/store.py's generator (one short search result a
question), then exports the first n of them into a new store for each count n, in this one process, and prints
each export's CPU and wall time per run and its ratio to the smallest count's per-run cost (the baseline,
measured in the same run): 1.00x is linear; the goal is within 15% (at most 1.15x). Also per count: the mean
CPU time of writing one run (the store's own ``_write_run``) in each fifth of the runs, in export order (a cost
that grows with the runs already in the store shows as a rising row), and the garbage collector's CPU time
per run (``gc.callbacks``).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import store as store_bench

import bench_nb.frames.store as store_module
from bench_nb.frames.store import export_runs

_WRITES: list[float] = []  # CPU seconds of each run's write, in export order
_GC = [0.0, 0.0]  # the collector's CPU seconds so far, and when the running collection started


_write_run = store_module._write_run


def _timed_write(*args: Any, **kwargs: Any) -> Any:
    start = time.process_time()
    try:
        return _write_run(*args, **kwargs)
    finally:
        _WRITES.append(time.process_time() - start)


def _on_gc(phase: str, _info: dict[str, int]) -> None:
    if phase == "start":
        _GC[1] = time.process_time()
    else:
        _GC[0] += time.process_time() - _GC[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, nargs="+", default=[20, 60, 200])
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-nb-store-export")
    args = ap.parse_args()
    counts = sorted(args.runs)
    dirs = store_bench.generate(args.dir / "source", counts[-1], args.questions)
    print(f"{counts} runs x {args.questions} questions; load average at start {os.getloadavg()[0]:.1f}")
    base: tuple[float, float] | None = None
    store_module._write_run = _timed_write
    gc.callbacks.append(_on_gc)
    for n in counts:
        target = args.dir / f"store-{n}"
        shutil.rmtree(target, ignore_errors=True)
        _WRITES.clear()
        _GC[0] = 0.0
        cpu, wall = time.process_time(), time.perf_counter()
        result = export_runs(dirs[:n], target)
        cpu, wall = (time.process_time() - cpu) / n, (time.perf_counter() - wall) / n
        assert len(result.written) == n and not result.problems, result
        base = base or (cpu, wall)
        print(
            f"{n:5d} runs: {cpu * 1000:7.1f} ms CPU/run ({cpu / base[0]:.2f}x), "
            f"{wall * 1000:7.1f} ms wall/run ({wall / base[1]:.2f}x); load {os.getloadavg()[0]:.1f}"
        )
        fifth = max(1, n // 5)
        by_fifth = [sum(_WRITES[i : i + fifth]) / len(_WRITES[i : i + fifth]) for i in range(0, n, fifth)]
        print(
            f"      writing a run, by fifth: {', '.join(f'{t * 1000:.0f}' for t in by_fifth)} ms CPU; "
            f"collector {_GC[0] / n * 1000:.1f} ms CPU/run"
        )
        shutil.rmtree(target)


if __name__ == "__main__":
    main()
