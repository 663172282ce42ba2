"""The ``bench-nb`` command: a thin front end over the package.

Each command lives in the module named in ``COMMANDS`` and is imported only when used, so ``bench-nb --help``
stays fast and a command's heavy imports (papermill, SDKs) cost nothing to the others.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings

import click

from bench_nb.errors import BenchNbError, BenchNbWarning

# command name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "status": "bench_nb.cli.runs:status",
    "show-failures": "bench_nb.cli.runs:show_failures",
    "summary": "bench_nb.cli.runs:summary",
    "memorybench-report": "bench_nb.cli.mbreport:memorybench_report_cmd",
    "run": "bench_nb.cli.run:run",
    "compare": "bench_nb.cli.run:compare",
    "datasets": "bench_nb.cli.datasets:datasets",
    "rejudge": "bench_nb.cli.judging:rejudge",
    "judge-audit": "bench_nb.cli.judging:judge_audit_cmd",
    "report": "bench_nb.cli.reporting:report",
    "serve": "bench_nb.cli.reporting:serve",
    "demo": "bench_nb.cli.reporting:demo",
    "roi": "bench_nb.cli.roi:roi",
    "clean": "bench_nb.cli.run:clean",
    "plan": "bench_nb.cli.plan:plan",
    "export": "bench_nb.cli.store:export",
    "sweep": "bench_nb.cli.sweep:sweep",
}


def _available(target: str) -> bool:
    module = target.split(":")[0]
    return importlib.util.find_spec(module) is not None


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, target in COMMANDS.items() if _available(target))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None or not _available(target):
            return None
        module, attr = target.split(":")
        command = getattr(importlib.import_module(module), attr, None)
        return command if isinstance(command, click.Command) else None


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bench_nb")
def cli() -> None:
    """Benchmark memory providers: MemScore, judge agreement, ROI and HTML reports."""


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    """bench_nb's own warnings as ``warning: ...`` lines (the place in bench_nb's or click's code they point
    at means nothing on a command line); any other warning as Python shows it."""
    if issubclass(category, BenchNbWarning):
        click.echo(f"warning: {message}", err=True)
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
        err.show()
        sys.exit(err.exit_code)
    except BenchNbError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
