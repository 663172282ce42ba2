"""``bench-nb rejudge``: grade a run's answers with more judges and show how they agree."""

from __future__ import annotations

import math
from pathlib import Path

import click
import polars as pl

from bench_nb.frames.judgments import judgments_frame
from bench_nb.judges.rejudge import rejudge as rejudge_run
from bench_nb.metrics.agreement import judge_agreement


def _fmt(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


@click.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "-j",
    "--judges",
    "judges",
    default="",
    help="Comma-separated judges to add, e.g. f1,contains or a model alias (see the judge registry).",
)
@click.option("--primary", help="Make this judge the run's primary judge (rewrites phases.evaluate).")
@click.option("--force", is_flag=True, help="Grade again answers that already have this judge's verdict.")
@click.option("--concurrency", "-c", type=int, default=1, show_default=True, help="Answers graded at once.")
def rejudge(run_dir: Path, judges: str, primary: str | None, force: bool, concurrency: int) -> None:
    """Grade RUN_DIR's existing answers with more judges, keeping every verdict in judgments.jsonl."""
    specs = [s.strip() for s in judges.split(",") if s.strip()]
    if not specs and primary is None:
        raise click.UsageError("give judges with -j J1,J2 (and/or --primary NAME)")
    result = rejudge_run(run_dir, specs, primary=primary, force=force, concurrency=concurrency)
    for name in result.judges:
        extra = f", {result.unscored[name]} unscored" if result.unscored[name] else ""
        click.echo(
            f"{name}: graded {result.graded[name]}{extra}; {result.skipped[name]} already had a verdict"
        )
    if result.primary_changed:
        click.echo(f"primary judge is now {result.primary} (checkpoint.json updated)")
    if result.report_stale:
        click.echo(
            "report.json was written under the previous judge: regenerate it "
            f"(bench-nb memorybench-report {run_dir} --dataset ...)",
            err=True,
        )
    _print_agreement(run_dir)


def _print_agreement(run_dir: Path) -> None:
    frame = judgments_frame(run_dir)
    if frame["judge"].n_unique() < 2:
        return
    agreement = judge_agreement(frame, backend="polars")
    acc = agreement.accuracy
    assert isinstance(acc, pl.DataFrame)
    click.echo("")
    click.echo(f"{'judge':<24} {'accuracy':>9} {'scored':>7} {'unscored':>9}")
    for r in acc.iter_rows(named=True):
        click.echo(f"{r['judge'][:24]:<24} {_fmt(r['accuracy']):>9} {r['scored']:>7} {r['unscored']:>9}")
    click.echo("")
    click.echo(
        f"agreement over {agreement.n_items} answers every judge scored ({agreement.n_dropped} dropped): "
        f"percent {_fmt(agreement.percent_agreement)}, Fleiss' kappa {_fmt(agreement.fleiss_kappa)}, "
        f"Gwet's AC1 {_fmt(agreement.gwet_ac1)}, Krippendorff's alpha {_fmt(agreement.krippendorff_alpha)}"
    )
    pairs = agreement.pairwise
    assert isinstance(pairs, pl.DataFrame)
    for r in pairs.iter_rows(named=True):
        click.echo(
            f"  {r['judge_a']} vs {r['judge_b']}: n={r['n']} agreement {_fmt(r['percent_agreement'])} "
            f"kappa {_fmt(r['cohen_kappa'])} AC1 {_fmt(r['gwet_ac1'])}"
        )
