"""``bench-nb memorybench-report``: MemoryBench's report.json for a run.

Its own module so that the command starts without the frames and loaders the other run commands import.
"""

from __future__ import annotations

from pathlib import Path

import click

from bench_nb.runformat.report import write_memorybench_report


@click.command("memorybench-report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--dataset",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The LoCoMo or LongMemEval file the run was made on.",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Default: RUN_DIR/report.json"
)
def memorybench_report_cmd(run_dir: Path, dataset: str, output: Path | None) -> None:
    """Write the report.json MemoryBench would write for RUN_DIR (same values, same key order)."""
    out = output or run_dir / "report.json"
    report = write_memorybench_report(run_dir, dataset, out)
    click.echo(f"wrote {out} ({report['summary']['totalQuestions']} evaluated)")
    if "memscore" in report:
        click.echo(f"MemScore: {report['memscore']}")
