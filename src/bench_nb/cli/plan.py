"""``bench-nb plan``: how small a difference a benchmark can detect, and how many questions a given one
needs, before paying for a run (closed forms with the design effect; docs/statistics.md)."""

from __future__ import annotations

import math
from pathlib import Path

import click

from bench_nb.metrics.power import PAIRED_FEWEST, minimum_detectable_effect, questions_needed


def _sizes(benchmark: str, dataset: Path | None) -> list[tuple[str, int, int]]:
    """(type, questions, haystacks): overall first, then per normalised type."""
    from bench_nb.benchmarks import load_benchmark

    bench = load_benchmark(benchmark, dataset)
    rows = [("all", len(bench.questions), len({q.haystack_id for q in bench.questions}))]
    types: dict[str, list[str]] = {}
    for q in bench.questions:
        types.setdefault(q.norm_type, []).append(q.haystack_id)
    rows += [(t, len(h), len(set(h))) for t, h in types.items()]
    return rows


def _from_runs(runs: str) -> dict[str, tuple[float, float, float, float]]:
    """type -> (accuracy, icc, correlation, icc of differences) measured on existing runs."""
    from bench_nb.metrics.power import detectable_differences_frame

    table = detectable_differences_frame(runs)
    return {
        r["question_type"]: (r["accuracy"], r["icc"], r["correlation"], r["icc_difference"])
        for r in table.iter_rows(named=True)
    }


def _pts(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:.1f} pts"


@click.command()
@click.option("-b", "--benchmark", help="Take the question and haystack counts from this benchmark.")
@click.option("--dataset", type=click.Path(path_type=Path), help="The benchmark's file (else the cache).")
@click.option("--questions", type=int, help="Questions per run (instead of -b).")
@click.option(
    "--haystacks", type=int, help="Haystacks (conversations, chats) they come from (with --questions)."
)
@click.option("--runs", help="Measure accuracy, ICC and correlation on these runs (a glob or a runs folder).")
@click.option(
    "--accuracy", type=float, default=0.7, show_default=True, help="Expected accuracy (without --runs)."
)
@click.option(
    "--icc", type=float, default=0.05, show_default=True, help="Intraclass correlation (without --runs)."
)
@click.option(
    "--correlation", type=float, default=0.5, show_default=True, help="Two runs' correlation on a question."
)
@click.option("--delta", type=float, help="Also: questions needed to detect this difference (a proportion).")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="The test's two-sided level.")
@click.option(
    "--power",
    type=float,
    default=0.8,
    show_default=True,
    help="The chance of detecting a difference that is there.",
)
def plan(
    benchmark: str | None,
    dataset: Path | None,
    questions: int | None,
    haystacks: int | None,
    runs: str | None,
    accuracy: float,
    icc: float,
    correlation: float,
    delta: float | None,
    alpha: float,
    power: float,
) -> None:
    """Plan a benchmark's size: the smallest detectable difference of accuracy, overall and per question
    type, for two runs on the same questions (paired) and on independent samples, with the haystacks as
    clusters; with --delta, the questions and haystacks needed to detect that difference.

    \b
    bench-nb plan -b locomo --delta 0.03
    bench-nb plan --questions 500 --haystacks 20 --accuracy 0.6 --icc 0.1
    bench-nb plan -b locomo --runs 'data/runs/*'    # ICC and correlation measured on your runs
    """
    if benchmark:
        sizes = _sizes(benchmark, dataset)
    elif questions:
        sizes = [("all", questions, haystacks or questions)]
    else:
        raise click.UsageError("give -b BENCHMARK or --questions N (and --haystacks K)")
    measured = _from_runs(runs) if runs else {}
    assumed = f"accuracy {accuracy:.0%}, ICC {icc:g}, correlation {correlation:g}"
    source = f"measured on {runs}" if runs else f"assumed: {assumed}"
    click.echo(f"Smallest detectable difference ({power:.0%} power, {alpha:.0%} two-sided); {source}")
    head = f"{'type':<18}{'questions':>10}{'haystacks':>10}{'acc':>6}{'ICC':>7}{'paired':>12}{'two samples':>13}{'if independent':>16}"
    click.echo(head)
    unmeasured, too_few = [], False
    for name, n, k in sizes:
        p, rho_icc, rho, icc_d = measured.get(name, (accuracy, icc, correlation, icc))
        if runs and name not in measured:
            unmeasured.append(name)
            name = f"{name}*"
        m = n / k if k else 1.0
        if not 0 < p < 1:
            click.echo(f"{name:<18}{n:>10}{k:>10}  accuracy {p:.0%}: nothing to detect")
            continue
        paired = minimum_detectable_effect(n, p, alpha, power, m, icc_d, paired=True, correlation=rho)
        if k < PAIRED_FEWEST:
            paired, too_few = math.nan, True
        two = minimum_detectable_effect(n, p, alpha, power, m, rho_icc)
        naive = minimum_detectable_effect(n, p, alpha, power)
        click.echo(
            f"{name:<18}{n:>10}{k:>10}{p:>6.0%}{rho_icc:>7.3f}{_pts(paired):>12}{_pts(two):>13}{_pts(naive):>16}"
        )
    if unmeasured:
        click.echo(f"* not in the runs: {assumed}")
    fewest = PAIRED_FEWEST
    if too_few:
        click.echo(
            f"paired n/a: the clustered paired test compares {fewest} haystacks at least (the haystacks are "
            "its units)"
        )
    if delta is not None:
        name, n, k = sizes[0]
        p, rho_icc, rho, icc_d = measured.get(name, (accuracy, icc, correlation, icc))
        m = n / k if k else 1.0
        need_paired = questions_needed(delta, p, alpha, power, m, icc_d, paired=True, correlation=rho)
        need_two = questions_needed(delta, p, alpha, power, m, rho_icc)
        hay_paired = math.ceil(need_paired / m)
        if hay_paired < fewest:  # the paired test needs that many haystacks, however many questions
            hay_paired, need_paired = fewest, max(need_paired, math.ceil(fewest * m))
        click.echo(
            f"To detect {delta * 100:.1f} pts at {m:.0f} questions per haystack: "
            f"{need_paired} questions ({hay_paired} haystacks) on the same questions, "
            f"{need_two} per run ({math.ceil(need_two / m)} haystacks) on independent samples."
        )
