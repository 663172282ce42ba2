"""Building the compare report for 3 runs of 2,000 questions, as a ratio to executing an empty notebook.

Both are measured in the same process, alternately, with the ``python3`` kernel: the empty notebook with
papermill's own ``execute_notebook`` (its defaults, progress bar off), the report with ``build_report``
(execution, chart rendering and the HTML export). The runs are synthetic (tests/synthetic_runs.py:
every phase completed, two judges, retrieved context in the checkpoint). Target: at most 3x.

    .venv/bin/python bench/report.py [--repeat 5] [--questions 2000] [--cells] [--fresh]

The builds run in one process, as ``bench-nb report --all`` builds several reports: the chart worker and
the HTML exporter are made by the first build (the warm-up) and serve the next. ``--fresh`` also measures
each build in a new interpreter (one ``bench-nb report`` command: the worker's engine starts, cold, with the
kernel) against the empty notebook in a new interpreter too. ``--cells`` also prints how long each cell of
one more execution took (papermill's timestamps), to see where the time goes.

bench_nb's modules are compiled to bytecode first (``compileall``), as pip compiles an installed package and
as Python does on a first import: the empty notebook's kernel imports ipykernel from compiled bytecode, and
with ``PYTHONDONTWRITEBYTECODE`` set (as on these machines) an editable bench_nb would otherwise be compiled
from source in every kernel (about 0.1 s).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
import papermill as pm

import bench_nb
from bench_nb.reports import build_report, execute_notebook, find_notebook

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from synthetic_runs import write_synthetic_runs


def _empty_notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("")
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell]
    nbformat.write(nb, path)
    return path


def _print_cells(nb: nbformat.NotebookNode) -> None:
    def ts(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))

    total = 0.0
    for i, cell in enumerate(nb.cells):
        stamps = cell.metadata.get("execution", {})
        if "iopub.execute_input" in stamps:
            took = (ts(stamps["shell.execute_reply"]) - ts(stamps["iopub.execute_input"])).total_seconds()
            total += took
            first = cell.source.splitlines()[0] if cell.source else ""
            print(f"  cell {i:2d} {took:6.3f} s  {first[:70]}")
    print(f"  cells {total:.2f} s of papermill's {nb.metadata.papermill.duration:.2f} s")


def _in_new_interpreter(code: str) -> float:
    """Seconds to run ``code`` in a new Python interpreter, start to exit."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - t


def _fresh(root: Path, empty: Path, params: dict[str, object], repeat: int) -> tuple[float, float]:
    """Medians of the empty notebook and the compare report, each in a new interpreter."""
    run_empty = (
        "import papermill as pm; "
        f"pm.execute_notebook({str(empty)!r}, {str(root / 'fresh-empty.ipynb')!r}, "
        "kernel_name='python3', progress_bar=False)"
    )
    run_report = (
        "from bench_nb.reports import build_report; "
        f"build_report('compare', {params!r}, {str(root / 'fresh.html')!r}, index=False)"
    )
    empties, reports = [], []
    for _ in range(repeat):
        empties.append(_in_new_interpreter(run_empty))
        reports.append(_in_new_interpreter(run_report))
    return statistics.median(empties), statistics.median(reports)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--cells", action="store_true", help="print each cell's duration too")
    parser.add_argument("--fresh", action="store_true", help="also measure each build in a new interpreter")
    args = parser.parse_args()
    compileall.compile_dir(Path(bench_nb.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        root = Path(tmp)
        runs = write_synthetic_runs(root / "runs", n_questions=args.questions)
        empty = _empty_notebook(root / "empty.ipynb")
        params = {"runs": [str(r) for r in runs], "title": "bench/report.py"}
        build_report("compare", params, root / "warmup.html", index=False)  # warm the disk cache
        empties, reports = [], []
        for i in range(args.repeat):
            t = time.perf_counter()
            pm.execute_notebook(
                str(empty), str(root / f"empty-{i}.ipynb"), kernel_name="python3", progress_bar=False
            )
            empties.append(time.perf_counter() - t)
            t = time.perf_counter()
            build_report("compare", params, root / f"compare-{i}.html", index=False)
            reports.append(time.perf_counter() - t)
        size = (root / "compare-0.html").stat().st_size
        if args.cells:
            _print_cells(execute_notebook(find_notebook("compare"), params, root / "cells.ipynb"))
        fresh = _fresh(root, empty, params, args.repeat) if args.fresh else None
    e, r = statistics.median(empties), statistics.median(reports)
    print(
        f"runs: 3 x {args.questions} questions; median of {args.repeat}; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"empty notebook (papermill):      {e:6.2f} s")
    print(f"compare report (execute+export): {r:6.2f} s   ({size / 1e6:.2f} MB HTML)")
    print(f"ratio: {r / e:.2f}x (target <= 3x)")
    if fresh:
        fe, fr = fresh
        print(
            f"in a new interpreter each: empty notebook {fe:.2f} s, compare report {fr:.2f} s, ratio {fr / fe:.2f}x"
        )


if __name__ == "__main__":
    main()
