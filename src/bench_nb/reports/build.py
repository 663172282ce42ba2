"""Building a report: execute a notebook with papermill, export HTML without input cells with nbconvert.

The HTML is one self-contained file: bench_nb's nbconvert template drops every CDN script, charts are
inline SVG (``setup_notebook`` under ``BENCH_NB_REPORT=1``), and every table escapes run text.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_nb.errors import ReportError
from bench_nb.reports.index import ReportEntry, RunEntry, record_report
from bench_nb.reports.locate import find_notebook
from bench_nb.reports.notebook import SUMMARY_MIME

KERNEL = "python3"
TEMPLATES = Path(__file__).parent / "templates"
REPORT_ENV = {"BENCH_NB_QUIET": "1", "BENCH_NB_REPORT": "1"}


@dataclass(frozen=True)
class BuiltReport:
    """A report that was built: where it is, and what the index lists for it."""

    name: str
    path: Path
    entry: ReportEntry


@contextlib.contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    """Set variables for the kernel (it inherits the environment), restoring them after."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _failure(notebook: Path, err: Exception, kept: Path | None) -> ReportError:
    index = getattr(err, "cell_index", None)
    source = str(getattr(err, "source", "") or "").strip().splitlines()
    ename, evalue = getattr(err, "ename", type(err).__name__), getattr(err, "evalue", str(err))
    where = f"cell {index}" if index is not None else "a cell"
    snippet = f" (`{source[0][:80]}`)" if source else ""
    tail = f"; the executed notebook is kept at {kept}" if kept else ""
    return ReportError(f"notebook {notebook.name} failed in {where}{snippet}: {ename}: {evalue}{tail}")


def execute_notebook(
    notebook: str | os.PathLike[str], params: Mapping[str, Any] | None, output: Path, *, timeout: int = 600
) -> Any:
    """Run ``notebook`` with papermill into ``output`` (kernel ``python3``, progress bars off)."""
    import papermill as pm

    with _environment(REPORT_ENV):
        return pm.execute_notebook(
            str(notebook),
            str(output),
            parameters=dict(params or {}),
            kernel_name=KERNEL,
            progress_bar=False,
            log_output=False,
            request_save_on_cell_execute=False,
            execution_timeout=timeout,
        )


def export_html(nb: Any, title: str) -> str:
    """The executed notebook as self-contained HTML, input cells and prompts hidden."""
    from nbconvert import HTMLExporter

    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell["outputs"] = [o for o in cell.get("outputs", []) if SUMMARY_MIME not in o.get("data", {})]
    nb.metadata["title"] = title
    exporter = HTMLExporter(
        template_name="bench_nb",
        extra_template_basedirs=[str(TEMPLATES)],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    body, _ = exporter.from_notebook_node(nb)
    return str(body)


def _summary(nb: Any) -> dict[str, Any]:
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if SUMMARY_MIME in data:
                return dict(data[SUMMARY_MIME])
    return {}


def build_report(
    name: str | os.PathLike[str],
    params: Mapping[str, Any] | None = None,
    output: str | os.PathLike[str] | None = None,
    *,
    timeout: int = 600,
    index: bool = True,
) -> BuiltReport:
    """Execute the notebook ``name`` with ``params`` and write one offline HTML file.

    Args:
        name: a notebook name in ``notebooks/`` (``"compare"``) or a path to an ``.ipynb``.
        params: the notebook's parameters (papermill injects them after its ``parameters`` cell).
        output: the HTML file to write (default ``reports/<name>.html``).
        timeout: the most seconds one cell may run.
        index: record the report in ``index.json``/``index.html`` beside ``output``.

    Raises:
        ReportError: naming the notebook and the failing cell; the executed notebook is kept beside the
            output as ``<output>.failed.ipynb`` for a look.
    """
    import nbformat

    notebook = find_notebook(name)
    out = Path(output) if output is not None else Path("reports") / f"{notebook.stem}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    failed_copy = out.with_suffix(".failed.ipynb")
    with tempfile.TemporaryDirectory(prefix="bench-nb-report-") as tmp:
        executed = Path(tmp) / notebook.name
        try:
            execute_notebook(notebook, params, executed, timeout=timeout)
        except Exception as err:
            kept = None
            if executed.is_file():
                failed_copy.write_bytes(executed.read_bytes())
                kept = failed_copy
            raise _failure(notebook, err, kept) from None
        nb = nbformat.read(executed, as_version=4)
    failed_copy.unlink(missing_ok=True)
    summary = _summary(nb)
    title = str(summary.get("title") or (params or {}).get("title") or notebook.stem)
    page = export_html(nb, title)
    tmp_out = out.with_name(f".{out.name}.tmp")
    tmp_out.write_text(page, encoding="utf-8")
    os.replace(tmp_out, out)
    entry = ReportEntry(
        file=out.name,
        name=notebook.stem,
        title=title,
        built_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        runs=[RunEntry(**r) for r in summary.get("runs", [])],
    )
    if index:
        record_report(out.parent, entry)
    return BuiltReport(notebook.stem, out, entry)
