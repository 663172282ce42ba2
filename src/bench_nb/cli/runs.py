"""Commands that read runs: status, show-failures, summary (memorybench-report is cli/mbreport.py)."""

from __future__ import annotations

import warnings
from pathlib import Path

import click
import polars as pl

from bench_nb.errors import RunFormatWarning
from bench_nb.frames.questions import questions_frame
from bench_nb.metrics.accuracy import success_rate_frame
from bench_nb.metrics.memscore import memscore_frame
from bench_nb.registry import did_you_mean
from bench_nb.runformat.format import PHASES, decode_results
from bench_nb.runformat.load import load_runs, read_run
from bench_nb.text import hit_text, one_line

_RULE = "=" * 60


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}ms"


def run_location(run: str, runs_dir: Path) -> Path:
    """A run's directory from what the user typed: a directory, else a run id under ``runs_dir``
    (``bench-nb status`` and ``bench-nb run -r`` take either)."""
    path = Path(run)
    if path.is_dir():
        return path
    if "/" not in run and (runs_dir / run).is_dir():
        return runs_dir / run
    raise click.BadParameter(f"no run directory {run!r}, and no run {run!r} in {runs_dir}", param_hint="RUN")


RUNS_DIR_OPTION = click.option(
    "--runs-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default="data/runs",
    show_default=True,
    help="Where a RUN given by its id is looked for.",
)


@click.command()
@click.argument("which", metavar="RUN")
@RUNS_DIR_OPTION
def status(which: str, runs_dir: Path) -> None:
    """How far a run got: questions per phase, failures and problems. RUN is a run directory or a run id
    (looked for under --runs-dir), as with bench-nb run -r."""
    run = read_run(run_location(which, runs_dir))
    df = questions_frame(run)
    click.echo(_RULE)
    click.echo(f"Run: {run.run_id}")
    if len(df):
        click.echo(f"Provider: {df['provider'][0]}")
        click.echo(f"Benchmark: {df['benchmark'][0]}")
    if run.checkpoint is not None:
        click.echo(f"Status: {run.checkpoint.status}")
    click.echo(_RULE)
    click.echo(f"Total Questions: {len(df)}")
    for phase, word in zip(PHASES, ("Ingested", "Indexed", "Searched", "Answered", "Evaluated"), strict=True):
        done = int((df[f"{phase}_status"] == "completed").sum())
        failed = int((df[f"{phase}_status"] == "failed").sum())
        extra = f"  ({failed} failed)" if failed else ""
        click.echo(f"{word}: {done}{extra}")
    s = success_rate_frame(df) if len(df) else None
    if s is not None and len(s):
        row = s.row(0, named=True)
        click.echo(
            f"Success rate: {row['success_rate']:.1%} ({row['evaluated']} of {row['target']}; "
            f"{row['failed']} failed, {row['pending'] + row['in_progress']} not finished, "
            f"{row['unscored']} unscored)"
        )
    click.echo(_RULE)
    for p in run.problems:
        click.echo(f"problem: {p}", err=True)


@click.command("show-failures")
@click.argument("which", metavar="RUN")
@RUNS_DIR_OPTION
@click.option("--limit", "-n", type=int, default=20, show_default=True, help="Show at most this many.")
@click.option("--results", "n_results", type=int, default=5, show_default=True, help="Top results shown.")
@click.option(
    "-q", "--question", "question_ids", multiple=True, metavar="ID", help="Only this question (repeatable)."
)
@click.option(
    "-t",
    "--type",
    "types",
    multiple=True,
    metavar="TYPE",
    help="Only this type, raw or normalised (repeatable).",
)
def show_failures(
    which: str,
    runs_dir: Path,
    limit: int,
    n_results: int,
    question_ids: tuple[str, ...],
    types: tuple[str, ...],
) -> None:
    """Incorrect, unscored and errored questions: question, ground truth, answer, verdict, top results. RUN is
    a run directory or a run id (looked for under --runs-dir), as with bench-nb status."""
    run_dir = run_location(which, runs_dir)
    run = read_run(run_dir)
    df = questions_frame(run)
    bad = df.filter(
        (pl.col("status") == "failed") | (pl.col("unscored") == True) | (pl.col("correct") == False)  # noqa: E712
    )
    if question_ids:
        missing = sorted(set(question_ids) - set(df["question_id"].to_list()))
        if missing:
            raise click.BadParameter(f"no question {missing[0]!r} in {run_dir}", param_hint="--question")
        bad = bad.filter(pl.col("question_id").is_in(list(question_ids)))
    if types:
        wanted = [t.lower() for t in types]
        known = sorted({str(t) for c in ("question_type", "question_type_norm") for t in df[c].drop_nulls()})
        unknown = [t for t in types if t.lower() not in {k.lower() for k in known}]
        if unknown:
            raise click.BadParameter(
                f"no question type {unknown[0]!r}{did_you_mean(unknown[0], known, cutoff=0.5)} in {run_dir}; "
                f"its types: {', '.join(known)}",
                param_hint="--type",
            )
        bad = bad.filter(
            pl.col("question_type").str.to_lowercase().is_in(wanted)
            | pl.col("question_type_norm").str.to_lowercase().is_in(wanted)
        )
    click.echo("=" * 80)
    header = f"FAILURES: {df['provider'][0]} + {df['benchmark'][0]}" if len(df) else "FAILURES"
    click.echo(f"{header} (run: {run.run_id})")
    click.echo("=" * 80)
    click.echo(f"Showing {min(limit, len(bad))} of {len(bad)} failures")
    for i, row in enumerate(bad.head(limit).iter_rows(named=True), start=1):
        click.echo(f"\n[{i}/{len(bad)}] {row['question_id']}")
        click.echo("-" * 80)
        click.echo(f"Type: {row['question_type']} (normalised: {row['question_type_norm']})")
        click.echo(f"Question: {row['question']}")
        click.echo(f"Ground Truth: {row['ground_truth']}")
        if row["status"] == "failed":
            click.echo(f"Error in {row['failed_phase']}: {row['error']}")
        else:
            click.echo(f"Generated Answer: {row['hypothesis'] or ''}")
            verdict = "unscored" if row["unscored"] else (row["label"] or "incorrect")
            click.echo(f"Judge Verdict: {verdict}")
            click.echo(f"Explanation: {row['explanation'] or ''}")
            click.echo(f"Latency: search={_ms(row['search_ms'])}, answer={_ms(row['answer_ms'])}")
        hits = []
        if run.checkpoint is not None and row["question_id"] in run.checkpoint.questions:
            hits = decode_results(run.checkpoint.questions[row["question_id"]].phases.search.results)
        if hits:
            click.echo(f"\nSearch Results ({len(hits)}):")
            for j, hit in enumerate(hits[:n_results], start=1):
                click.echo(f"  {j}. {one_line(hit_text(hit), 160)!r}")
        click.echo("-" * 80)


@click.command()
@click.argument("runs", nargs=-1, required=True)
@click.option("--dataset", type=click.Path(exists=True, dir_okay=False), help="Benchmark file (true types).")
def summary(runs: tuple[str, ...], dataset: str | None) -> None:
    """A MemScore table of several runs: RUNS are run directories, globs, runs folders or manifests."""
    with warnings.catch_warnings():  # each problem is printed below
        warnings.simplefilter("ignore", RunFormatWarning)
        runset = load_runs(list(runs))
    for p in runset.all_problems:
        click.echo(f"problem: {p}", err=True)
    if not runset:
        raise click.ClickException("no run loaded")
    df = questions_frame(runset, dataset=dataset)
    table = memscore_frame(df)
    click.echo(
        f"{'run':<32} {'provider':<14} {'MemScore':<24} {'accuracy 95% CI':<16} {'evaluated':>11} {'failed':>6}"
    )
    for r in table.iter_rows(named=True):
        ci = f"{r['accuracy_ci_low']:.0%}-{r['accuracy_ci_high']:.0%}" if r["accuracy"] is not None else "n/a"
        mark = " *" if r["custom_prompt"] else ""
        click.echo(
            f"{one_line(r['run_id'], 32):<32} {one_line(r['provider'], 14):<14} {r['memscore'] + mark:<24} "
            f"{ci:<16} {r['evaluated']:>5}/{r['target']:<5} {r['failed']:>6}"
        )
    if table["custom_prompt"].any():
        click.echo("* graded with a provider's own prompt: not comparable with the others")
