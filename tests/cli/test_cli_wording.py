"""The command line's wording: one error prefix, RUN as a directory or an id, a dry run that selects nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench_nb.cli import main


def _exit(args: list[str | Path]) -> int:
    try:
        main([str(a) for a in args])
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def test_every_error_has_one_prefix(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for args in (
        ["run", "--limit", "0"],
        ["status", tmp_path / "nope"],
        ["run", "-p", "sqlite", "-b", "nope"],
    ):
        assert _exit(args) != 0
        err = capsys.readouterr().err
        assert re.search(r"^error: ", err, re.M) and "Error:" not in err, err


def test_a_dry_run_that_selects_nothing_fails_as_the_run_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    every_type = "abstention,knowledge-update,multi-hop,preference,single-hop,temporal"
    base = ["run", "-p", "sqlite", "-b", "sample", "--exclude-types", every_type, "--runs-dir", tmp_path]
    assert _exit([*base, "--dry-run"]) == 1
    dry = capsys.readouterr().err
    assert _exit(base) == 1
    assert capsys.readouterr().err == dry == "error: sample: the benchmark has no questions to run\n"


def test_status_and_resume_take_a_run_directory_or_its_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    assert (
        _exit(
            [
                "run",
                "-p",
                "sqlite",
                "-b",
                "sample",
                "--limit",
                "3",
                "-r",
                "s1",
                "--runs-dir",
                runs,
                "--no-progress",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert _exit(["status", "s1", "--runs-dir", runs]) == 0
    by_id = capsys.readouterr().out
    assert _exit(["status", runs / "s1"]) == 0
    assert capsys.readouterr().out == by_id and "Run: s1" in by_id
    assert _exit(["run", "-r", runs / "s1", "--no-progress"]) == 0  # a directory: no --runs-dir needed
    assert "s1: completed, 3 evaluated" in capsys.readouterr().out
    assert _exit(["status", "s2", "--runs-dir", runs]) == 2
    assert "no run directory 's2', and no run 's2' in" in capsys.readouterr().err


def test_longmemeval_v2_names_its_own_folder(capsys: pytest.CaptureFixture[str], locomo_path: Path) -> None:
    assert _exit(["run", "-p", "sqlite", "-b", "longmemeval-v2", "--dataset", locomo_path]) == 1
    err = capsys.readouterr().err
    assert "is a folder holding questions.jsonl, trajectories.jsonl, haystacks/lme_v2_small.json" in err, err
    assert "chat folders" not in err
    assert _exit(["run", "--help"]) == 0
    assert "LongMemEval-V2 the folder holding questions.jsonl" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("args", [[], ["datasets"], ["roi"]])
def test_a_command_group_alone_shows_its_help_not_an_error(
    args: list[str | Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # `bench-nb` alone, the first thing a newcomer types, printed its usage, then "error: Usage: ..." and the
    # whole help as the error's text
    assert _exit(args) == 2  # click's exit for a missing command
    out = capsys.readouterr()
    text = out.out + out.err
    assert "error:" not in text and text.count("Usage: bench-nb") == 1, text
    assert text.startswith("Usage: bench-nb") and "\nCommands:\n" in text


def test_an_error_is_one_line_with_a_click_that_has_no_no_args_is_help_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # pyproject takes click>=8.1, whose click.exceptions has no NoArgsIsHelpError (8.2 added it): naming it in
    # main's except clauses raised AttributeError, a traceback for every error click reports ("Missing argument")
    import click

    monkeypatch.delattr(click.exceptions, "NoArgsIsHelpError", raising=False)
    assert _exit(["status"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "error: Missing argument 'RUN'."
