"""``bench-nb gate``, ``bench-nb receipt`` and ``bench-nb verify`` (``bench_nb.receipts``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import click
from click.decorators import FC

from bench_nb.errors import BenchNbError, ReceiptError

dataset_option = click.option(
    "--dataset",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The benchmark file the runs were made on: other harnesses' LoCoMo files (Zep's grades, Mem0's "
    "results) need LoCoMo's locomo10.json.",
)


def public_key_option(what: str) -> Callable[[FC], FC]:
    """``--public-key``: the Ed25519 public key (PEM) ``what`` says."""
    return click.option(
        "--public-key",
        type=click.Path(exists=True, dir_okay=False),
        help=f"The Ed25519 public key (PEM) {what}.",
    )


@click.command()
@click.argument("base")
@click.argument("new")
@click.option(
    "--margin",
    type=float,
    default=0.02,
    show_default=True,
    help="How much worse NEW may be: 0.02 = 2 accuracy points, or 2% more latency / tokens.",
)
@click.option(
    "--metric",
    type=click.Choice(["accuracy", "quality", "latency_ms", "context_tokens"]),
    default="accuracy",
    show_default=True,
    help="What is gated: accuracy (share of scored questions scored 1), quality (mean score, BEAM's graded "
    "runs), latency_ms (search duration) or context_tokens (lower is better for these two).",
)
@click.option(
    "--alpha",
    type=float,
    default=0.1,
    show_default=True,
    help="One-sided level: the largest chance of reporting 'worse' a NEW no worse than the margin allows, "
    "and 'not worse' a NEW worse than it.",
)
@click.option("--by", type=click.Choice(["type"]), help="Also gate each question type.")
@click.option(
    "--on-inconclusive",
    type=click.Choice(["fail", "pass"]),
    default="fail",
    show_default=True,
    help="When the benchmark can show neither 'not worse' nor 'worse': fail (exit 3) or pass (exit 0).",
)
@public_key_option("a signed receipt must be signed with (a signed receipt needs it)")
@click.option(
    "--estimand",
    type=click.Choice(["conversations", "benchmark"]),
    default="conversations",
    show_default=True,
    help="conversations: would NEW be worse on new conversations like these (haystacks as clusters)? "
    "benchmark: is NEW worse on this benchmark beyond run-to-run noise? (BASE and NEW: comma-separated "
    "repeats, bench-nb run --repeat).",
)
@click.option("--store", help="A run store: BASE or NEW that names one of its runs is that run.")
@click.option("--json", "as_json", is_flag=True, help="Print the gate as JSON instead of Markdown.")
@click.option(
    "--summary",
    "summary_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also append the Markdown summary to this file (default: $GITHUB_STEP_SUMMARY when set).",
)
@dataset_option
def gate(
    base: str,
    new: str,
    margin: float,
    metric: str,
    alpha: float,
    by: str | None,
    on_inconclusive: str,
    public_key: str | None,
    estimand: str,
    store: str | None,
    as_json: bool,
    summary_file: Path | None,
    dataset: Path | None,
) -> None:
    """Is NEW worse than BASE by more than the margin? Exit 0 when shown not worse, 1 when shown worse, 3 when
    the benchmark cannot tell (0 with --on-inconclusive pass), 2 when the runs cannot be compared, the
    haystacks are too few to decide, or an input is refused.

    BASE and NEW: run directories, receipts (bench-nb receipt), other harnesses' result files (with
    --dataset) or run ids in --store.
    """
    from bench_nb.receipts.gate import EXIT_CODES, INCOMPARABLE, Gate
    from bench_nb.receipts.gate import gate as run_gate
    from bench_nb.redaction import redact

    try:
        result: Gate = run_gate(
            base, new, margin=margin, metric=metric, alpha=alpha, by=by, store=store, dataset=dataset,
            public_key=public_key, on_inconclusive=on_inconclusive, estimand=estimand,
        )  # fmt: skip
    except (BenchNbError, OSError, ValueError) as err:
        click.echo(f"error: {redact(str(err))}", err=True)
        raise SystemExit(EXIT_CODES[INCOMPARABLE]) from None
    text = result.markdown()
    click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) if as_json else text)
    target = summary_file or (
        Path(os.environ["GITHUB_STEP_SUMMARY"]) if os.environ.get("GITHUB_STEP_SUMMARY") else None
    )
    if target is not None:
        with target.open("a", encoding="utf-8") as f:
            f.write(text + "\n")
    raise SystemExit(result.exit_code)


@click.command()
@click.argument("run")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write it (default: RUN.receipt.json beside the run directory).",
)
@click.option("--store", help="A run store: RUN is a run id in it (then -o is required).")
@click.option(
    "--sign",
    "key",
    type=click.Path(exists=True, dir_okay=False),
    help="Sign with this Ed25519 private key (PEM).",
)
@dataset_option
def receipt(run: str, output: Path | None, store: str | None, key: str | None, dataset: Path | None) -> None:
    """Write RUN's receipt: a canonical, hash-bound summary of its questions, verdicts and numbers.

    RUN: a run directory, another harness's result file (with --dataset), or a run id in --store.
    """
    from bench_nb.receipts.receipt import default_path, make_receipt

    if output is None:
        if store is not None:
            raise click.UsageError("give -o with --store")
        output = default_path(run.rstrip("/\\"))
    try:
        made = make_receipt(run, store=store, sign_with=key, dataset=dataset)
    except ValueError as err:  # a bad value in the run (a score outside [0, 1]), named by run and question
        raise ReceiptError(f"{run}: {err}") from None
    made.write(output)
    signed = " (signed)" if made.signature else ""
    click.echo(f"wrote {output}{signed}: sha256 {made.sha256}")


@click.command()
@click.argument("receipt_file", type=click.Path(dir_okay=False))
@click.argument("run", required=False)
@click.option("--store", help="A run store to recompute from (RUN: a run id in it; default: the receipt's).")
@public_key_option("the receipt must be signed with")
@dataset_option
def verify(
    receipt_file: str, run: str | None, store: str | None, public_key: str | None, dataset: Path | None
) -> None:
    """Check a receipt and recompute every number in it from RUN (default: the run beside it); exit 1 naming
    the first difference."""
    from bench_nb.receipts.receipt import verify_receipt

    check = verify_receipt(receipt_file, run, store=store, public_key=public_key, dataset=dataset)
    click.echo(check.summary(), err=not check.ok)
    raise SystemExit(0 if check.ok else 1)
