"""Vega-Lite to SVG in a separate process, so a report's charts render while its notebook keeps working.

vl-convert holds the GIL while it converts (0.1-0.5 s a chart, plus about 0.6 s to start its engine), so a
thread would not help: one worker process (``python -m bench_nb.reports.svg``) converts the charts in the
order they were submitted, on another core. The report builder starts it before the kernel, so the engine
starts while the kernel does, and ``NotebookCharts`` hands it each chart (a ``CHART_MIME`` output, see
``bench_nb.reports.notebook``) as soon as the cell that displayed it has run; the kernel never renders.

The worker is a plain subprocess with its own pipes: one JSON spec per line in, one JSON reply per line out
(``{"svg": ...}`` or ``{"error": ...}``). (A multiprocessing pool would start multiprocessing's resource
tracker, which keeps the kernel's captured stderr open and holds up the kernel's shutdown by seconds.)

One worker serves every report a process builds (``shared_worker()``), as ``bench-nb report --all`` does:
its engine is started once and stays warm (V8 compiles Vega's code on first use, so a warm worker renders
a report's charts about a third faster). It holds no state between charts, and one that died is replaced.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import html
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from typing import IO, Any

from bench_nb.chart_output import CHART_META, CHART_MIME
from bench_nb.chart_output import EMBED_OPTIONS as EMBED_OPTIONS  # names this module had: kept
from bench_nb.chart_output import JUPYTERLAB_SCHEMA as JUPYTERLAB_SCHEMA
from bench_nb.chart_output import lab_spec as lab_spec
from bench_nb.errors import ReportError

# A chart in a notebook's outputs: Vega-Lite under the v5 MIME type, the newest one JupyterLab 4 draws with the
# Vega it bundles (no network). altair 6 writes Vega-Lite 6 specs, which Vega-Lite 5 draws as they are once
# their $schema says v5 (tests/charts check every chart_* renders under Vega-Lite 5). The report builder
# renders these outputs as SVG for the HTML page; the executed .ipynb keeps them for JupyterLab.
CHART_MIMES = (CHART_MIME, "application/vnd.vegalite.v6+json")  # v6: outputs of older bench_nb versions
_WARMUP_SPEC: dict[str, Any] = {
    "data": {"values": [{"x": 1}]},
    "mark": "point",
    "encoding": {"x": {"field": "x"}},
}


def chart_output_spec(data: dict[str, Any]) -> dict[str, Any] | None:
    """The Vega-Lite spec of an output's data bundle, or None when it holds no chart."""
    return next((dict(data[mime]) for mime in CHART_MIMES if mime in data), None)


FIGURE_START = '<figure class="bnb-chart" '


def figure(svg: str) -> str:
    """The HTML a rendered chart is shown in."""
    return f'{FIGURE_START}style="margin:8px 0 18px">{svg}</figure>'


def spec_to_svg(spec: dict[str, Any]) -> str:
    """The SVG text of a Vega-Lite spec (vl-convert, offline), each run label carrying its full run id as
    a tooltip (``with_run_ids``)."""
    import vl_convert as vlc

    return with_run_ids(str(vlc.vegalite_to_svg(spec)).replace(_VL_CONVERT_BASE, 'xlink:href="'), spec)


# vl-convert resolves a mark's ``href`` against its data loader's base URL (vega-datasets); a report's links are
# relative to the page (the outcome matrix's ``explore.html#q=...``), so spec_to_svg takes that prefix off again.
_VL_CONVERT_BASE = 'xlink:href="https://vega.github.io/vega-datasets/'


_TEXT = re.compile(r"(<text\b[^>]*>)([^<]*)(</text>)")


def _label_run_ids(spec: Any, out: dict[str, str | None]) -> None:
    """label -> run id of every data row of ``spec`` holding a ``run`` label and its ``run_id`` (None for
    a label two runs share)."""
    if isinstance(spec, dict):
        if isinstance(spec.get("run"), str) and isinstance(spec.get("run_id"), str):
            label, rid = spec["run"], spec["run_id"]
            if label != rid:
                out[label] = rid if out.get(label, rid) == rid else None
            return
        for value in spec.values():
            _label_run_ids(value, out)
    elif isinstance(spec, list):
        for value in spec:
            _label_run_ids(value, out)


def with_run_ids(svg: str, spec: dict[str, Any]) -> str:
    """``svg`` with a ``<title>`` (the browser's tooltip) holding the full run id in every text that is a
    run's label (``charts.labels.run_labels``: the provider, or a run id cut to 40 characters), as the
    chart's data pairs them (its ``run`` and ``run_id`` fields): a report's static chart shows a short label
    on its axis, its legend or its facet header, and the whole id on hover."""
    pairs: dict[str, str | None] = {}
    _label_run_ids(spec, pairs)
    if not pairs:
        return svg
    titles = {html.escape(k, quote=False): html.escape(v, quote=False) for k, v in pairs.items() if v}

    def add(m: re.Match[str]) -> str:
        rid = titles.get(m.group(2))
        return m.group(0) if rid is None else f"{m.group(1)}<title>{rid}</title>{m.group(2)}{m.group(3)}"

    return _TEXT.sub(add, svg)


class SvgWorker:
    """One worker process converting Vega-Lite specs to SVG, in submission order."""

    def __init__(self) -> None:
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (open while the worker runs)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench_nb.reports.svg"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._waiting: collections.deque[Future[str]] = collections.deque()
        self._lock = threading.Lock()
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        # Writes and reads on threads: a spec larger than the pipe's buffer must not block the notebook
        # while the worker is busy with the previous chart.
        threading.Thread(target=self._write, name="bench-nb-svg-writer", daemon=True).start()
        self._reader = threading.Thread(target=self._read, name="bench-nb-svg-reader", daemon=True)
        self._reader.start()
        self.submit(_WARMUP_SPEC)  # starts vl-convert's engine now

    def submit(self, spec: dict[str, Any]) -> Future[str]:
        """Queue ``spec``; the future holds its SVG text, or a ``ReportError`` with vl-convert's message."""
        future: Future[str] = Future()
        line = json.dumps(spec).encode() + b"\n"
        with self._lock:  # replies come in submission order: queue the future and the spec together
            self._waiting.append(future)
            self._outbox.put(line)
        return future

    @property
    def alive(self) -> bool:
        """The worker process is still running."""
        return self._proc.poll() is None

    def close(self, timeout: float = 30.0) -> None:
        """Stop the worker once the queued conversions are done."""
        self._outbox.put(None)
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=timeout)
        self._stderr.close()

    def _write(self) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            while (line := self._outbox.get()) is not None:
                stdin.write(line)
                stdin.flush()
        except OSError:
            pass  # the worker died: _read fails what is waiting
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def _read(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        for line in stdout:
            reply = json.loads(line)
            with self._lock:
                future = self._waiting.popleft()
            if "svg" in reply:
                future.set_result(reply["svg"])
            else:
                future.set_exception(ReportError(f"vl-convert could not render the chart: {reply['error']}"))
        code = self._proc.wait()
        with self._lock:
            waiting, self._waiting = list(self._waiting), collections.deque()
        if waiting:
            self._stderr.seek(0)
            tail = self._stderr.read().decode("utf-8", "replace").strip()[-800:]
            err = ReportError(
                f"the chart worker stopped (exit code {code}) before rendering every chart: {tail}"
            )
            for future in waiting:
                future.set_exception(err)


def _chart_outputs(cell: Any) -> list[Any]:
    return [o for o in cell.get("outputs", []) if chart_output_spec(o.get("data", {})) is not None]


def _spec(output: Any) -> dict[str, Any]:
    spec = chart_output_spec(output.get("data", {}))
    assert spec is not None
    return spec


_shared: SvgWorker | None = None
_shared_lock = threading.Lock()


def shared_worker() -> SvgWorker:
    """This process's chart worker, started on first use (or again if it died); closed at exit."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive:
            if _shared is None:
                atexit.register(_close_shared)
            else:
                _shared.close()
            _shared = SvgWorker()
        return _shared


def _close_shared() -> None:
    global _shared
    with _shared_lock:
        if _shared is not None:
            _shared.close()
            _shared = None


class NotebookCharts:
    """Renders the charts of a notebook being executed: ``on_cell_executed`` is nbclient's hook of the same
    name (it submits the cell's charts), ``put_in_place`` swaps each chart output for its SVG.

    Create it before starting the kernel: the first one in a process starts the shared worker's engine.
    """

    def __init__(self) -> None:
        self.worker = shared_worker()
        self._futures: dict[tuple[int, int], Future[str]] = {}

    def on_cell_executed(self, cell: Any, cell_index: int, **_: Any) -> None:
        """nbclient's hook: submit the executed cell's chart outputs for rendering to SVG."""
        for k, out in enumerate(_chart_outputs(cell)):
            self._futures[(cell_index, k)] = self.worker.submit(_spec(out))

    def put_in_place(self, nb: Any, *, timeout: float = 120.0) -> None:
        """Replace every chart output of ``nb`` with its SVG figure.

        Raises:
            ReportError: naming each chart vl-convert could not render, and the cell that displayed it.
        """
        shown = [(i, cell, out) for i, cell in enumerate(nb.cells) for out in _chart_outputs(cell)]
        for (_, _, out), markup in zip(shown, self.figures(shown, timeout=timeout), strict=True):
            out["data"] = {"text/html": markup}
            out["metadata"] = {}

    def figures(self, shown: list[tuple[int, Any, Any]], *, timeout: float = 120.0) -> list[str]:
        """The SVG figure of each chart output in ``shown`` (its cell's index, the cell, the output), waiting
        for those still rendering; an output already a figure is kept as it is.

        Raises:
            ReportError: naming each chart vl-convert could not render, and the cell that displayed it.
        """
        markups, failures, seen = [], [], collections.Counter[int]()
        for index, cell, out in shown:
            if chart_output_spec(out.get("data", {})) is None:  # rendered already (put_in_place)
                markups.append(out["data"]["text/html"])
                continue
            k, seen[index] = seen[index], seen[index] + 1  # its place among the cell's charts
            future = self._futures.pop((index, k), None) or self.worker.submit(_spec(out))
            title = str(out.get("metadata", {}).get(CHART_META, {}).get("title", "chart"))
            try:
                markups.append(figure(future.result(timeout=timeout)))
            except Exception as err:  # a ReportError from the worker, or a timeout
                where = f"In [{cell.get('execution_count')}]"
                failures.append(f"chart {title!r} (displayed by {where}, cell {index}): {err}")
        if failures:
            raise ReportError("charts that could not be rendered: " + "; ".join(failures))
        return markups


WORKER_NICENESS = 10  # below the kernel: see main()


def main() -> None:
    """The worker: convert each spec read from stdin, one reply line per spec on stdout.

    It runs at a lower scheduling priority (``os.nice``): the notebook's kernel is what a report waits for,
    and the charts it has displayed can render on whatever CPU time the kernel leaves (a report's last
    chart is the only one waited for). On a machine with two cores and other work, an equal-priority
    worker took CPU from the kernel while it ran the next cells."""
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    out = sys.stdout
    for line in sys.stdin:
        try:
            reply = {"svg": spec_to_svg(json.loads(line))}
        except Exception as err:  # vl-convert raises plain exceptions; the notebook reports them
            lines = [x for x in str(err).splitlines() if x.strip() and not x.lstrip().startswith("at ")]
            reply = {"error": " ".join(lines) or type(err).__name__}  # without the JavaScript stack
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
