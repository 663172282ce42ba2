"""A report's kernel imports what its notebook declares (metadata ``bench_nb.preload``) while it waits for its
first cell, and runs no cell before those imports are done (``bench_nb.reports.preload``)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from notebook_files import write_notebook

from bench_nb.reports import execute_notebook
from bench_nb.reports.build import notebook_preload

REPO = Path(__file__).resolve().parents[2]

# What the first cell sees: which of the modules are imported, whether the preload thread is still running,
# and whether the collector is on (the thread pauses it while it imports, and must turn it on again).
PROBE = """
import gc, json, sys, threading
print(json.dumps({
    "imported": sorted(m for m in ("xml.dom.minidom", "tomllib", "no_such_module_here") if m in sys.modules),
    "preloading": any(t.name == "bench-nb-preload" for t in threading.enumerate()),
    "gc": gc.isenabled(),
}))
"""


def _first_output(nb: nbformat.NotebookNode) -> dict[str, object]:
    out = nb.cells[-1].outputs
    assert out and out[0].output_type == "stream", out
    return json.loads(out[0].text)


def _notebook(path: Path, preload: object | None) -> Path:
    write_notebook(path, PROBE)
    if preload is not None:
        nb = nbformat.read(path, as_version=4)
        nb.metadata["bench_nb"] = {"preload": preload}
        nbformat.write(nb, path)
    return path


def test_the_kernel_imports_the_declared_modules_before_the_first_cell(tmp_path: Path) -> None:
    # A name that does not import is left to the notebook's own import (it fails there, in its cell).
    nb = _notebook(tmp_path / "preload.ipynb", ["no_such_module_here", "xml.dom.minidom", "tomllib"])
    seen = _first_output(execute_notebook(nb, {}, tmp_path / "out.ipynb"))
    assert seen == {"imported": ["tomllib", "xml.dom.minidom"], "preloading": False, "gc": True}


def test_without_a_declaration_the_kernel_imports_nothing_more(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "plain.ipynb", None)
    seen = _first_output(execute_notebook(nb, {}, tmp_path / "out.ipynb"))
    assert seen == {"imported": [], "preloading": False, "gc": True}


def test_notebook_preload_reads_the_metadata_and_ignores_what_is_not_a_list_of_names(tmp_path: Path) -> None:
    assert notebook_preload(_notebook(tmp_path / "a.ipynb", ["polars", "", 3, "numpy"])) == (
        "polars",
        "numpy",
    )
    assert notebook_preload(_notebook(tmp_path / "b.ipynb", "polars")) == ()
    assert notebook_preload(_notebook(tmp_path / "c.ipynb", None)) == ()
    (tmp_path / "d.ipynb").write_text("not json")
    assert notebook_preload(tmp_path / "d.ipynb") == ()
    assert notebook_preload(tmp_path / "missing.ipynb") == ()


def test_the_report_notebooks_preload_only_what_their_cells_import() -> None:
    # Each of bench_nb's notebooks calls setup_notebook(), which imports polars and bench_nb's charts and
    # tables first thing; compare.ipynb's summary also needs numpy and scipy.special at once (the paired
    # table's clustered test). A name here that a report never imports would cost its kernel time.
    setup = ("polars", "bench_nb.charts", "bench_nb.tables")
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        calls_setup = any("reports.setup_notebook()" in c.source for c in nb.cells if c.cell_type == "code")
        extra = ("numpy", "scipy.special") if path.stem == "compare" else ()
        assert notebook_preload(path) == ((*setup, *extra) if calls_setup else ()), path.name
