"""``bench-nb demo``: the bundled sample through three providers, then the reports, offline and keyless.

The sample benchmark runs through the SQLite provider and the full-context and no-memory baselines with
the extractive answerer and two deterministic judges (``contains`` primary, ``f1``), via ``bench_nb.runner``; then
every report is built (compare with its judge section, judge disagreement, a run_benchmark report, the
explorer's static view and the ROI tile on its demo memories), and ``reports/index.html`` lists them. Nothing is read from outside the package; no network, no key.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench_nb.errors import ReportError

PROVIDERS = ("sqlite", "full-context", "no-memory")
JUDGES = "contains,f1"  # contains primary: extractive answers are whole sentences, which token F1 marks wrong
TITLE = "Demo: SQLite memory vs full context vs no memory (bundled sample, extractive answerer)"


@dataclass(frozen=True)
class DemoResult:
    """What ``bench-nb demo`` made: the run directories and reports written, the errors met, and the seconds
    taken."""

    runs: list[Path]
    reports: list[Path]
    errors: list[str]
    seconds: float


def make_demo_runs(
    runs_dir: str | Path = "data/demo/runs", *, echo: Callable[[str], None] = lambda _: None
) -> list[Path]:
    """The demo's three runs (sqlite, full-context, no-memory on the bundled sample) in ``runs_dir``, which
    is emptied first (it holds only the demo's own runs), and a leniency audit of their judges beside the
    first (``<run>/audit``). What the notebooks show by default."""
    from bench_nb.runner import run_benchmark

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
    # A leniency audit of the judges (and of the deliberately lenient one), for the judge report.
    from bench_nb.runner.audit import write_audit_runs

    audited = [*JUDGES.split(","), "overlap"]
    audit = write_audit_runs(runs[0], audited)
    echo(f"audited judges {', '.join(audited)}: {len(audit)} sets in {audit[0].path.parent}")
    return runs


def run_demo(
    reports_dir: str | Path = "reports",
    runs_dir: str | Path = "data/demo/runs",
    *,
    echo: Callable[[str], None] = lambda _: None,
) -> DemoResult:
    """Run the demo (``make_demo_runs``), then build every report from its runs.

    Returns what was built; report failures are collected (``errors``), not raised, so the other reports
    still build.
    """
    from bench_nb.reports import build_report, find_notebook

    start = time.perf_counter()
    runs = make_demo_runs(runs_dir, echo=echo)
    out = Path(reports_dir)
    run_paths = [str(r) for r in runs]
    jobs: list[tuple[str, dict[str, object]]] = [
        ("explore", {"runs": run_paths}),  # first: the compare report links to its questions' details there
        ("compare", {"runs": run_paths, "title": TITLE}),
        ("judge_disagreement", {"runs": run_paths, "title": "Demo: which judge to believe"}),
        # A run of its own (the notebook writes it into a temporary directory and removes it).
        (
            "run_benchmark",
            {"provider": "sqlite", "title": "Demo: one benchmark run (sqlite, bundled sample)"},
        ),
        ("roi", {}),  # the ROI benchmark on its bundled demo memories, deterministic prober and judge
    ]
    built, errors = [], []
    for name, params in jobs:
        try:
            find_notebook(name)
        except ReportError:
            echo(f"{name}.ipynb not found: skipped")
            continue
        try:
            report = build_report(name, params, out / f"{name}.html")
            built.append(report.path)
            echo(f"built {report.path}")
        except ReportError as err:
            errors.append(str(err))
            echo(f"FAILED {name}: {err}")
    echo(f"index: {out / 'index.html'}")
    return DemoResult(runs, built, errors, time.perf_counter() - start)
