"""A report over runs that are not there fails loudly, never an empty page; the README's commands work after
`make demo`."""

from __future__ import annotations

import json
import re
import shlex
import warnings
from pathlib import Path

import pytest

import bench_nb
from bench_nb.cli import main
from bench_nb.errors import ReportError
from bench_nb.reports import build_report, open_runs, resolve_runs
from run_writers import question, write_run

REPO = Path(__file__).resolve().parents[2]


def test_a_report_over_a_pattern_that_matches_nothing_exits_1_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "reports" / "compare.html"
    out.parent.mkdir()
    out.write_text("the report built last week")
    with pytest.raises(SystemExit) as exit_:
        main(["report", "compare", "-p", "runs", "data/runs/*", "-o", str(out)])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert "no runs at 'data/runs/*'" in err and str(tmp_path) in err and len(err.splitlines()) == 1
    assert out.read_text() == "the report built last week"  # not written over
    assert sorted(p.name for p in out.parent.iterdir()) == ["compare.html"]  # no other file either


def test_a_new_output_is_not_created_either(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ReportError, match=r"no runs at 'nowhere/\*', 'also/missing'"):
        build_report("compare", {"runs": ["nowhere/*", "also/missing"]}, tmp_path / "out" / "c.html")
    assert not (tmp_path / "out").exists()


def test_runs_that_match_folders_without_runs_fail_too(tmp_path: Path) -> None:
    (tmp_path / "empty-a").mkdir()
    (tmp_path / "empty-b").mkdir()
    assert resolve_runs(str(tmp_path / "empty-*")) == [str(tmp_path / "empty-*")]
    with (
        pytest.warns(UserWarning, match="matched no run directory"),
        pytest.raises(ReportError, match=r"no run loaded from .*empty-\*.*matched no run directory"),
    ):
        open_runs(str(tmp_path / "empty-*"))


def test_the_demo_default_says_how_to_make_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ReportError, match=r"data/demo/runs/\*'.*`make demo` or `bench-nb demo` writes them"):
        resolve_runs("data/demo/runs/*")


def test_load_runs_warns_when_a_pattern_matches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.warns(
        UserWarning, match=r"no runs loaded from 'data/runs/\*' \(from .*\): the pattern matched no"
    ):
        runs = bench_nb.load_runs("data/runs/*")
    assert len(runs) == 0 and runs.problems


@pytest.mark.slow  # three sample runs and one report: 15-30 s
@pytest.mark.notebook
def test_the_readme_report_command_after_make_demo_builds_a_full_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench_nb.demo import make_demo_runs

    readme = (REPO / "README.md").read_text()
    make = (REPO / "Makefile").read_text()
    # `make demo` runs `bench-nb demo`, whose runs go to data/demo/runs (its --runs-dir default).
    assert re.search(r"^demo: .*\n\t\$\(BIN\)/bench-nb demo\n", make, flags=re.M)
    command = next(line for line in readme.splitlines() if line.startswith("bench-nb report compare"))
    args = shlex.split(command.split("#")[0])[1:]
    assert "data/demo/runs/*" in args
    monkeypatch.chdir(tmp_path)
    make_demo_runs()  # what `make demo` does first, in the default place
    main(args)  # returns (no SystemExit) when the report was built
    out = Path(args[args.index("-o") + 1])
    page = out.read_text()
    assert "3 runs · 50 questions" in page
    for provider in ("sqlite", "full-context", "no-memory"):
        assert provider in page
    assert page.count("<svg") >= 6


def test_a_report_shows_what_it_could_not_read_as_a_note_not_a_warning(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    ck = json.loads((run / "checkpoint.json").read_text())
    ck["questions"]["q2"]["phases"]["evaluate"]["score"] = "high"
    (run / "checkpoint.json").write_text(json.dumps(ck))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would be a stderr block above the report's title
        run_set = open_runs(str(run))
    assert len(run_set) == 1 and [p.question_id for p in run_set.all_problems] == ["q2", None]


@pytest.mark.notebook
def test_a_notebook_copied_out_of_the_project_says_to_set_runs_in_its_first_cell(tmp_path: Path) -> None:
    """Issue 37: run in a kernel of its own outside the project, compare.ipynb stopped with a traceback through
    bench_nb's code that told the user to pass the command line's ``-p runs``. Now one line says which cell to
    change and how."""
    import os

    import nbformat
    from nbclient import NotebookClient

    copy = tmp_path / "compare.ipynb"
    copy.write_bytes((REPO / "notebooks" / "compare.ipynb").read_bytes())
    nb = nbformat.read(copy, as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "BENCH_NB_REPORT"}
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.km = client.kernel_manager_class(kernel_name="python3")
    with client.setup_kernel(env=env):
        client.execute_cell(nb.cells[0], 0)
        client.execute_cell(nb.cells[1], 1)
    (error,) = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    assert error.ename == "ReportError"
    assert len(error.traceback) == 1, error.traceback  # one line, no traceback through bench_nb
    (line,) = error.traceback
    assert "no runs at 'data/demo/runs/*'" in line and "Set `runs` in this notebook's first cell" in line
    assert "-p runs" not in line


@pytest.mark.notebook
def test_a_folder_that_holds_no_run_fails_the_report_with_the_reason_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The folder exists, so the check before the kernel passes it and the notebook's open_runs refuses it: the
    # error read "failed in cell 2 (`from IPython.display import display`): ReportError: no run loaded ...",
    # a cell that has nothing to do with it
    (tmp_path / "empty").mkdir()
    out = tmp_path / "compare.html"
    with pytest.raises(SystemExit) as exit_:
        main(["report", "compare", "-p", "runs", str(tmp_path / "empty"), "-o", str(out)])
    assert exit_.value.code == 1
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error: ")]
    assert line.startswith(f"error: notebook compare.ipynb: no run loaded from '{tmp_path / 'empty'}'"), line
    assert "failed in cell" not in line and "ReportError" not in line
    assert not out.exists()
