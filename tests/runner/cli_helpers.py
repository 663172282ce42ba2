"""The command lines the runner tests type: ``bench-nb run`` put together (``run_args``), run through click's
test runner (``invoke``) or through ``bench_nb.cli.main`` as the shell runs it (``exit_code``)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from bench_nb.cli import cli, main


def run_args(
    *extra: str | Path,
    provider: str = "sqlite",
    benchmark: str = "sample",
    limit: int | None = None,
    run_id: str | None = None,
    runs_dir: Path | None = None,
) -> list[str]:
    """``bench-nb run -p PROVIDER -b BENCHMARK [--limit N] EXTRA... [-r RUN_ID] [--runs-dir DIR] --no-progress``."""
    args = ["run", "-p", provider, "-b", benchmark]
    if limit is not None:
        args += ["--limit", str(limit)]
    args += [str(a) for a in extra]
    if run_id is not None:
        args += ["-r", run_id]
    if runs_dir is not None:
        args += ["--runs-dir", str(runs_dir)]
    return [*args, "--no-progress"]


def invoke(*args: str | Path) -> str:
    """The command's output; it must exit 0 (its output is the failure message otherwise)."""
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def exit_code(args: list[str | Path] | list[str]) -> int:
    """``bench-nb ARGS`` as the shell runs it (``main``: errors printed as one line): its exit status (0 when
    it returns)."""
    try:
        main([str(a) for a in args])
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0
