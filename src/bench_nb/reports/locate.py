"""Finding notebooks by name and run paths given relative to the project."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path

from bench_nb.errors import ReportError

# src/bench_nb/reports/locate.py -> the checkout's notebooks/ (an editable install or a clone).
_CHECKOUT_NOTEBOOKS = Path(__file__).resolve().parents[3] / "notebooks"
PACKAGED = "notebooks"  # inside the installed package: bench_nb/notebooks (the wheel's force-include)


def packaged_notebooks() -> Path:
    """Where the report notebooks are: in the installed package (a wheel), else in the checkout."""
    packaged = Path(str(files("bench_nb").joinpath(PACKAGED)))
    return packaged if packaged.is_dir() else _CHECKOUT_NOTEBOOKS


def notebook_dirs() -> list[Path]:
    """Where notebooks are looked up by name: ``$BENCH_NB_NOTEBOOKS``, ./notebooks, then bench_nb's own
    (installed in the package, or the checkout's ``notebooks/``)."""
    dirs = []
    if os.environ.get("BENCH_NB_NOTEBOOKS"):
        dirs.append(Path(os.environ["BENCH_NB_NOTEBOOKS"]))
    dirs += [Path.cwd() / "notebooks", packaged_notebooks()]
    return dirs


def find_notebook(name: str | os.PathLike[str]) -> Path:
    """A notebook path from a path or a name (``compare`` -> ``notebooks/compare.ipynb``)."""
    p = Path(name)
    if p.suffix == ".ipynb" and p.is_file():
        return p.resolve()
    stem = p.stem if p.suffix == ".ipynb" else p.name
    for d in notebook_dirs():
        candidate = d / f"{stem}.ipynb"
        if candidate.is_file():
            return candidate.resolve()
    known = sorted({c.stem for d in notebook_dirs() if d.is_dir() for c in d.glob("*.ipynb")})
    raise ReportError(f"no notebook named {str(name)!r}; available: {', '.join(known) or 'none'}")


def resolve_runs(runs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    """Run sources with relative paths made absolute.

    A relative path or glob is read from the working directory; when it matches nothing there, from the
    nearest parent directory where it does (so a notebook's default ``tests/fixtures/runs/*`` works when
    it runs from ``notebooks/`` as well as from the project root). Anything unmatched is kept as given,
    for ``load_runs`` to report.
    """
    items = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs)
    out = []
    for item in items:
        text = os.fspath(item)
        if os.path.isabs(text) or glob.glob(text):
            out.append(text if os.path.isabs(text) else os.path.abspath(text))
            continue
        for parent in Path.cwd().parents:
            if glob.glob(str(parent / text)):
                out.append(str(parent / text))
                break
        else:
            out.append(text)
    return out
