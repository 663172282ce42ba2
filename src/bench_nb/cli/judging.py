"""``bench-nb rejudge``: grade runs' answers with more judges (or one LLM judge with several prompts) and show how
they agree; ``bench-nb judge-audit``: how often a judge accepts answers known to be wrong, and rejects right ones."""

from __future__ import annotations

from pathlib import Path

import click

from bench_nb.frames.judgments import judgments_frame
from bench_nb.judges.audit import GENERATORS
from bench_nb.judges.prompts import check_strictness
from bench_nb.metrics.agreement import judge_agreement
from bench_nb.registry import did_you_mean
from bench_nb.runner.rejudge import rejudge as rejudge_run
from bench_nb.tables.html import num


@click.command()
@click.argument(
    "run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "-j",
    "--judges",
    default="",
    help="Comma-separated judges to add, e.g. f1,contains or a model alias (see the judge registry).",
)
@click.option(
    "--judge-prompts",
    default="",
    help="Grade with each LLM judge once per prompt: lenient,standard,strict (judges named model[lenient], "
    "model, model[strict]); without -j, the run's primary judge.",
)
@click.option("--primary", help="Make this judge the run's primary judge (rewrites phases.evaluate).")
@click.option("--force", is_flag=True, help="Grade again answers that already have this judge's verdict.")
@click.option("--concurrency", "-c", type=int, default=1, show_default=True, help="Answers graded at once.")
@click.option(
    "--judge-replicates",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="Grade each answer N times with each model judge (replicate n cached on its own); deterministic "
    "judges grade once.",
)
def rejudge(
    run_dirs: tuple[Path, ...],
    judges: str,
    judge_prompts: str,
    primary: str | None,
    force: bool,
    concurrency: int,
    judge_replicates: int,
) -> None:
    """Grade the existing answers of RUN_DIRS with more judges, keeping every verdict in judgments.jsonl."""
    specs = [s.strip() for s in judges.split(",") if s.strip()]
    prompts = [p.strip() for p in judge_prompts.split(",") if p.strip()]
    if not specs and not prompts and primary is None:
        raise click.UsageError("give judges with -j J1,J2 (and/or --judge-prompts P1,P2, --primary NAME)")
    try:
        for p in prompts:
            check_strictness(p)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--judge-prompts") from None
    graded = scored = 0
    for run_dir in run_dirs:
        if len(run_dirs) > 1:
            click.echo(f"== {run_dir}")
        result = rejudge_run(
            run_dir,
            specs,
            primary=primary,
            force=force,
            concurrency=concurrency,
            judge_prompts=prompts,
            replicates=judge_replicates,
        )
        graded += sum(result.graded.values())
        scored += sum(result.graded.values()) - sum(result.unscored.values())
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
        if not prompts:
            _print_agreement(run_dir)
    if prompts:
        _print_sweep(list(run_dirs))
    if graded and not scored:  # every answer graded, none scored: nothing it was asked to do succeeded
        click.echo(f"error: no answer was scored ({graded} graded, every one unscored)", err=True)
        raise SystemExit(1)


def _print_sweep(run_dirs: list[Path]) -> None:
    from bench_nb.metrics.judge_quality import prompt_sweep_frame, ranking_moves

    sweep = prompt_sweep_frame(judgments_frame(run_dirs))
    click.echo("")
    click.echo(f"{'run':<28} {'judge':<28} {'accuracy':>9} {'95% CI':>15} {'vs standard':>12} {'rank':>5}")
    for r in sweep.iter_rows(named=True):
        ci = f"[{r['ci_low']:.1f}–{r['ci_high']:.1f}]"
        change = "" if r["change"] is None else f"{r['change']:+.1f} pts"
        click.echo(
            f"{r['run_id'][:28]:<28} {r['judge'][:28]:<28} {r['accuracy']:>8.1f}% {ci:>15} {change:>12} "
            f"{r['rank']:>5}"
        )
    moved = ranking_moves(sweep)
    if moved is not None:
        click.echo("")
        click.echo(
            "The ranking of the runs CHANGES with the judge prompt."
            if moved
            else "Every prompt ranks the runs the same way."
        )


@click.command("judge-audit")
@click.argument("run_dir", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-j", "--judges", required=True, help="Comma-separated judges to audit (specs or model aliases)."
)
@click.option(
    "--generators",
    default=",".join(GENERATORS),
    show_default=True,
    help="Audit sets to make: specific, vague, dont-know (known wrong), paraphrase (known right).",
)
@click.option(
    "--known-wrong", is_flag=True, help="RUN_DIR's own answers are known to be wrong (an imported set)."
)
@click.option(
    "-o",
    "--output",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the audit sets go (default RUN_DIR/audit).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="The generators' random seed.")
@click.option("--by-type", is_flag=True, help="Also show the accept rate per question type.")
@click.option("--concurrency", "-c", type=int, default=1, show_default=True, help="Answers graded at once.")
def judge_audit_cmd(
    run_dir: Path,
    judges: str,
    generators: str,
    known_wrong: bool,
    out_dir: Path | None,
    seed: int,
    by_type: bool,
    concurrency: int,
) -> None:
    """Grade answers known to be wrong (and known right) with JUDGES: the false-positive and false-negative
    rates of each judge, with 95% intervals. The sets are written as run directories (resumable)."""
    from bench_nb.metrics.judge_quality import judge_audit_frame, judge_error_rates_frame
    from bench_nb.runner.audit import write_audit_runs

    specs = [s.strip() for s in judges.split(",") if s.strip()]
    chosen = [g.strip() for g in generators.split(",") if g.strip()]
    unknown = [g for g in chosen if g not in GENERATORS]
    if unknown:
        raise click.BadParameter(
            f"unknown generator(s) {', '.join(unknown)}{did_you_mean(unknown[0], GENERATORS)}; known: "
            f"{', '.join(GENERATORS)}"
        )
    made = write_audit_runs(
        run_dir,
        specs,
        generators=chosen,
        out_dir=out_dir,
        seed=seed,
        known_wrong=known_wrong,
        concurrency=concurrency,
    )
    paths = [m.path for m in made]
    click.echo(f"audit sets in {paths[0].parent}")
    graded = sum(sum(m.graded.graded.values()) for m in made)
    if graded and graded == sum(sum(m.graded.unscored.values()) for m in made):  # nothing succeeded
        click.echo(f"error: no audit answer was scored ({graded} graded, every one unscored)", err=True)
        raise SystemExit(1)
    rates = judge_error_rates_frame(paths)
    click.echo("")
    click.echo(f"{'judge':<24} {'set':<12} {'answers':<8} {'n':>5} {'accepts':>8} {'95% CI':>14}  reading")
    for r in rates.iter_rows(named=True):
        row = f"{r['judge'][:24]:<24} {r['generator']:<12} {r['kind']:<8} {r['n']:>5}"
        if not r["n"]:
            click.echo(
                f"{row} {'—':>8} {'':>14}  do not use: none of its {r['unreadable']} verdicts could be read"
            )
            continue
        ci = f"[{r['ci_low']:.1f}–{r['ci_high']:.1f}]"
        reading = "false-positive rate" if r["kind"] == "wrong" else "sensitivity (1 − false-negative rate)"
        click.echo(f"{row} {r['accept_rate']:>7.1f}% {ci:>14}  {reading}")
    if by_type:
        table = judge_audit_frame(paths, by="question_type")
        click.echo("")
        click.echo(f"{'set':<36} {'judge':<20} {'type':<16} {'n':>5} {'accepts':>8} {'95% CI':>14}")
        for r in table.iter_rows(named=True):
            ci = f"[{r['ci_low']:.1f}–{r['ci_high']:.1f}]"
            click.echo(
                f"{r['run_id'][:36]:<36} {r['judge'][:20]:<20} {r['question_type']:<16} {r['n']:>5} "
                f"{r['accept_rate']:>7.1f}% {ci:>14}"
            )


def _print_agreement(run_dir: Path) -> None:
    frame = judgments_frame(run_dir)
    if frame["judge"].n_unique() < 2:
        return
    agreement = judge_agreement(frame)
    acc = agreement.frames["accuracy"]
    click.echo("")
    click.echo(f"{'judge':<24} {'accuracy':>9} {'scored':>7} {'unscored':>9}")
    for r in acc.iter_rows(named=True):
        click.echo(f"{r['judge'][:24]:<24} {num(r['accuracy'], 3):>9} {r['scored']:>7} {r['unscored']:>9}")
    click.echo("")
    click.echo(
        f"agreement over {agreement.n_items} answers every judge scored ({agreement.n_dropped} dropped): "
        f"percent {num(agreement.percent_agreement, 3)}, Fleiss' kappa {num(agreement.fleiss_kappa, 3)}, "
        f"Gwet's AC1 {num(agreement.gwet_ac1, 3)}, "
        f"Krippendorff's alpha {num(agreement.krippendorff_alpha, 3)}"
    )
    pairs = agreement.frames["pairwise"]
    for r in pairs.iter_rows(named=True):
        click.echo(
            f"  {r['judge_a']} vs {r['judge_b']}: n={r['n']} agreement {num(r['percent_agreement'], 3)} "
            f"kappa {num(r['cohen_kappa'], 3)} AC1 {num(r['gwet_ac1'], 3)}"
        )


@click.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--from",
    "source",
    type=click.Choice(["gold-evidence"]),
    default="gold-evidence",
    show_default=True,
    help="Where the new context comes from: the benchmark's gold evidence (the messages and sessions its "
    "evidence ids name).",
)
@click.option(
    "-m",
    "--answerer",
    help="Answer with this answerer instead of the run's own (extractive or a model alias).",
)
@click.option(
    "--dataset", type=click.Path(exists=True, dir_okay=False), help="The benchmark file (default: the run's)."
)
@click.option("--force", is_flag=True, help="Answer again questions already in reanswer.jsonl.")
def reanswer(run_dir: Path, source: str, answerer: str | None, dataset: str | None, force: bool) -> None:
    """Answer RUN_DIR's wrong answers again from the gold evidence alone, graded by the run's primary judge;
    written to RUN_DIR/reanswer.jsonl (the checkpoint is not touched). bn.failure_reasons reads it: a reader
    error still wrong from the evidence alone is confirmed."""
    from bench_nb.runner.reanswer import reanswer as reanswer_run

    click.echo(str(reanswer_run(run_dir, source=source, answerer=answerer, dataset=dataset, force=force)))
