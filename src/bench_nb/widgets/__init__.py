"""ipywidgets for JupyterLab: ``Explorer`` / ``explore(runs)`` to read runs side by side, ``LabelWidget`` /
``label_answers(runs)`` to label a stratified sample of answers by keyboard (the ``human`` judge)."""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.widgets.explorer import PRIMARY, Explorer, explore
    from bench_nb.widgets.labelling import LabelWidget, label_answers, stratified_sample

# ipywidgets is imported on first use of a widget.
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.widgets.explorer": ["Explorer", "PRIMARY", "explore"],
        "bench_nb.widgets.labelling": ["LabelWidget", "label_answers", "stratified_sample"],
    },
)
