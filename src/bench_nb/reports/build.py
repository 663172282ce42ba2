"""Building a report: execute a notebook with papermill, export HTML without input cells with nbconvert.

The HTML is one self-contained file: bench_nb's nbconvert template drops every CDN script, charts are
inline SVG, and every table escapes run text.

Speed (BENCHMARKS.md): the notebook's charts are rendered to SVG by a worker process the first report
starts before its kernel (``bench_nb.reports.svg``): its engine starts while the kernel starts, each chart is
rendered while the next cells run, and the worker is kept for the next report. The HTML exporter is made
and its templates compiled on a thread while the kernel runs, and kept too. A notebook that lists its
libraries in its metadata (``bench_nb.preload``) has its kernel import them while it waits for the client's
first cell (``bench_nb.reports.preload``). jsonschema is imported without its format-checker grammars
(``bench_nb.fast_imports``), and the kernel is killed, not shut down, once every output is in.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_nb.errors import ReportError
from bench_nb.fast_imports import load_jsonschema
from bench_nb.registry import did_you_mean
from bench_nb.reports.index import ReportEntry, RunEntry, record_report
from bench_nb.reports.locate import find_notebook, resolve_runs
from bench_nb.reports.notebook import SUMMARY_MIME
from bench_nb.reports.preload import EXTENSION as PRELOAD_EXTENSION
from bench_nb.reports.preload import PRELOAD_ENV
from bench_nb.reports.svg import FIGURE_START, NotebookCharts, chart_output_spec, figure, spec_to_svg
from bench_nb.runformat.journal import write_atomic
from bench_nb.text import json_in_script

KERNEL = "python3"
TEMPLATES = Path(__file__).parent / "templates"
REPORT_ENV = {"BENCH_NB_QUIET": "1", "BENCH_NB_REPORT": "1"}
# The folder of the report being built, for its kernel (``BENCH_NB_REPORT_DIR``: ``reports.beside``).
_REPORT_DIR: ContextVar[str | None] = ContextVar("bench_nb_report_dir", default=None)
# What the notebook being executed has its kernel import before its first cell (``bench_nb.reports.preload``).
_PRELOAD: ContextVar[tuple[str, ...]] = ContextVar("bench_nb_preload", default=())


@dataclass(frozen=True)
class BuiltReport:
    """A report that was built: where it is, and what the index lists for it."""

    name: str
    path: Path
    entry: ReportEntry
    notebook: Path | None = None  # the executed notebook, when asked for (charts as Vega-Lite for JupyterLab)


def _kernel_environment() -> dict[str, str]:
    """The report kernel's environment: this process's, in report mode (``REPORT_ENV``), and with polars and
    numpy's BLAS (OpenBLAS, the cluster bootstrap's matrix products) on one thread unless the environment
    says otherwise: a report's frames and matrices are small (one thread answers in less CPU time, and
    OpenBLAS's threads spin on a busy machine) and the other core renders the charts meanwhile. Given to the
    kernel's process only (``ReportKernelManager``): this process's own environment is left as it is."""
    threads = {name: os.environ.get(name, "1") for name in ("POLARS_MAX_THREADS", "OPENBLAS_NUM_THREADS")}
    folder = _REPORT_DIR.get()
    preload = _PRELOAD.get()
    return {
        **os.environ,
        **REPORT_ENV,
        **threads,
        **({"BENCH_NB_REPORT_DIR": folder} if folder else {}),
        **({PRELOAD_ENV: ",".join(preload)} if preload else {}),
    }


def notebook_preload(notebook: str | os.PathLike[str]) -> tuple[str, ...]:
    """The modules a notebook asks its report kernel to import before its first cell: its metadata's
    ``bench_nb.preload`` list (none when it has no such list, or is no notebook JSON)."""
    try:
        meta = json.loads(Path(notebook).read_bytes())["metadata"].get("bench_nb", {})
    except (OSError, ValueError, LookupError, AttributeError, TypeError):
        return ()
    names = meta.get("preload", []) if isinstance(meta, dict) else []
    return tuple(n for n in names if isinstance(n, str) and n) if isinstance(names, list) else ()


class _ChartsFailed(Exception):
    """Every cell ran, but a chart could not be rendered (the message names it)."""


def _keep(executed: Path, failed_copy: Path) -> Path | None:
    """The executed notebook copied to ``failed_copy`` (beside the report) for a look, if it was written."""
    if not executed.is_file():
        return None
    failed_copy.write_bytes(executed.read_bytes())
    return failed_copy


def _failure(notebook: Path, err: Exception, kept: Path | None) -> ReportError:
    index = getattr(err, "cell_index", None)
    source = str(getattr(err, "source", "") or "").strip().splitlines()
    ename, evalue = getattr(err, "ename", type(err).__name__), getattr(err, "evalue", str(err))
    tail = f"; the executed notebook is kept at {kept}" if kept else ""
    if isinstance(err, _ChartsFailed):
        return ReportError(f"notebook {notebook.name} failed rendering its charts: {err}{tail}")
    if ename == ReportError.__name__:  # bench_nb's own refusal in the kernel (open_runs: no run loaded): the
        return ReportError(f"notebook {notebook.name}: {evalue}{tail}")  # reason, not the cell it was in
    where = f"cell {index}" if index is not None else "a cell"
    snippet = f" (`{source[0][:80]}`)" if source else ""
    return ReportError(f"notebook {notebook.name} failed in {where}{snippet}: {ename}: {evalue}{tail}")


@functools.cache
def _kernel_manager_class() -> type:
    """jupyter_client's kernel manager, talking to the kernel over Unix sockets (IPC, its public
    ``transport`` setting) instead of TCP on 127.0.0.1: no port any local user could connect to, and no
    "Kernel is running over TCP without encryption" line in every build."""
    from jupyter_client.manager import AsyncKernelManager

    class ReportKernelManager(AsyncKernelManager):
        """Its sockets in a private folder of its own (``ip`` is their path prefix over IPC; by default
        ``kernel-ipc`` in the working directory, shared by two builds started there, so one failed),
        removed with the kernel's other files."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("transport", "ipc")
            if kwargs["transport"] == "ipc" and "ip" not in kwargs:
                self._socket_dir = tempfile.mkdtemp(prefix="bench-nb-kernel-")  # mode 0700
                kwargs["ip"] = os.path.join(self._socket_dir, "kernel")
            super().__init__(*args, **kwargs)

        async def _async_pre_start_kernel(self, **kw: Any) -> Any:  # every start: a restart too
            kw.setdefault("env", _kernel_environment())
            return await super()._async_pre_start_kernel(**kw)

        def write_connection_file(self, **kwargs: Any) -> None:  # before every start (a restart too)
            if getattr(self, "_socket_dir", None):
                os.makedirs(self._socket_dir, mode=0o700, exist_ok=True)
            super().write_connection_file(**kwargs)

        def cleanup_ipc_files(self) -> None:  # at every shutdown, immediate ones included
            super().cleanup_ipc_files()
            if getattr(self, "_socket_dir", None):
                shutil.rmtree(self._socket_dir, ignore_errors=True)

        # AsyncKernelManager's shutdown_kernel is a coroutine; mypy reads KernelManager's (sync) signature
        async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:  # type: ignore[override]
            """``now`` (a report's): the kernel's process group killed and its end awaited in 5 ms steps
            first. jupyter_client's own kill checks once, then every 0.1 s: the kernel, with its frames
            and imports to unmap, was still there at the check, so a build waited 0.1 s between its last
            cell and its export."""
            if now and await self.is_alive():
                await self.signal_kernel(signal.SIGKILL)
                for _ in range(200):  # a second at most: jupyter_client's own wait follows
                    if not await self.is_alive():
                        break
                    await asyncio.sleep(0.005)
            await super().shutdown_kernel(now=now, restart=restart)

    return ReportKernelManager


def execute_notebook(
    notebook: str | os.PathLike[str], params: Mapping[str, Any] | None, output: Path, *, timeout: int = 600
) -> Any:
    """Run ``notebook`` with papermill into ``output`` (kernel ``python3``, progress bars off, report mode);
    returns the executed notebook with its charts rendered to SVG (``output`` keeps them as Vega-Lite).

    Raises:
        papermill's ``PapermillExecutionError`` for a failing cell; ``ReportError`` (from ``_ChartsFailed``)
        naming each chart that could not be rendered.
    """
    nb, charts = _execute(notebook, params, output, timeout)
    try:
        charts.put_in_place(nb)
    except ReportError as err:
        raise _ChartsFailed(str(err).removeprefix("charts that could not be rendered: ")) from None
    return nb


def _execute(
    notebook: str | os.PathLike[str], params: Mapping[str, Any] | None, output: Path, timeout: int
) -> tuple[Any, NotebookCharts]:
    """``execute_notebook`` without waiting for its charts: the notebook, and its charts still rendering."""
    load_jsonschema()  # before papermill and nbformat import it: 1.5-2 s less in a new process
    import papermill as pm

    charts = NotebookCharts()  # first: a new chart worker's engine starts while the kernel does
    preload = notebook_preload(notebook)
    # the kernel runs in report mode: _kernel_environment, given to its process by the kernel manager;
    # with a preload, the extension imports the notebook's libraries while the kernel waits for its client
    token = _PRELOAD.set(preload)
    try:
        nb = pm.execute_notebook(
            str(notebook),
            str(output),
            parameters=dict(params or {}),
            kernel_name=KERNEL,
            progress_bar=False,
            log_output=False,
            request_save_on_cell_execute=False,
            execution_timeout=timeout,
            on_cell_executed=charts.on_cell_executed,
            kernel_manager_class=_kernel_manager_class(),
            extra_arguments=[f"--ext={PRELOAD_EXTENSION}"] if preload else [],
            # Every output is in once the last cell has replied: kill the kernel's process group
            # (whatever the notebook started goes with it) instead of waiting 0.3-0.5 s for a kernel
            # with pandas/altair/polars loaded to finalize its interpreter.
            shutdown_kernel="immediate",
        )
    finally:
        _PRELOAD.reset(token)
    return nb, charts


_SLOT = '<div class="bnb-slot" data-slot="{}"></div>'
_SLOTS = re.compile(_SLOT.format(r"(\d+)"))


@functools.cache
def _exporter() -> Any:
    """nbconvert's HTML exporter with bench_nb's template, made once per process (``export_html`` keeps the
    charts' SVG out of the page it parses: see there)."""
    load_jsonschema()
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="bench_nb",
        extra_template_basedirs=[str(TEMPLATES)],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        optimistic_validation=True,  # the notebook validated once, not after each of its 11 preprocessors
        # The JSON the page carries in <script> elements (ipywidgets' state and views: nbconvert's templates apply
        # this filter only to json_dumps' output) with every < escaped, not only / (text.json_in_script)
        filters={"escape_html_script": json_in_script},
    )


def _warm_exporter() -> None:
    """Make the exporter and compile its templates (run on a thread while a notebook executes)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("warm-up")]
    _exporter().from_notebook_node(nb)


def _html_as_is(output: Any) -> bool:
    """Whether nbconvert shows ``output`` as its HTML as it is (a table, a note): nothing it ranks above HTML
    (a widget view, JavaScript), no metadata that could change how it is shown, and no image (the parse of
    the page gives an image alt text)."""
    data = output.get("data", {})
    return (
        "text/html" in data
        and data.keys() <= {"text/html", "text/plain"}
        and not output.get("metadata")
        and "<img" not in str(data["text/html"])
    )


def export_html(nb: Any, title: str, charts: NotebookCharts | None = None) -> str:
    """The executed notebook as self-contained HTML, input cells and prompts hidden.

    A chart still in Vega-Lite is rendered to SVG: by ``charts``, the ``NotebookCharts`` still rendering the
    notebook's charts (the page is exported while the last of them render), or else in this process (a
    notebook executed some other way than ``execute_notebook``). nbconvert's exporter ends by re-parsing the
    whole page with BeautifulSoup (to give images alt text and output areas a tabindex): with a few thousand SVG
    elements in it that took 0.2-0.4 s, and a compare report's tables are 1,350 of its other 1,700 tags, so
    each chart's figure and each HTML output without an image goes into the page as an empty slot and is put
    in place after the export (the HTML as the notebook displayed it, not as BeautifulSoup writes it again).

    Raises:
        ReportError: naming each chart that could not be rendered.
    """
    shown: list[tuple[int, Any, Any]] = []  # each chart: its cell's index, the cell, the output as it was
    parts: list[str | int] = []  # each slot's content: an output's HTML, or its chart's place in ``shown``
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        cell["outputs"] = [o for o in cell.get("outputs", []) if SUMMARY_MIME not in o.get("data", {})]
        for out in cell["outputs"]:
            data = out.get("data", {})
            markup = str(data.get("text/html", ""))
            if chart_output_spec(data) is not None or markup.startswith(FIGURE_START):
                shown.append((index, cell, {"data": data, "metadata": out.get("metadata", {})}))
                parts.append(len(shown) - 1)
            elif _html_as_is(out):
                parts.append(markup)
            else:
                continue
            out["data"] = {"text/html": _SLOT.format(len(parts) - 1)}
            out["metadata"] = {}
    nb.metadata["title"] = title
    body, _ = _exporter().from_notebook_node(nb)
    page = fold_sections(str(body), nb.cells)
    if charts is not None:
        figures = charts.figures(shown)
    else:
        figures = [
            figure(spec_to_svg(spec))
            if (spec := chart_output_spec(out["data"]))
            else out["data"]["text/html"]
            for _, _, out in shown
        ]
    page, placed = _SLOTS.subn(lambda m: p if isinstance(p := parts[int(m[1])], str) else figures[p], page)
    if placed != len(parts):
        raise ReportError(f"{len(parts) - placed} output(s) have no single place in the exported page")
    return page


_CELL = re.compile(r'<div class="jp-Cell[^"]*" id="cell-id=([^"]+)">')
FOLDED = "folded"  # the tag of a section heading's cell whose section starts folded


def fold_sections(page: str, cells: Any) -> str:
    """``page`` with each section in a ``<details>`` that folds it: a section is a markdown cell starting
    with a level-2 heading (``## ...``) and the cells after it up to the next one. Its heading cell is the
    ``<summary>``, always shown (the table of contents' links land on it, and open it: the template's
    script); a section whose heading cell is tagged ``folded`` starts folded (long reference tables), the
    others open. Cells are found by their ids (``cell-id=...``, nbformat 4.5); a notebook without them is
    left as it is."""
    starts = {
        str(c["id"]): FOLDED in c.get("metadata", {}).get("tags", [])
        for c in cells
        if c.get("cell_type") == "markdown" and c.get("id") and str(c.get("source", "")).startswith("## ")
    }
    found = [(m.start(), m.group(1)) for m in _CELL.finditer(page)]
    end = page.rfind("</main>")
    if not starts or not found or end < found[-1][0]:
        return page
    bounds = [at for at, _ in found[1:]] + [end]
    out, last, open_section = [], 0, False
    for (at, cid), next_at in zip(found, bounds, strict=True):
        if cid not in starts:
            continue
        out.append(page[last:at])
        if open_section:
            out.append("</details>\n")
        state = "" if starts[cid] else " open"
        out.append(f'<details class="bnb-section"{state}><summary>{page[at:next_at]}</summary>')
        last, open_section = next_at, True
    out.append(page[last:end])
    if open_section:
        out.append("</details>\n")
    out.append(page[end:])
    return "".join(out)


def _summary(nb: Any) -> dict[str, Any]:
    datas = (out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", []))
    return next((dict(d[SUMMARY_MIME]) for d in datas if SUMMARY_MIME in d), {})


def check_parameters(notebook: Path, params: Mapping[str, Any] | None) -> None:
    """Refuse a parameter the notebook does not declare in its ``parameters`` cell (papermill would only log
    "Passed unknown parameter" and build the page with the default): the error names it and the nearest
    declared one. A notebook without a parameters cell takes anything (papermill injects at the top)."""
    if not params:
        return
    from papermill.inspection import inspect_notebook

    declared = list(inspect_notebook(str(notebook)))
    if not declared:
        return
    parts = [f"{n!r}" + did_you_mean(n, declared, cutoff=0.5) for n in params if n not in declared]
    if parts:
        raise ReportError(
            f"notebook {notebook.name} has no parameter {', '.join(parts)}; its parameters: "
            f"{', '.join(declared)}"
        )


def build_report(
    name: str | os.PathLike[str],
    params: Mapping[str, Any] | None = None,
    output: str | os.PathLike[str] | None = None,
    *,
    timeout: int = 600,
    index: bool = True,
    notebook: str | os.PathLike[str] | None = None,
) -> BuiltReport:
    """Execute the notebook ``name`` with ``params`` and write one offline HTML file.

    Args:
        name: a notebook name in ``notebooks/`` (``"compare"``) or a path to an ``.ipynb``.
        params: the notebook's parameters (papermill injects them after its ``parameters`` cell).
        output: the HTML file to write (default ``reports/<name>.html``).
        timeout: the most seconds one cell may run.
        index: record the report in ``index.json``/``index.html`` beside ``output``.
        notebook: also write the executed notebook here; it opens in JupyterLab with its charts drawn
            (Vega-Lite 5, which JupyterLab renders with no network).

    Raises:
        ReportError: naming the notebook and the failing cell; the executed notebook is kept beside the
            output as ``<output>.failed.ipynb`` for a look. A ``runs`` parameter that matches nothing fails
            before the notebook runs, naming it; so does a parameter the notebook does not declare (naming
            the nearest one it does). Either way ``output`` is left as it was.
    """
    source = find_notebook(name)
    load_jsonschema()  # here, before papermill and the exporter's thread import nbformat
    check_parameters(source, params)
    runs = (params or {}).get("runs")
    if runs is not None:
        resolve_runs(runs)  # a source that matches nothing fails now: no kernel started, no page written
    out = Path(output) if output is not None else Path("reports") / f"{source.stem}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    failed_copy = out.with_suffix(".failed.ipynb")
    warm = threading.Thread(target=_warm_exporter, name="bench-nb-exporter", daemon=True)
    warm.start()  # while the kernel runs: the exporter is ready when the notebook is
    with tempfile.TemporaryDirectory(prefix="bench-nb-report-") as tmp:
        executed = Path(tmp) / source.name
        folder = _REPORT_DIR.set(str(out.parent.resolve()))
        try:
            nb, charts = _execute(source, params, executed, timeout)
        except Exception as err:
            raise _failure(source, err, _keep(executed, failed_copy)) from None
        finally:
            _REPORT_DIR.reset(folder)
        summary = _summary(nb)
        warm.join()
        title = str(summary.get("title") or (params or {}).get("title") or source.stem)
        try:  # exported while the last charts render
            page = export_html(nb, title, charts)
        except ReportError as err:
            failed = _ChartsFailed(str(err).removeprefix("charts that could not be rendered: "))
            raise _failure(source, failed, _keep(executed, failed_copy)) from None
        kept_notebook = None
        if notebook is not None:
            kept_notebook = Path(notebook)
            kept_notebook.parent.mkdir(parents=True, exist_ok=True)
            kept_notebook.write_bytes(executed.read_bytes())
    failed_copy.unlink(missing_ok=True)
    write_atomic(out, page.encode("utf-8"), durable=False)  # no temporary file is left if it fails
    entry = ReportEntry(
        file=out.name,
        name=source.stem,
        title=title,
        built_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        runs=[RunEntry(**r) for r in summary.get("runs", [])],
    )
    if index:
        record_report(out.parent, entry)
    return BuiltReport(source.stem, out, entry, kept_notebook)
