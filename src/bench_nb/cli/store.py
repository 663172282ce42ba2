"""``bench-nb export``: runs into a columnar run store (``bench_nb.frames.store``)."""

from __future__ import annotations

import warnings
from pathlib import Path

import click

from bench_nb.errors import RunFormatWarning
from bench_nb.frames.store import export_runs


@click.command("export")
@click.argument("runs", nargs=-1, required=True)
@click.option("--to", "store", required=True, help="The store: a folder, or a URI such as s3://bucket/store.")
@click.option(
    "--dataset",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The benchmark file the runs were made on (true question types, as questions_df's dataset=).",
)
@click.option("--strict", is_flag=True, help="Stop at the first problem instead of exporting what loads.")
def export(runs: tuple[str, ...], store: str, dataset: Path | None, strict: bool) -> None:
    """Write RUNS (run directories, globs, runs folders, compare manifests) into a Parquet run store.

    Incremental: runs whose files did not change since the last export are not read again. One export writes
    a local store at a time (another waits for it); loading the store meanwhile is safe. Open the store
    with bench_nb.load_runs(STORE) (runs=[...] to select runs by id).
    """
    with warnings.catch_warnings():  # each problem is printed below
        warnings.simplefilter("ignore", RunFormatWarning)
        result = export_runs(
            list(runs),
            store,
            dataset=dataset,
            strict=strict,
            on_wait=lambda message: click.echo(message, err=True),
        )
    for run_id in result.written:
        click.echo(f"written: {run_id}")
    for problem in result.problems:
        click.echo(f"problem: {problem}", err=True)
    click.echo(str(result))
    if result.refused:
        raise click.ClickException("no run exported")
