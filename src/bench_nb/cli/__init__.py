"""The ``bench-nb`` command: a thin front end over the package.

Each command lives in the module named in ``COMMANDS`` and is imported only when used, so ``bench-nb --help``
stays fast and a command's heavy imports (papermill, SDKs) cost nothing to the others.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
import warnings
from pathlib import Path

import click

from bench_nb.errors import ALL_HINT, STRICT_HINT, BenchNbError, BenchNbWarning, RunFormatWarning

# command name -> ("module:attribute", the line ``bench-nb --help`` shows for it without importing the module)
COMMANDS: dict[str, tuple[str, str]] = {
    "status": ("bench_nb.cli.runs:status", "How far a run got: questions per phase, failures."),
    "show-failures": (
        "bench_nb.cli.runs:show_failures",
        "Incorrect, unscored and errored questions of a run.",
    ),
    "summary": ("bench_nb.cli.runs:summary", "A MemScore table of several runs."),
    "memorybench-report": (
        "bench_nb.cli.mbreport:memorybench_report_cmd",
        "Write the report.json MemoryBench would write for a run.",
    ),
    "run": ("bench_nb.cli.run:run", "Run a benchmark through a memory provider."),
    "compare": (
        "bench_nb.cli.run:compare",
        "Run providers like for like and write a compare manifest (the page: bench-nb report compare).",
    ),
    "datasets": ("bench_nb.cli.datasets:datasets", "Benchmark datasets: list, download (verified), verify."),
    "rejudge": ("bench_nb.cli.judging:rejudge", "Grade the answers of existing runs with more judges."),
    "reanswer": (
        "bench_nb.cli.judging:reanswer",
        "Answer a run's wrong answers again from the gold evidence (confirms reader errors).",
    ),
    "judge-audit": (
        "bench_nb.cli.judging:judge_audit_cmd",
        "Audit judges for leniency on answers known to be wrong.",
    ),
    "report": ("bench_nb.cli.reporting:report", "Build an HTML report from a notebook."),
    "serve": ("bench_nb.cli.reporting:serve", "Serve the reports folder on 127.0.0.1."),
    "demo": ("bench_nb.cli.reporting:demo", "Run the bundled sample and build every report."),
    "roi": ("bench_nb.cli.roi:roi", "The ROI benchmark: what an agent loses without memory."),
    "clean": ("bench_nb.cli.run:clean", "Delete what a run's containers hold at the provider."),
    "plan": ("bench_nb.cli.plan:plan", "Plan a benchmark's size from the difference to detect."),
    "export": ("bench_nb.cli.store:export", "Write runs into a Parquet run store."),
    "sweep": ("bench_nb.cli.sweep:sweep", "Run a grid of configurations (locally or on Ray)."),
    "gate": (
        "bench_nb.cli.receipts:gate",
        "Is NEW worse than BASE by more than a margin? Not worse, worse or inconclusive (CI).",
    ),
    "receipt": ("bench_nb.cli.receipts:receipt", "Write a run's receipt: a summary anyone can verify."),
    "verify": ("bench_nb.cli.receipts:verify", "Check a receipt and recompute its numbers from the run."),
}


class Group(click.Group):
    """A command group whose unknown command gets the nearest name and the list (click says only "No such
    command"), as every other unknown name does (``registry.did_you_mean``)."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with the hint."""
        name = args[0] if args else ""
        if (
            name
            and not ctx.resilient_parsing
            and not name.startswith("-")
            and self.get_command(ctx, name) is None
        ):
            from bench_nb.registry import did_you_mean

            known = self.list_commands(ctx)
            ctx.fail(f"No such command {name!r}{did_you_mean(name, known)}; commands: {', '.join(known)}")
        return super().resolve_command(ctx, args)


class _LazyGroup(Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr = COMMANDS[cmd_name][0].split(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from ``COMMANDS``' summaries: click's own would import every command's module
        (papermill, SDKs: a second before any help shows)."""
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bench_nb")
def cli() -> None:
    """Benchmark memory providers: MemScore, judge agreement, ROI and HTML reports."""


_OUR_CODE = tuple(
    str(Path(p).resolve()) + os.sep for p in (Path(__file__).parents[1], Path(click.__file__).parent)
)


def _ours(filename: str) -> bool:
    """True for a warning raised in bench_nb's or click's own code."""
    try:
        return str(Path(filename).resolve()).startswith(_OUR_CODE)
    except (OSError, ValueError):
        return False


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    """bench_nb's own warnings as ``warning: ...`` lines (the place in bench_nb's or click's code they point
    at means nothing on a command line), whatever their class (a ``DatasetWarning`` is a ``UserWarning``);
    any other warning as Python shows it."""
    if issubclass(category, BenchNbWarning) or _ours(filename):
        text = str(message)
        if isinstance(message, RunFormatWarning):  # strict=True and .problems are Python's, not a command's
            text = text.replace(STRICT_HINT, "").replace(ALL_HINT, "")
        click.echo(f"warning: {text}", err=True)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``bench-nb``: errors we expect print one clear line and exit 1."""
    try:
        with warnings.catch_warnings():  # restores Python's warning display on the way out
            warnings.showwarning = _show_warning
            cli.main(args=argv, prog_name="bench-nb", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as err:
        # a group alone (`bench-nb`): its help, not an error. click 8.2 raises NoArgsIsHelpError for it; 8.1,
        # which pyproject allows, has no such class (and shows the help itself)
        if isinstance(err, getattr(click.exceptions, "NoArgsIsHelpError", ())):
            err.show()
        else:
            _show_click_error(err)
        sys.exit(err.exit_code)
    except (BenchNbError, OSError) as err:  # an OSError (permission, disk full...): the file and the cause
        from bench_nb.redaction import redact

        text = str(err) if isinstance(err, BenchNbError) else os_error_text(err)
        click.echo(f"error: {redact(text)}", err=True)
        sys.exit(1)


def _show_click_error(err: click.ClickException) -> None:
    """click's own errors (a bad option, a missing file) as click shows them, usage first, but with the prefix
    every other error of ``bench-nb`` has: ``error: ...`` (click's ``Error:`` would be the only capital one)."""
    from bench_nb.redaction import redact

    ctx = getattr(err, "ctx", None)
    if isinstance(err, click.UsageError) and ctx is not None:
        hint = ""
        if ctx.command.get_help_option(ctx) is not None:
            hint = f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help.\n"
        click.echo(f"{ctx.get_usage()}\n{hint}", err=True)
    click.echo(f"error: {redact(err.format_message())}", err=True)


_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file is too large (a file-size limit)",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
}


def os_error_text(err: OSError) -> str:
    """An operating-system error as one line naming the file and the cause: ``<file>: <cause>``."""
    cause = _CAUSES.get(err.errno or 0) or err.strerror or str(err)
    if err.filename is not None:
        where = os.fsdecode(err.filename)
        if err.filename2 is not None:
            where += f" -> {os.fsdecode(err.filename2)}"
        return f"{where}: {cause}"
    return f"{cause} ({type(err).__name__}: {err})" if cause != str(err) else f"{type(err).__name__}: {err}"
