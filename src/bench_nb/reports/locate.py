"""Finding notebooks by name and run paths given relative to the project."""

from __future__ import annotations

import glob
import os
import warnings
from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from bench_nb.chart_output import in_report
from bench_nb.errors import ReportError
from bench_nb.registry import did_you_mean

if TYPE_CHECKING:
    from bench_nb.frames.store import StoredRuns
    from bench_nb.runformat.load import RunSet

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
    raise ReportError(
        f"no notebook named {str(name)!r}{did_you_mean(stem, known)}; available: {', '.join(known) or 'none'}"
    )


DEMO_RUNS = "data/demo/runs/*"  # where `make demo` (bench-nb demo) writes its three runs


def _where(text: str) -> str | None:
    """``text`` made absolute: as given, from the working directory, or from the nearest parent where it
    exists; None when it matches nothing anywhere."""
    if os.path.isabs(text):
        return text if glob.glob(text) else None
    for base in (Path.cwd(), *Path.cwd().parents):
        if glob.glob(str(base / text)):
            return str(base / text)
    return None


def resolve_runs(runs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    """Run sources with relative paths made absolute.

    A relative path or glob is read from the working directory; when it matches nothing there, from the
    nearest parent directory where it does (so a notebook's default ``data/demo/runs/*`` works when it runs
    from ``notebooks/`` as well as from the project root).

    Raises:
        ReportError: naming every source that matches nothing (a report must not show an empty page).
    """
    texts = [os.fspath(i) for i in ([runs] if isinstance(runs, (str, os.PathLike)) else runs)]
    found = [(text, _where(text)) for text in texts]
    out = [f for _, f in found if f is not None]
    missing = [text for text, f in found if f is None]
    if missing or not out:
        names = ", ".join(repr(m) for m in missing) or "an empty list"
        demo = " (`make demo` or `bench-nb demo` writes them)" if DEMO_RUNS in missing else ""
        where = f"no runs at {names}, looked for from {Path.cwd()} and its parents{demo}"
        if _in_notebook():
            err = ReportError(
                f'{where}. Set `runs` in this notebook\'s first cell to your runs, e.g. runs = "data/runs/*" '
                "(a run directory, a glob, a runs folder, a compare manifest or a run store; a relative path is "
                "read from the notebook's folder and its parents), then run the cells again"
            )
            # IPython shows this one line instead of a traceback through bench_nb's code.
            err._render_traceback_ = lambda: [f"ReportError: {err}"]  # type: ignore[attr-defined]
            raise err
        raise ReportError(
            f"{where}; point the report at your runs: -p runs 'data/runs/*' (a run directory, a glob, a runs "
            f"folder or a compare manifest), or {DEMO_RUNS!r} after `make demo`"
        )
    return out


def _in_notebook() -> bool:
    """True in a notebook's kernel that a user runs (not one ``build_report`` runs: its runs come from the
    command line's ``-p runs``)."""
    import sys

    if in_report() or "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def open_runs(
    runs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    dataset: str | os.PathLike[str] | None = None,
    run_ids: str | Iterable[str] | None = None,
) -> RunSet | StoredRuns:
    """The runs a report shows: ``resolve_runs`` then ``load_runs`` (``dataset``: LoCoMo's file, to match other
    harnesses' result files to its question ids; see ``load_runs``).

    ``runs`` may be a run store (``bench-nb export``): then ``run_ids`` picks its runs (a list, or one string
    of comma-separated ids; None: every run), and only their partitions are read.

    What could not be read is not warned of when runs load: the report shows ``all_problems`` as a note.

    Raises:
        ReportError: when a source matches nothing, or nothing it matched loads as a run (naming the
            sources and what went wrong); ``run_ids`` that are not in the store, or given without a store.
    """
    from bench_nb.errors import RunFormatError, RunFormatWarning
    from bench_nb.frames.store import is_store, open_store
    from bench_nb.runformat.load import load_runs

    sources = resolve_runs(runs)
    ids = [i.strip() for i in run_ids.split(",") if i.strip()] if isinstance(run_ids, str) else run_ids
    if len(sources) == 1 and is_store(sources[0]):
        if dataset is not None:
            raise ReportError(
                f"{sources[0]} is a run store: its frames were built at export, so dataset= cannot apply "
                "(bench-nb export --dataset ...)"
            )
        try:
            stored = open_store(sources[0], runs=None if ids is None else list(ids))
        except RunFormatError as err:
            raise ReportError(str(err)) from None
        if not len(stored):
            raise ReportError(f"no run in the store {sources[0]}")
        return stored
    if ids is not None:
        raise ReportError(f"run_ids selects runs of a run store (bench-nb export); {runs!r} is not one")
    # What could not be read is the report's to show (run_set.all_problems, as a note on the page): the
    # load's RunFormatWarning would land on the page as a stderr block above the title, so it is given only
    # when nothing loads (just before the error).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RunFormatWarning)
        run_set = load_runs(sources, dataset=dataset, complete="sound")  # its failures read search results
    for w in caught:
        if not (run_set and issubclass(w.category, RunFormatWarning)):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if not run_set:
        problems = "; ".join(str(p) for p in run_set.all_problems[:5]) or "nothing readable"
        raise ReportError(f"no run loaded from {', '.join(map(repr, sources))}: {problems}")
    return run_set
