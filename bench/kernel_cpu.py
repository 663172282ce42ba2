"""The compare report's kernel work, CPU seconds, against a baseline commit's: an A/B in the same run.

    .venv/bin/python bench/kernel_cpu.py --baseline e3519ef [--pairs 15] [--questions 2000]

Runs what notebooks/compare.ipynb's cells call (the script ``tests/reports/test_kernel_imports.py`` runs,
``BENCH_NB_REPORT=1``) on 3 synthetic runs of N questions, in a fresh interpreter each time, alternately with
this checkout's bench_nb and the baseline's (``git archive``, as ``bench/load.py`` makes it), and prints the
median of the paired CPU ratios (user + system time of the child: what a loaded shared machine disturbs
least) and of the wall-time ones. No papermill, no chart rendering, no HTML export: only the kernel, where a
change to the statistics or to what they import shows.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "bench"), str(REPO / "tests" / "reports"), str(REPO / "tests")]

from load import baseline_sources  # noqa: E402
from test_kernel_imports import KERNEL  # noqa: E402

from synthetic_runs import write_synthetic_runs  # noqa: E402


def _measure(src: Path, runs: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", KERNEL, runs],
        capture_output=True,
        text=True,
        env=os.environ | {"BENCH_NB_REPORT": "1", "PYTHONPATH": str(src)},
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"the kernel script failed with {src}:\n{proc.stderr[-2000:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, help="the commit to compare with")
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--questions", type=int, default=2000)
    args = ap.parse_args()
    sources = {"this": REPO / "src", "baseline": baseline_sources(args.baseline)}
    for (
        src
    ) in sources.values():  # both imported from bytecode (with PYTHONDONTWRITEBYTECODE set, else source)
        compileall.compile_dir(src / "bench_nb", quiet=1)
    with tempfile.TemporaryDirectory(prefix="bench-kernel-") as tmp:
        write_synthetic_runs(Path(tmp) / "runs", n_questions=args.questions)
        runs = str(Path(tmp) / "runs" / "*")
        _measure(sources["this"], runs)  # warm the disk cache
        cpu: dict[str, list[float]] = {"this": [], "baseline": []}
        wall: dict[str, list[float]] = {"this": [], "baseline": []}
        for _ in range(args.pairs):
            for name, src in sources.items():
                c, w = _measure(src, runs)
                cpu[name].append(c)
                wall[name].append(w)
    cpu_pairs = [a / b for a, b in zip(cpu["this"], cpu["baseline"], strict=True)]
    wall_pairs = [a / b for a, b in zip(wall["this"], wall["baseline"], strict=True)]
    print(f"3 x {args.questions} questions, {args.pairs} pairs; load average {os.getloadavg()[0]:.1f} after")
    print(
        f"kernel CPU: this {statistics.median(cpu['this']):.2f} s, {args.baseline} "
        f"{statistics.median(cpu['baseline']):.2f} s (medians); ratio, median of pairs "
        f"{statistics.median(cpu_pairs):.3f} ({min(cpu_pairs):.2f}-{max(cpu_pairs):.2f})"
    )
    print(
        f"kernel wall: this {statistics.median(wall['this']):.2f} s, {args.baseline} "
        f"{statistics.median(wall['baseline']):.2f} s; ratio, median of pairs {statistics.median(wall_pairs):.3f}"
    )


if __name__ == "__main__":
    main()
