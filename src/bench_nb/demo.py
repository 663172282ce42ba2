"""``bench-nb demo``: the bundled sample through three providers, then the reports, offline and keyless.

The sample benchmark runs through the SQLite provider and the full-context and no-memory baselines with
the extractive answerer and two deterministic judges (``f1``, ``contains``), via ``bench_nb.runner``; then
the compare report (with its judge section) and the judge-disagreement report are built, and
``reports/index.html`` lists them. Nothing is read from outside the package; no network, no key.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench_nb.errors import ReportError

PROVIDERS = ("sqlite", "full-context", "no-memory")
JUDGES = "f1,contains"
TITLE = "Demo: SQLite memory vs full context vs no memory (bundled sample, extractive answerer)"


@dataclass(frozen=True)
class DemoResult:
    runs: list[Path]
    reports: list[Path]
    errors: list[str]
    seconds: float


def run_demo(
    reports_dir: str | Path = "reports",
    runs_dir: str | Path = "data/demo/runs",
    *,
    echo: Callable[[str], None] = lambda _: None,
) -> DemoResult:
    """Run the demo; ``runs_dir`` is emptied first (it holds only the demo's own runs).

    Returns what was built; report failures are collected (``errors``), not raised, so the other reports
    still build.
    """
    from bench_nb.reports import build_report, find_notebook
    from bench_nb.runner import run_benchmark

    start = time.perf_counter()
    runs_path = Path(runs_dir).resolve()
    shutil.rmtree(runs_path, ignore_errors=True)
    runs_path.mkdir(parents=True)
    runs = []
    for provider in PROVIDERS:
        result = run_benchmark(
            provider,
            "sample",
            answerer="extractive",
            judges=JUDGES,
            run_id=f"demo-{provider}",
            runs_dir=runs_path,
            progress=False,
        )
        echo(f"ran {provider}: {result.evaluated} of {result.target} evaluated -> {result.run_dir}")
        runs.append(Path(result.run_dir))
    out = Path(reports_dir)
    jobs = [("compare", {"runs": [str(r) for r in runs], "title": TITLE})]
    try:
        find_notebook("judge_disagreement")
        jobs.append(
            ("judge_disagreement", {"runs": str(runs_path / "*"), "title": "Demo: judge disagreement"})
        )
    except ReportError:
        echo("judge_disagreement.ipynb not found: skipped")
    built, errors = [], []
    for name, params in jobs:
        try:
            report = build_report(name, params, out / f"{name}.html")
            built.append(report.path)
            echo(f"built {report.path}")
        except ReportError as err:
            errors.append(str(err))
            echo(f"FAILED {name}: {err}")
    echo(f"index: {out / 'index.html'}")
    return DemoResult(runs, built, errors, time.perf_counter() - start)
