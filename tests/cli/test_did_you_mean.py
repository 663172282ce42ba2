"""Every name a user types gets "did you mean" when it is unknown, and the names it could have been, sorted
(issue 38): providers (-p), benchmarks (-b), datasets, report notebooks, judges and answerers, judge prompts,
audit generators, question types. One helper makes the hint: ``bench_nb.registry.did_you_mean``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench_nb.cli import main
from bench_nb.registry import did_you_mean


def _error(args: list[str | Path], capsys: pytest.CaptureFixture[str]) -> str:
    """The one ``error:`` line ``bench-nb ARGS`` ends with (it must exit non-zero)."""
    try:
        main([str(a) for a in args])
    except SystemExit as exit_:
        assert exit_.code, exit_.code
    else:
        raise AssertionError(f"bench-nb {args} exited 0")
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, err
    return lines[0]


def _listed(error: str, after: str) -> list[str]:
    """The comma-separated names an error lists after ``after``."""
    return [name.strip() for name in error.split(after, 1)[1].split(";")[0].split(",")]


def test_did_you_mean_picks_the_nearest_name_whatever_its_case() -> None:
    assert did_you_mean("sqlit", ["zep", "sqlite", "mem0"]) == " (did you mean 'sqlite'?)"
    assert did_you_mean(" LoCoMo ", ["locomo", "longmemeval"]) == " (did you mean 'locomo'?)"
    assert did_you_mean("Sampel", ["sample"]) == " (did you mean 'sample'?)"
    assert did_you_mean("xyz", ["sqlite", "zep"]) == ""
    assert did_you_mean("anything", []) == ""


def test_an_unknown_provider_says_did_you_mean(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    error = _error(["run", "-p", "sqlit", "-b", "sample", "--runs-dir", tmp_path, "--dry-run"], capsys)
    assert error.startswith("error: unknown provider 'sqlit' (did you mean 'sqlite'?); known: ")
    known = _listed(error, "known: ")
    assert "sqlite" in known and known == sorted(known)


def test_an_unknown_benchmark_says_did_you_mean_and_lists_the_names_sorted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    error = _error(["run", "-p", "sqlite", "-b", "sampel", "--runs-dir", tmp_path, "--dry-run"], capsys)
    assert error.startswith("error: unknown benchmark 'sampel' (did you mean 'sample'?); known: ")
    known = _listed(error, "known: ")
    assert {"sample", "locomo", "beam", "longmemeval"} <= set(known) and known == sorted(known)


def test_an_unknown_dataset_says_did_you_mean_among_benchmarks_and_errata(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for typed, meant in (("locomo-erata", "locomo-errata"), ("lcomo", "locomo")):
        for command in ("download", "verify"):
            error = _error(["datasets", command, typed, "--cache-dir", tmp_path], capsys)
            assert error.startswith(f"error: unknown dataset {typed!r} (did you mean {meant!r}?); known: ")
            known = _listed(error, "known: ")
            assert {"locomo", "locomo-errata", "sample"} <= set(known) and known == sorted(known)
    assert not any(tmp_path.iterdir())  # nothing downloaded


def test_an_unknown_report_notebook_says_did_you_mean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    error = _error(["report", "comprae", "-o", tmp_path / "x.html"], capsys)
    assert re.match(r"error: no notebook named 'comprae' \(did you mean 'compare'\?\); available: ", error)


def test_unknown_judges_answerers_and_models_say_did_you_mean_and_list_sorted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base: list[str | Path] = ["run", "-p", "sqlite", "-b", "sample", "--runs-dir", tmp_path, "--dry-run"]
    error = _error([*base, "-j", "contans"], capsys)
    assert "unknown judge 'contans' (did you mean 'contains'?)" in error
    offline = _listed(error, "offline, no key needed: ")
    assert "contains" in offline and offline == sorted(offline)
    error = _error([*base, "-m", "gpt4o"], capsys)
    assert "unknown answerer 'gpt4o' (did you mean 'gpt-4o'?)" in error


def test_unknown_judge_prompts_and_audit_generators_say_did_you_mean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    error = _error(["rejudge", tmp_path, "--judge-prompts", "strct"], capsys)
    assert "unknown judge prompt 'strct' (did you mean 'strict'?)" in error
    error = _error(["judge-audit", tmp_path, "-j", "contains", "--generators", "vauge"], capsys)
    assert "unknown generator(s) vauge (did you mean 'vague'?)" in error


def test_an_unknown_question_type_says_did_you_mean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    error = _error(
        [
            "run",
            "-p",
            "sqlite",
            "-b",
            "sample",
            "--exclude-types",
            "tempral",
            "--runs-dir",
            tmp_path,
            "--dry-run",
        ],
        capsys,
    )
    assert "has no question type 'tempral' (did you mean 'temporal'?)" in error


@pytest.mark.parametrize(
    ("args", "nearest", "known"),
    [
        (["runs"], "run", "clean, compare, datasets"),
        (["rejudges", "x"], "rejudge", "clean, compare, datasets"),
        (["datasets", "verfy", "x"], "verify", "download, list, verify"),
        (["roi", "imports", "x"], "import", "import, mcp, run"),
    ],
)
def test_an_unknown_command_gets_the_nearest_one_and_the_list(
    args: list[str], nearest: str, known: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # click said only "No such command 'runs'."
    error = _error(args, capsys)
    assert error.startswith(f"error: No such command '{args[-2] if len(args) > 2 else args[0]}'")
    assert f"(did you mean '{nearest}'?)" in error and f"commands: {known}" in error


def test_an_unknown_phase_of_phase_concurrency_says_did_you_mean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["run", "-p", "sqlite", "-b", "sample", "--phase-concurrency", "answr=2", "--runs-dir", tmp_path]
    error = _error([*args, "--dry-run"], capsys)
    assert error == (
        "error: unknown phase 'answr' (did you mean 'answer'?) in phase_concurrency (phases: ingest, indexing, "
        "search, answer, evaluate)"
    )
