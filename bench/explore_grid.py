"""The per-question grid on large runs: time to build the explore report's static page and its size, and in
JupyterLab the grid widget's time to build and a selected row's time to show its detail, against loading the
same runs (the baseline, measured in the same run).

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
    explorer = Explorer(args.runs, dataset=args.dataset, grid=False)
    page = explorer.static_html()
    build_s = time.perf_counter() - start
    n = explorer.grid_frame().height
    print(
        f"{n} questions: load {load_s:.1f} s; explorer + static page {build_s:.1f} s ({build_s / load_s:.1f}x the load)"
    )
    print(f"page {len(page.encode()) / 1e6:.1f} MB")
    # JupyterLab: the explorer as explore.ipynb makes it there (with its grid widget), against one without the
    # grid; then rows selected in the grid, each showing its question's detail.
    start = time.perf_counter()
    Explorer(args.runs, dataset=args.dataset, grid=False)
    bare_s = time.perf_counter() - start
    start = time.perf_counter()
    widget = Explorer(args.runs, dataset=args.dataset)
    grid_s = time.perf_counter() - start
    picks = range(1, n, max(1, n // 20))
    start = time.perf_counter()
    for i in picks:
        widget.grid.selected_rows = [i]
        assert widget.question.value in widget.detail.value
    row_s = (time.perf_counter() - start) / len(picks)
    print(
        f"explorer {bare_s:.1f} s, with its grid widget {grid_s:.1f} s (+{grid_s - bare_s:.1f} s); "
        f"a selected row's detail {row_s * 1000:.0f} ms ({row_s / load_s:.2f}x the load)"
    )


if __name__ == "__main__":
    main()
