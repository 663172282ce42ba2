"""``bench-nb --help`` lists every command from ``COMMANDS`` without importing any command's module."""

from __future__ import annotations

import json
import subprocess
import sys

import click

from bench_nb.cli import COMMANDS, cli


def test_help_lists_every_command_and_imports_none_of_their_modules() -> None:
    code = (
        "import json, sys\n"
        "from bench_nb.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('bench_nb.cli.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    *help_lines, imported = out.strip().splitlines()
    assert json.loads(imported) == []  # not one command module
    text = " ".join(" ".join(help_lines).split())
    for name, (_, summary) in COMMANDS.items():
        assert f"{name} {summary}" in text


def test_every_listed_command_resolves_to_a_click_command() -> None:
    ctx = click.Context(cli)
    for name in COMMANDS:
        assert isinstance(cli.get_command(ctx, name), click.Command), name
    assert cli.get_command(ctx, "no-such-command") is None


def test_compares_summary_says_it_writes_a_manifest_not_a_report() -> None:
    summary = COMMANDS["compare"][1]
    assert "write a compare manifest" in summary and "build a compare report" not in summary
