"""The explore report's per-question grid on large runs: time to build the static page and its size, against
loading the same runs (the baseline, measured in the same run).

    python bench/explore_grid.py RUNS [--dataset BENCHMARK_FILE]

On the two LoCoMo-audit runs (2 x 1,540 questions) the figure is in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time

from bench_nb.frames.questions import questions_frame
from bench_nb.runformat.load import load_runs
from bench_nb.widgets.explorer import Explorer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs")
    parser.add_argument("--dataset")
    args = parser.parse_args()
    start = time.perf_counter()
    questions_frame(load_runs(args.runs), dataset=args.dataset)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    explorer = Explorer(args.runs, dataset=args.dataset)
    page = explorer.static_html()
    build_s = time.perf_counter() - start
    n = explorer.grid_frame().height
    print(
        f"{n} questions: load {load_s:.1f} s; explorer + static page {build_s:.1f} s ({build_s / load_s:.1f}x the load)"
    )
    print(f"page {len(page.encode()) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
