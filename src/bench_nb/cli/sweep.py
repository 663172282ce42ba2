"""``bench-nb sweep SWEEP.toml``: a grid of runs (providers x benchmarks x k x answerers x judges x repeats),
resumable, on a local process pool or a Ray cluster, plus compare manifests (docs/runner.md, "Sweeps")."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("sweep_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Runs at once on the local process pool (default: the file's, else 2).",
)
@click.option(
    "--ray",
    "ray_address",
    metavar="auto|ADDRESS",
    help="Run on a Ray cluster instead, one task per run: 'auto' joins the cluster this machine is in "
    "(`ray start --head` first), or give its address (needs the ray extra).",
)
@click.option(
    "--runs-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where run directories live (default: the file's runs_dir, else data/runs).",
)
@click.option("--dry-run", is_flag=True, help="List the runs (and whether each exists) without running them.")
def sweep(
    sweep_file: Path, workers: int | None, ray_address: str | None, runs_dir: Path | None, dry_run: bool
) -> None:
    """Run every configuration of SWEEP_FILE as a resumable run; rerunning it resumes.

    SWEEP_FILE is TOML, the grid (providers x benchmarks x k x answerers x judges x repeats) and the settings
    every run shares (docs/runner.md, "Sweeps"); the runs go to --runs-dir, their compare manifests to
    <runs dir>/../compare/<sweep id>/ (data/compare/ID/ by default). For example:

    \b
    id = "retrieval-k"
    providers = ["sqlite", "no-memory"]
    benchmarks = ["sample"]
    k = [5, 10]
    """
    from dataclasses import replace

    from bench_nb.cli.run import _nothing_evaluated, _summary_line
    from bench_nb.runner.sweep import SweepRun, load_sweep, run_sweep

    spec = load_sweep(sweep_file)
    if runs_dir is not None:
        spec = replace(spec, runs_dir=runs_dir)
    if dry_run:
        for p in spec.points:
            state = "exists" if (spec.runs_dir / p.run_id / "checkpoint.json").is_file() else "new"
            click.echo(f"{p.run_id}  ({state})")
        click.echo(f"{len(spec.points)} run(s) in {spec.runs_dir}")
        return

    def show(run: SweepRun) -> None:
        if run.result is None:
            click.secho(f"{run.point.run_id}: error: {run.error}", fg="red", err=True)
        else:
            click.echo(_summary_line(run.result))

    click.echo(
        f"Sweep {spec.sweep_id}: {len(spec.points)} run(s) "
        + ("on Ray" if ray_address else "on a local pool")
    )
    result = run_sweep(spec, workers=workers, ray=ray_address, on_run=show)
    for path in result.manifests:
        click.echo(f"Manifest: {path}")
    bad = [r for r in result.runs if r.status != "completed"]
    if bad:
        click.echo(f"{len(bad)} run(s) not completed; rerun to resume: bench-nb sweep {sweep_file}")
    empty = [r.result for r in result.runs if r.status == "completed" and not r.result.evaluated]
    for r in empty:  # finished, but every question failed: nothing to report, as `bench-nb run` says
        click.echo(f"error: {_nothing_evaluated(r)}", err=True)
    if bad or empty:
        raise SystemExit(1)
