"""The labelling widget in a real JupyterLab (headless Chromium, no network): label five answers with the
keyboard, restart the kernel, and the five labels are there, in the widget and as the judge "human"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.notebook]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
SHOTS = Path("/tmp/bench-nb-shots")

_RESTART = """(path) => {
  const panel = Array.from(window.jupyterapp.shell.widgets('main'))
    .find(w => w.context && w.context.path === path && w.content);
  return panel.sessionContext.session.kernel.restart();
}"""


_COUNTS = """(path) => Array.from(window.jupyterapp.shell.widgets('main'))
  .find(w => w.context && w.context.path === path && w.content)
  .content.widgets.map(c => c.model.executionCount)"""


def _notebook(runs: str, target: Path) -> Path:
    cells = [
        f"from bench_nb.widgets import label_answers\nlab = label_answers({runs!r}, n=20, seed=1)\nlab",
        "import bench_nb, polars as pl\n"
        f"human = bench_nb.judgments_df({runs!r}, backend='polars').filter(pl.col('judge') == 'human')\n"
        "print('HUMAN-LABELS', human.height, sorted(human['label'].to_list()))",
    ]
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None}
            for c in cells
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    target.write_text(json.dumps(nb))
    return target


def test_label_five_answers_by_keyboard_restart_and_they_are_there(
    jupyter_lab: Any, lab_page: Any, tmp_path: Path
) -> None:
    runs_dir = tmp_path / "runs"
    for run in FIXTURES.iterdir():
        shutil.copytree(run, runs_dir / run.name)
    runs = str(runs_dir / "*")
    jupyter_lab.add("label.ipynb", _notebook(runs, tmp_path / "label.ipynb"))
    lab_page.open_notebook("label.ipynb")
    lab_page.run_all()
    page = lab_page.page
    status = page.locator(".bnb-labeller .widget-html", has_text="labelled").first
    status.wait_for(timeout=60_000)
    assert "0 / 20" in status.inner_text()
    keys = page.locator(".bnb-label-keys input")
    keys.click()
    for done, key in enumerate("ciucc", start=1):
        answer = page.locator(".bnb-label-answer").inner_text()
        page.keyboard.press(key)
        page.wait_for_function(
            "([el, want]) => el.innerText.includes(want)",
            arg=[status.element_handle(), f"{done} / 20"],
            timeout=30_000,
        )
        assert page.locator(".bnb-label-answer").inner_text() != answer or done == 20  # moved on
    assert "HUMAN-LABELS 0 []" in page.inner_text("body")  # the print ran before any label
    SHOTS.mkdir(exist_ok=True)
    lab_page.screenshot(SHOTS / "lab-labelling.png")
    page.evaluate(_RESTART, "label.ipynb")
    lab_page.run_all()
    counts = page.evaluate(_COUNTS, "label.ipynb")
    assert counts == [1, 2]  # a fresh kernel: without the restart these would be 3 and 4
    page.wait_for_function("() => document.body.innerText.includes('HUMAN-LABELS 5')", timeout=60_000)
    body = page.inner_text("body")
    assert "HUMAN-LABELS 5 ['correct', 'correct', 'correct', 'incorrect', 'unscored']" in body
    status = page.locator(".bnb-labeller .widget-html", has_text="labelled").first
    assert "5 / 20" in status.inner_text()  # resumed after the restart, at the sixth answer
    assert "answer 6 of 20" in status.inner_text()
    lines = [json.loads(x) for p in runs_dir.glob("*/labels.jsonl") for x in p.read_text().splitlines()]
    assert sorted(x["label"] for x in lines) == ["correct", "correct", "correct", "incorrect", "unsure"]
    assert lab_page.errors() == [] and lab_page.outside == []
