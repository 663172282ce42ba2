"""A report refuses a parameter its notebook does not declare (papermill only logs one and builds the page with
the default), from the command line and from reports.toml, naming it and the nearest declared one."""

from __future__ import annotations

from pathlib import Path

import pytest
from notebook_files import write_notebook

from bench_nb.cli import main
from bench_nb.errors import ReportError
from bench_nb.reports import build_all, build_report


def test_a_misspelled_parameter_exits_1_naming_it_and_the_nearest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "reports" / "compare.html"
    with pytest.raises(SystemExit) as exit_:
        main(["report", "compare", "-p", "rnus", "X", "-o", str(out)])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert "'rnus' (did you mean 'runs'?)" in err and len(err.splitlines()) == 1
    assert not out.parent.exists()  # nothing built


def test_every_unknown_name_is_listed_with_the_declared_ones(tmp_path: Path) -> None:
    nb = write_notebook(tmp_path / "nb.ipynb", "print(alpha)", params="alpha = 1\nbeta = 'x'")
    with pytest.raises(ReportError) as err:
        build_report(nb, {"alpah": 2, "zzz": 3, "beta": "y"}, tmp_path / "nb.html")
    message = str(err.value)
    assert "'alpah' (did you mean 'alpha'?)" in message and "'zzz'" in message
    assert "'beta'" not in message.split(";")[0] and "its parameters: alpha, beta" in message


def test_a_typo_in_reports_toml_fails_that_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "reports.toml"
    config.write_text('[[report]]\nname = "compare"\n[report.parameters]\ntitel = "Weekly"\n')
    outcomes = build_all(config)
    assert [o.ok for o in outcomes] == [False]
    assert "'titel' (did you mean 'title'?)" in (outcomes[0].error or "")
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--all", "--config", str(config)])
    assert exit_.value.code == 1
    captured = capsys.readouterr()
    assert "0 built, 1 failed" in captured.out and "'titel'" in captured.err
    assert not (tmp_path / "reports" / "compare.html").exists()
