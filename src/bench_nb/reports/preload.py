"""An IPython extension the report builder loads into a report's kernel (``--ext``): the libraries the notebook
declares are imported on a thread while the kernel waits for its first cell, and that cell waits for them.

A kernel that has answered the client's first ``kernel_info`` request then sits idle for at least 0.2 s:
jupyter_client's ``wait_for_ready`` reads the IOPub channel until it has been quiet that long before the
client sends anything, and papermill's first cell comes after that. A report's first cells import polars,
numpy and scipy.special (0.4-0.5 s of a compare report's kernel); imported in that idle time, they cost the
report that much less (BENCHMARKS.md).

The notebook names what to import in its metadata, ``{"bench_nb": {"preload": ["polars", ...]}}`` (read by
``build_report``, handed to the kernel as ``BENCH_NB_PRELOAD``): what its cells import anyway, so nothing is
imported that would not be. They are imported under a paused collector (``gc_paused``, as
``setup_notebook`` does). Before any cell runs, the kernel waits for the thread (IPython's ``pre_execute``
event): no cell's code ever runs beside an import of the thread's. A module that fails to import is left
for the notebook's own import to raise where it belongs.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

from bench_nb.gc_pause import gc_paused

PRELOAD_ENV = "BENCH_NB_PRELOAD"  # the modules to import, comma-separated
EXTENSION = __name__


def preload_names(value: str | None) -> list[str]:
    """The module names of a ``BENCH_NB_PRELOAD`` value (comma-separated; blanks ignored)."""
    return [name.strip() for name in (value or "").split(",") if name.strip()]


def _import_all(names: list[str]) -> None:
    with gc_paused():
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # the notebook's own import raises it, in its cell
                continue


def load_ipython_extension(ipython: Any) -> None:
    """Start importing the modules ``BENCH_NB_PRELOAD`` names on a thread, and hold the first cell (any
    execution: ``pre_execute``) until they are in. Nothing to do without the variable."""
    names = preload_names(os.environ.get(PRELOAD_ENV))
    if not names:
        return
    thread = threading.Thread(target=_import_all, args=(names,), name="bench-nb-preload", daemon=True)
    thread.start()

    def wait(*_: Any) -> None:
        thread.join()
        ipython.events.unregister("pre_execute", wait)

    ipython.events.register("pre_execute", wait)
