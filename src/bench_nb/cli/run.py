"""``bench-nb run``, ``bench-nb compare`` and ``bench-nb clean``: the runner from the command line.

Defaults: answerer ``extractive`` (offline), judges ``contains,f1`` (``contains`` is primary: the extractive
answerer answers with a whole sentence, which token F1 penalises; ``rubric`` for BEAM), k 10, concurrency 8 per phase. Rerunning
with the same ``-r RUN_ID`` resumes the run; ``bench-nb run -r RUN_ID`` alone resumes it with the options it
was started with. The CLI passes only what was typed: the runner reads the rest of a resumed run's settings
from its directory (``runner.plan``), as it does for ``run_benchmark(run_id=...)`` in a notebook.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from bench_nb.benchmarks.registry import benchmark_traits, list_benchmarks
from bench_nb.cli.reporting import parse_value
from bench_nb.errors import BenchNbError
from bench_nb.runformat.format import PHASES
from bench_nb.runformat.spec import RunRequest
from bench_nb.runner.retry import RetryPolicy
from bench_nb.runner.settings import (
    DEFAULT_ANSWERER,
    DEFAULT_CONCURRENCY,
    DEFAULT_INDEXING_TIMEOUT_S,
    DEFAULT_JUDGES,
    DEFAULT_K,
    DEFAULT_QUESTION_TIMEOUT_S,
    ExecutionOptions,
)


def _key_values(pairs: tuple[str, ...], what: str) -> dict[str, Any]:
    """``("a=1", "b=x")`` -> ``{"a": 1, "b": "x"}``, each value read as ``bench-nb report``'s ``-p`` values are
    (``parse_value``)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint=what)
        out[key.strip()] = parse_value(value)
    return out


def _run_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options ``run`` and ``compare`` share: one set of settings for every provider."""
    options = [
        click.option(
            "-b", "--benchmark", help="Benchmark name: locomo, longmemeval, beam, sample, custom, ..."
        ),
        click.option(
            "--tier",
            type=click.Choice(["100K", "500K", "1M", "10M", "small", "medium"], case_sensitive=False),
            help="BEAM's tier (with -b beam; default 100K) or LongMemEval-V2's (with -b longmemeval-v2: small, "
            "the default, or medium).",
        ),
        click.option(
            "--dataset",
            type=click.Path(exists=True, path_type=Path),
            help="Benchmark file, or folder: for BEAM a tier folder of chat folders (1/, 2/, ...); for "
            "LongMemEval-V2 the folder holding questions.jsonl, trajectories.jsonl and haystacks/.",
        ),
        click.option("-m", "--answerer", help=f"Answerer (default {DEFAULT_ANSWERER}) or LLM model alias."),
        click.option(
            "-j",
            "--judges",
            help=f"Judges, comma-separated; the first is primary (default {','.join(DEFAULT_JUDGES)}; rubric "
            "for BEAM).",
        ),
        click.option("--limit", type=click.IntRange(min=1), help="Ask only the first N questions."),
        click.option(
            "--sample", "per_type", type=click.IntRange(min=1), help="Ask the first N questions of each type."
        ),
        click.option(
            "--exclude-types",
            metavar="TYPES",
            help="Leave out these question types, comma-separated (raw or normalised): "
            "--exclude-types adversarial scores LoCoMo's 1,540 questions of categories 1-4, as the "
            "literature does.",
        ),
        click.option(
            "-k", type=click.IntRange(min=1), help=f"Retrieval limit, the same for all (default {DEFAULT_K})."
        ),
        click.option(
            "-c",
            "--concurrency",
            type=click.IntRange(min=1),
            help=f"Tasks at once in each phase, sliding window (default {DEFAULT_CONCURRENCY}).",
        ),
        click.option(
            "--phase-concurrency",
            multiple=True,
            metavar="PHASE=N",
            help=f"Per-phase override, repeatable ({', '.join(PHASES)}).",
        ),
        click.option(
            "--isolate-per-question",
            is_flag=True,
            default=None,
            help="One container per question (MemoryBench's way).",
        ),
        click.option(
            "--allow-provider-prompts",
            is_flag=True,
            help="Let the provider bring its own answer/judge prompt for LLM answerers and judges; the run "
            "is then marked as not graded like the others.",
        ),
        click.option(
            "--fail-fast", is_flag=True, help="Stop at the first question that fails after its retries."
        ),
        click.option(
            "--judge-replicates",
            type=click.IntRange(min=1),
            metavar="N",
            help="Grade each answer N times with each model judge (deterministic judges grade once); the "
            "checkpoint keeps the primary judge's majority, judgments.jsonl every replicate.",
        ),
        click.option(
            "--retries",
            type=click.IntRange(min=0),
            default=3,
            show_default=True,
            help="Retries of a retryable error.",
        ),
        click.option(
            "-s",
            "--provider-setting",
            multiple=True,
            metavar="[PROVIDER.]KEY=VALUE",
            help="Provider option, repeatable; PROVIDER.KEY=VALUE gives it to that provider only (for "
            "compare), KEY=VALUE to all. Never a key or token: those come from the environment only.",
        ),
        click.option(
            "--indexing-timeout",
            type=click.FloatRange(min=0, min_open=True),
            metavar="SECONDS",
            help=f"How long a container's indexing may take before its questions fail (default "
            f"{DEFAULT_INDEXING_TIMEOUT_S:g}).",
        ),
        click.option(
            "--question-timeout",
            type=click.FloatRange(min=0, min_open=True),
            metavar="SECONDS",
            help=f"The longest a question's search, answer or evaluation may take, retries included (default "
            f"{DEFAULT_QUESTION_TIMEOUT_S:g}).",
        ),
        click.option(
            "--sha256",
            metavar="HEX",
            help="The benchmark file's expected sha256: a file with another hash is refused before anything "
            "runs.",
        ),
        click.option(
            "--runs-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default="data/runs",
            show_default=True,
            help="Where run directories live.",
        ),
        click.option(
            "--dry-run",
            is_flag=True,
            help="Check keys and providers and print what the run will cost (containers, searches, model "
            "calls, tokens, list price, disk, memory); run nothing.",
        ),
        click.option(
            "--progress/--no-progress",
            default=None,
            help="Progress bars (default: on in a terminal, off with BENCH_NB_QUIET=1).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _settings(opts: dict[str, Any]) -> dict[str, Any]:
    """What the user typed, as ``run_benchmark``'s options (``run_comparison`` passes them on): the request's
    settings (``_spec``) and how the run is executed (``_options``); an option not typed is None, so a new run
    takes the default and a resumed run (``-r``) its own setting."""
    request, options = _spec(None, opts), _options(opts)
    given = {
        f.name: getattr(request, f.name) for f in dataclasses.fields(request) if f.name not in _NOT_OPTIONS
    }
    return {
        **given,
        "runs_dir": opts["runs_dir"],
        **{f.name: getattr(options, f.name) for f in dataclasses.fields(options)},
    }


# The request's fields that are not options of ``run_benchmark`` or that the CLI never sets (``question_ids``).
_NOT_OPTIONS = ("provider", "benchmark", "question_ids", "context_format")


def _spec(provider: str | None, opts: dict[str, Any]) -> RunRequest:
    """What the user typed, as the run's ``RunRequest`` (an option not typed is None: a new run takes the default,
    a resumed run, ``-r``, its own setting: the runner reads it from the run directory)."""
    return RunRequest(
        provider=provider,
        benchmark=opts["benchmark"],
        dataset=None if opts["dataset"] is None else str(opts["dataset"]),
        answerer=opts["answerer"],
        judges=_names(opts["judges"]),
        k=opts["k"],
        limit=opts["limit"],
        sample_per_type=opts["per_type"],
        isolate_per_question=opts["isolate_per_question"],
        allow_provider_prompts=opts["allow_provider_prompts"] or None,
        provider_settings=_key_values(opts["provider_setting"], "--provider-setting") or None,
        judge_replicates=opts.get("judge_replicates"),
        sha256=opts["sha256"],
        exclude_types=_names(opts.get("exclude_types")),
    )


def _names(text: str | None) -> list[str] | None:
    """``"a, b"`` -> ``["a", "b"]``; nothing typed -> None."""
    return [name.strip() for name in text.split(",") if name.strip()] if text else None


def _options(opts: dict[str, Any]) -> ExecutionOptions:
    """How the run is executed: what may change on any resume."""
    return ExecutionOptions(
        concurrency=opts["concurrency"] or DEFAULT_CONCURRENCY,
        phase_concurrency={
            k: int(v) for k, v in _key_values(opts["phase_concurrency"], "--phase-concurrency").items()
        },
        fail_fast=opts["fail_fast"],
        retry=RetryPolicy(max_attempts=opts["retries"] + 1),
        indexing_timeout_s=opts["indexing_timeout"] or DEFAULT_INDEXING_TIMEOUT_S,
        question_timeout_s=opts["question_timeout"] or DEFAULT_QUESTION_TIMEOUT_S,
        progress=opts["progress"],
    )


def _benchmark(opts: dict[str, Any]) -> str | None:
    """The benchmark name, with the ``--tier`` folded in (``-b beam --tier 500K`` -> ``beam-500k``,
    ``-b longmemeval-v2 --tier medium`` -> ``longmemeval-v2-medium``)."""
    name: str | None = opts["benchmark"]
    tier = opts.get("tier")
    if tier is None:
        return name
    tiers = benchmark_traits(name or "").tiers
    if tier.lower() in tiers:
        return tiers[tier.lower()]
    owners = [
        t.tiers[tier.lower()] for t in map(benchmark_traits, list_benchmarks()) if tier.lower() in t.tiers
    ]
    raise click.UsageError(
        f"--tier {tier} is not a tier of {name or 'no benchmark'} ("
        + (f"its tiers: {', '.join(tiers)}" if tiers else "it has none")
        + (f"; {owners[0]} has it: -b {owners[0]})" if owners else ")")
    )


def _summary_line(result: Any) -> str:
    """The end-of-run line: bench_nb's own accuracy (unscored answers left out; n/a when none was scored), and
    MemoryBench's report.json figure beside it where that differs (it counts an unscored answer as wrong)."""
    line = (
        f"{result.run_id}: {result.status}, {result.evaluated} evaluated, {result.failed} failed, "
        f"{result.not_finished} not finished of {result.target}"
    )
    if result.evaluated:
        if result.scored:
            line += (
                f"; accuracy {result.correct / result.scored:.1%} ({result.correct}/{result.scored} scored)"
            )
        else:
            line += "; accuracy n/a (no answer scored)"
        if result.unscored:
            line += f", {result.unscored} unscored"
    if result.report_path is not None and result.unscored:  # its summary: correct / every evaluated question
        line += (
            f"; MemoryBench's report.json: {result.correct / result.evaluated:.1%} "
            f"({result.correct}/{result.evaluated}, unscored counted as wrong)"
        )
    return line


def _beam_line(run_dir: Path) -> str:
    """BEAM's own overall score of a run, in both readings (its accuracy line counts only scores of 1)."""
    from bench_nb.metrics.beam import beam_scores_frame

    parts = []
    for reading in ("float", "as-published"):
        df = beam_scores_frame(run_dir, reading)
        overall = df.filter(df["ability"] == "overall").row(0, named=True)
        score = "n/a" if overall["score"] is None else f"{overall['score'] * 100:.1f}"
        parts.append(f"{score} ({overall['reading']})")
        partial = "; partial: not comparable" if not overall["comparable"] else ""
    return (
        f"BEAM mean score, overall: {', '.join(parts)}{partial}; per ability: bench_nb.beam_scores({run_dir})"
    )


@click.command()
@click.option("-p", "--provider", help="Provider: sqlite, full-context, no-memory, ... or module:attribute.")
@click.option(
    "-r",
    "--run-id",
    help="Run id (its directory is <runs dir>/<id>), or a run's directory (a path with a '/'); an existing "
    "run is resumed with its own settings (options given must agree).",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Make N runs with the same settings (<run id>-r1 ... -rN), each with its own LLM response cache, and "
    "print their between-run variance.",
)
@_run_options
def run(provider: str | None, run_id: str | None, repeat: int, **opts: Any) -> None:
    """Run a benchmark through a memory provider into data/runs/<run id> (resumable)."""
    if repeat > 1:
        _repeat(provider, run_id, repeat, opts)
        return
    from bench_nb.runner.run import run_spec

    if run_id and "/" in run_id:  # a run's directory: the id is its name, its parent the runs folder
        opts["runs_dir"], run_id = Path(run_id).parent, Path(run_id).name
    opts["benchmark"] = _benchmark(opts)
    if (provider is None or opts["benchmark"] is None) and not run_id:
        raise click.UsageError("give -p PROVIDER and -b BENCHMARK (or -r RUN_ID of a run to resume)")
    if opts.get("dry_run"):
        _dry_run(provider, opts)
        return
    # Only what was typed: the runner reads the rest of a resumed run's settings from its directory.
    result = run_spec(_spec(provider, opts), _options(opts), run_id=run_id, runs_dir=opts["runs_dir"])
    click.echo(_summary_line(result))
    if benchmark_traits(result.benchmark).graded and result.evaluated:
        click.echo(_beam_line(result.run_dir))
    click.echo(f"Run directory: {result.run_dir}")
    if result.failed:
        click.echo(f"See the failures with: bench-nb show-failures {result.run_dir}")
    if result.status != "completed":
        click.echo(f"Resume with: bench-nb run -r {result.run_id} --runs-dir {opts['runs_dir']}")
        raise SystemExit(1)
    if not result.evaluated:
        click.echo(f"error: {_nothing_evaluated(result)}", err=True)
        raise SystemExit(1)


def _nothing_evaluated(result: Any) -> str:
    """Why a finished run is not a success: no question was evaluated (every one failed)."""
    return (
        f"{result.run_id}: no question was evaluated ({result.failed} of {result.target} failed): "
        f"nothing to report"
    )


def _dry_run(providers: str | None, opts: dict[str, Any]) -> None:
    """``--dry-run``: the estimate of ``runner.estimate``, printed; nothing runs."""
    from bench_nb.runner.estimate import estimate_run

    if providers is None or opts["benchmark"] is None:
        raise click.UsageError("--dry-run needs -p and -b")
    estimate = estimate_run(providers, opts["benchmark"], **_settings(opts))
    for line in estimate.lines():
        click.echo(line)
    if estimate.missing_keys:  # the run would stop at the first: every one is listed, then the dry run fails
        raise BenchNbError(f"API key(s) missing: {'; '.join(estimate.missing_keys)}")


def _repeat(provider: str | None, run_id: str | None, repeat: int, opts: dict[str, Any]) -> None:
    """``--repeat N``: N runs with one set of settings. Repeat i > 1 reads and writes its own response cache
    (``llm.repeat-<i>.sqlite`` beside the usual one), so its LLM calls are made afresh, not replayed from
    repeat 1; rerunning the same command resumes each repeat with its own cache."""
    import time

    from bench_nb.metrics.repeats import repeat_variance_frame
    from bench_nb.runner.run import run_spec

    opts["benchmark"] = _benchmark(opts)
    if provider is None or opts["benchmark"] is None:
        raise click.UsageError("--repeat needs -p PROVIDER and -b BENCHMARK")
    base = (
        run_id
        or f"{provider.replace(':', '_').replace('.', '_')}-{opts['benchmark']}-{time.strftime('%Y%m%dT%H%M%S')}"
    )
    dirs = []
    unfinished = False
    for i in range(1, repeat + 1):
        options = dataclasses.replace(_options(opts), repeat=i)
        result = run_spec(_spec(provider, opts), options, run_id=f"{base}-r{i}", runs_dir=opts["runs_dir"])
        click.echo(_summary_line(result))
        dirs.append(result.run_dir)
        unfinished = unfinished or result.status != "completed" or not result.evaluated
    table = repeat_variance_frame(dirs)
    for r in table.iter_rows(named=True):
        sd = r["accuracy_sd"]
        click.echo(
            f"{r['runs']} repeats: accuracy {r['accuracy_mean']:.1%}, between-run SD "
            + ("n/a" if sd != sd else f"{sd * 100:.2f} pts")
        )
    click.echo(f"Run directories: {', '.join(str(d) for d in dirs)}")
    if unfinished:
        raise SystemExit(1)


@click.command()
@click.option(
    "-p", "--providers", help="Providers, comma-separated: every one gets the same questions and settings."
)
@click.option(
    "--compare-id", help="Comparison id; its runs are <compare id>-<provider> (rerunning resumes them)."
)
@click.option(
    "--runs",
    "existing",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Compare existing run directories instead (repeatable).",
)
@click.option("--allow-mismatch", is_flag=True, help="Compare runs that differ in settings, with a warning.")
@_run_options
def compare(
    providers: str | None,
    compare_id: str | None,
    existing: tuple[Path, ...],
    allow_mismatch: bool,
    **opts: Any,
) -> None:
    """Run several providers like for like and write a MemoryBench compare manifest.

    The runs are <compare id>-<provider> in --runs-dir, the manifest <runs dir>/../compare/<compare
    id>/manifest.json (data/compare/ID/manifest.json by default); the page:

    \b
    bench-nb report compare -p runs data/compare/ID/manifest.json -o reports/ID.html
    """
    import warnings

    from bench_nb.runformat.format import now_stamp
    from bench_nb.runformat.load import check_like_for_like
    from bench_nb.runner.comparison import run_comparison as run_compare
    from bench_nb.runner.comparison import write_compare_manifest

    if existing:
        if providers:
            raise click.UsageError("give either -p PROVIDERS (new runs) or --runs (existing runs), not both")
        diffs = check_like_for_like(list(existing))
        for d in diffs:
            click.secho(f"WARNING: not like for like: {d}", fg="red", err=True)
        cid = compare_id or "compare-" + now_stamp()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            path = write_compare_manifest(list(existing), compare_id=cid, allow_mismatch=allow_mismatch)
        click.echo(f"Manifest: {path}")
        return
    opts["benchmark"] = _benchmark(opts)
    if not providers or not opts["benchmark"]:
        raise click.UsageError(
            "give -p A,B,... and -b BENCHMARK (or --runs DIR ... to compare existing runs)"
        )
    if opts.get("dry_run"):
        _dry_run(providers, opts)
        return
    with warnings.catch_warnings():  # the mismatches are shown below, in red
        warnings.filterwarnings("ignore", "NOT LIKE FOR LIKE", UserWarning)
        result = run_compare(
            providers,
            opts["benchmark"],
            compare_id=compare_id,
            allow_mismatch=allow_mismatch,
            **_settings(opts),
        )
    for r in result.runs:
        click.echo(_summary_line(r))
    for d in result.mismatches:
        click.secho(f"WARNING: not like for like: {d}", fg="red", err=True)
    click.echo(f"Manifest: {result.manifest_path}")
    for r in result.runs:
        if r.status == "completed" and not r.evaluated:
            click.echo(f"error: {_nothing_evaluated(r)}", err=True)
    if any(r.status != "completed" or not r.evaluated for r in result.runs):
        raise SystemExit(1)


@click.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-p", "--provider", help="Provider to clear at (default: the one the run recorded).")
@click.option(
    "-s",
    "--provider-setting",
    multiple=True,
    metavar="KEY=VALUE",
    help="Provider option, repeatable (default: the settings the run recorded).",
)
def clean(run_dir: Path, provider: str | None, provider_setting: tuple[str, ...]) -> None:
    """Delete what RUN_DIR's containers hold at the provider."""
    from bench_nb.runner.maintenance import clean_run

    tags = clean_run(
        run_dir,
        provider=provider,
        provider_settings=_key_values(provider_setting, "--provider-setting") or None,
    )
    click.echo(f"Cleared {len(tags)} container(s) of {run_dir}")
