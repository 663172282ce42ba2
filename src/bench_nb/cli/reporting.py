"""``bench-nb report``, ``bench-nb serve`` and ``bench-nb demo``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from bench_nb.errors import ReportError

_LEADING_ZERO = re.compile(r"[+-]?0[0-9]")  # "007": an id as a number would lose its zeros


def parse_value(text: str) -> Any:
    """A parameter value from the command line: int, float, true/false, none, JSON list/object, else text.

    Digits with a leading zero or an underscore (``007``, ``2024_01``) stay text: ids, not numbers, though
    Python's int() reads them.
    """
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if "_" not in text and not _LEADING_ZERO.match(low):
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
    if text.strip()[:1] in ("[", "{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def parse_params(pairs: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """``-p KEY VALUE`` pairs to parameters; a key given several times becomes a list."""
    params: dict[str, Any] = {}
    for key, raw in pairs:
        value = parse_value(raw)
        if key in params:
            prev = params[key]
            params[key] = [*prev, value] if isinstance(prev, list) else [prev, value]
        else:
            params[key] = value
    return params


@click.command()
@click.argument("name", required=False)
@click.option(
    "-p", "--param", "pairs", nargs=2, multiple=True, metavar="KEY VALUE", help="A notebook parameter."
)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), help="The HTML file (default reports/NAME.html)."
)
@click.option(
    "--notebook",
    type=click.Path(path_type=Path),
    help="Also keep the executed notebook here (opens in JupyterLab with its charts drawn).",
)
@click.option("--all", "all_", is_flag=True, help="Build every report listed in --config.")
@click.option(
    "--config",
    type=click.Path(path_type=Path),
    default=Path("reports.toml"),
    show_default=True,
    help="The TOML file listing the reports --all builds (docs/reports.md).",
)
@click.option("--timeout", type=int, default=600, show_default=True, help="Seconds one cell may run.")
def report(
    name: str | None,
    pairs: tuple[tuple[str, str], ...],
    output: Path | None,
    notebook: Path | None,
    all_: bool,
    config: Path,
    timeout: int,
) -> None:
    """Build the report NAME (a notebook in notebooks/, or a path) into one offline HTML file.

    \b
    bench-nb report compare -p runs 'data/runs/*' -p title 'Weekly' -o reports/compare.html
    bench-nb report --all --config reports.toml
    """
    from bench_nb.reports import build_all, build_report

    if all_:
        if name:
            raise click.UsageError("give a report NAME or --all, not both")
        outcomes = build_all(config)
        for o in outcomes:
            click.echo(f"ok      {o.output}" if o.ok else f"FAILED  {o.output}: {o.error}", err=not o.ok)
        failed = [o for o in outcomes if not o.ok]
        click.echo(f"{len(outcomes) - len(failed)} built, {len(failed)} failed")
        if failed:
            some = len(failed) < len(outcomes)
            reason = f"{len(failed)} of {len(outcomes)} reports failed" if some else "no report was built"
            click.echo(f"error: {reason} (see FAILED above)", err=True)
            raise SystemExit(1)
        return
    if not name:
        raise click.UsageError("give a report NAME (e.g. compare) or --all")
    built = build_report(name, parse_params(pairs), output, timeout=timeout, notebook=notebook)
    click.echo(f"wrote {built.path}" + (f" and {built.notebook}" if built.notebook else ""))


@click.command()
@click.option("--port", type=int, default=3000, show_default=True, help="The port on 127.0.0.1.")
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path),
    default=Path("reports"),
    show_default=True,
    help="The folder served (where bench-nb report and demo write).",
)
def serve(port: int, directory: Path) -> None:
    """Serve the reports folder on http://127.0.0.1:PORT (Ctrl-C to stop)."""
    from bench_nb.reports import make_server

    server = make_server(directory, port)
    click.echo(f"serving {directory} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@click.command()
@click.option(
    "--reports-dir",
    type=click.Path(path_type=Path),
    default=Path("reports"),
    show_default=True,
    help="Where the HTML reports and their index.html go.",
)
@click.option(
    "--runs-dir",
    type=click.Path(path_type=Path),
    default=Path("data/demo/runs"),
    show_default=True,
    help="Where the three runs go. Emptied first, so not a folder of your own runs (data/runs).",
)
@click.option("--runs-only", is_flag=True, help="Make the three runs (what the notebooks show), no reports.")
def demo(reports_dir: Path, runs_dir: Path, runs_only: bool) -> None:
    """Run the bundled sample through sqlite, full-context and no-memory, then build the reports (offline)."""
    from bench_nb.demo import make_demo_runs, run_demo

    if runs_only:
        make_demo_runs(runs_dir, echo=click.echo)
        return

    result = run_demo(reports_dir, runs_dir, echo=click.echo)
    click.echo(f"done in {result.seconds:.1f} s: open {reports_dir / 'index.html'}")
    if result.errors:
        raise ReportError(f"{len(result.errors)} report(s) failed: " + " | ".join(result.errors))
