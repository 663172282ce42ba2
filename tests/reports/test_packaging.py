"""`bench-nb report NAME` from an installed (non-editable) package: the wheel carries the notebooks in
bench_nb/notebooks, and reports find them there."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from bench_nb.reports.locate import PACKAGED

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_force_includes_the_notebooks_where_reports_look() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    force = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force == {"notebooks": f"bench_nb/{PACKAGED}"}


def test_an_installed_package_finds_its_own_notebooks(tmp_path: Path) -> None:
    # The layout the wheel installs: site/bench_nb/... with the notebooks inside the package, no checkout.
    site = tmp_path / "site"
    shutil.copytree(
        REPO / "src" / "bench_nb", site / "bench_nb", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(REPO / "notebooks", site / "bench_nb" / PACKAGED)
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    code = (
        "import bench_nb\n"
        "from bench_nb.reports import find_notebook\n"
        "print(bench_nb.__file__)\n"
        "print(find_notebook('compare'))\n"
        "print(find_notebook('judge_disagreement'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=elsewhere,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0] == str(site / "bench_nb" / "__init__.py")
    assert out[1:] == [
        str(site / "bench_nb" / PACKAGED / "compare.ipynb"),
        str(site / "bench_nb" / PACKAGED / "judge_disagreement.ipynb"),
    ]
