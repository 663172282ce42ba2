"""ipywidgets for JupyterLab: ``Explorer`` / ``explore(runs)`` to read runs side by side, ``LabelWidget`` /
``label_answers(runs)`` to label a stratified sample of answers by keyboard (the ``human`` judge)."""

from __future__ import annotations

from bench_nb.widgets.explorer import PRIMARY, Explorer, explore
from bench_nb.widgets.labelling import LabelWidget, label_answers, stratified_sample

__all__ = ["PRIMARY", "Explorer", "LabelWidget", "explore", "label_answers", "stratified_sample"]
