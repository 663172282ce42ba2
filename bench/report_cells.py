"""The compare report's cells, CPU seconds each, against a baseline commit's: an A/B in the same run.

    .venv/bin/python bench/report_cells.py --baseline 8f5fad7 [--pairs 7] [--questions 2000]

Runs notebooks/compare.ipynb's code cells in order in one IPython shell (``BENCH_NB_REPORT=1``, polars and
OpenBLAS on one thread, as ``build_report``'s kernel; the parameters at their defaults, ``runs`` the 3
synthetic runs) in a fresh interpreter each time, alternately with this checkout's bench_nb and notebook and
the baseline's (``git archive``, as ``bench/load.py`` makes it; both compiled to bytecode first, as
``bench/report.py`` does), and prints each cell's median CPU time (user + system of the process while the
cell ran: what a loaded shared machine disturbs least) on both sides and the median of the paired ratios of
their totals. Where ``bench/kernel_cpu.py`` runs the test's script of
the same calls, this runs the notebook itself, cell by cell; neither has papermill, charts or the export.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "bench"), str(REPO / "tests")]

from load import baseline_sources  # noqa: E402

from synthetic_runs import write_synthetic_runs  # noqa: E402

# Runs in the child: each code cell of the notebook (argv[1]) in one shell, the runs (argv[2]) after the
# parameters cell; prints the CPU seconds of each cell, with its first line, as JSON.
CELLS = """
import contextlib, io, json, os, sys, time
os.environ.update(BENCH_NB_REPORT="1", POLARS_MAX_THREADS="1", OPENBLAS_NUM_THREADS="1")
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
cells = [c for c in json.load(open(sys.argv[1]))["cells"] if c["cell_type"] == "code"]
code = ["".join(c["source"]) for c in cells]
code.insert(1, f"runs = {sys.argv[2]!r}")
out = []
for source in code:
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        result = shell.run_cell(source, store_history=False)
    if not result.success:
        raise SystemExit(f"cell {source.splitlines()[0]!r} failed: {result.error_in_exec or result.error_before_exec}")
    out.append([(source.splitlines() or [""])[0][:60], time.process_time() - start])
print("CELLS " + json.dumps(out))
"""


def _measure(src: Path, notebook: Path, runs: str) -> list[tuple[str, float]]:
    proc = subprocess.run(
        [sys.executable, "-c", CELLS, str(notebook), runs],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(src)},
    )
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("CELLS ")), None)
    if proc.returncode != 0 or line is None:
        raise SystemExit(f"the notebook failed with {src}:\n{(proc.stderr or proc.stdout)[-2000:]}")
    return [(first, cpu) for first, cpu in json.loads(line.removeprefix("CELLS "))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, help="the commit to compare with")
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--questions", type=int, default=2000)
    args = ap.parse_args()
    base_src = baseline_sources(args.baseline)
    base_notebook = base_src.parent / "compare.ipynb"
    base_notebook.write_bytes(
        subprocess.run(
            ["git", "-C", str(REPO), "show", f"{args.baseline}:notebooks/compare.ipynb"],
            check=True,
            capture_output=True,
        ).stdout
    )
    sides = {
        "this": (REPO / "src", REPO / "notebooks" / "compare.ipynb"),
        "baseline": (base_src, base_notebook),
    }
    for (
        src,
        _,
    ) in sides.values():  # both imported from bytecode (with PYTHONDONTWRITEBYTECODE set, else source)
        compileall.compile_dir(src / "bench_nb", quiet=1)
    with tempfile.TemporaryDirectory(prefix="bench-cells-") as tmp:
        write_synthetic_runs(Path(tmp) / "runs", n_questions=args.questions)
        runs = str(Path(tmp) / "runs" / "*")
        _measure(*sides["this"], runs)  # warm the disk cache
        got: dict[str, list[list[tuple[str, float]]]] = {"this": [], "baseline": []}
        for _ in range(args.pairs):
            for name, (src, notebook) in sides.items():
                got[name].append(_measure(src, notebook, runs))
    print(f"3 x {args.questions} questions, {args.pairs} pairs; load average {os.getloadavg()[0]:.1f} after")
    medians = {
        name: [statistics.median(c) for c in zip(*[[cpu for _, cpu in r] for r in rs], strict=True)]
        for name, rs in got.items()
    }
    firsts = [first for first, _ in got["this"][0]]
    if len(firsts) == len(medians["baseline"]):  # the same cells: side by side
        for first, a, b in zip(firsts, medians["baseline"], medians["this"], strict=True):
            if max(a, b) >= 0.01:
                print(f"  {b:6.3f} s (baseline {a:6.3f} s)  {first}")
    totals = {name: [sum(cpu for _, cpu in r) for r in rs] for name, rs in got.items()}
    pairs = [a / b for a, b in zip(totals["this"], totals["baseline"], strict=True)]
    print(
        f"cells' CPU: this {statistics.median(totals['this']):.2f} s, {args.baseline} "
        f"{statistics.median(totals['baseline']):.2f} s (medians); ratio, median of pairs "
        f"{statistics.median(pairs):.3f} ({min(pairs):.2f}-{max(pairs):.2f})"
    )


if __name__ == "__main__":
    main()
