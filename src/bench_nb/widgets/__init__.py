"""ipywidgets for exploring runs in JupyterLab: ``Explorer`` / ``explore(runs)``."""

from __future__ import annotations

from bench_nb.widgets.explorer import PRIMARY, Explorer, explore

__all__ = ["PRIMARY", "Explorer", "explore"]
