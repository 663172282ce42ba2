"""A frame shown in a plain notebook reads like the report's tables (issue 37): ``bench_nb.show`` writes run
labels (the full id on hover), percentages and rounded numbers, and leaves the frame's values as they were."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import bench_nb
from bench_nb import tables

RUNS = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")


@pytest.fixture(scope="module")
def questions() -> pd.DataFrame:
    return bench_nb.questions_df(RUNS)


def _cells(html: str) -> list[str]:
    """The text of each cell, tags and tooltips left out."""
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", html)]


@pytest.mark.parametrize("name", ["memscore", "accuracy_by_type", "tell_apart"])
def test_a_metrics_frame_shows_run_labels_and_rounded_numbers(questions: pd.DataFrame, name: str) -> None:
    frame = (
        bench_nb.compare_runs(questions, method="tell-apart").frame
        if name == "tell_apart"
        else getattr(bench_nb, name)(questions)
    )
    raw = frame.to_html()  # what the notebook showed before: long run ids, 6-decimal floats
    assert "synthetic-full-context" in raw and re.search(r"\d\.\d{6}", raw)
    shown = bench_nb.show(frame, runs=questions)
    cells = _cells(shown.html)
    assert not [c for c in cells if c.startswith("synthetic-")]  # labels, not run ids
    assert 'title="synthetic-full-context">full-context<' in shown.html  # the full id on hover
    # nothing past 3 decimals, or 3 significant digits (p-values)
    assert not [c for c in cells if re.search(r"(^|[^.\d])([1-9]\d*\.\d{4,}|0\.0*[1-9]\d{3,})", c)]
    assert [c for c in cells if re.fullmatch(r"\d{1,3}\.\d%", c)]  # proportions in percent
    assert shown.frame.height == len(frame) and shown.frame.columns == list(frame.columns)  # values kept


def test_a_comparison_shows_its_frame(questions: pd.DataFrame) -> None:
    comparison = bench_nb.compare_runs(questions, method="tell-apart")
    assert (
        bench_nb.show(comparison, runs=questions).html == bench_nb.show(comparison.frame, runs=questions).html
    )


def test_shown_accuracy_reads_as_the_leaderboards(questions: pd.DataFrame) -> None:
    board = tables.table_memscore(questions).html
    shown = bench_nb.show(bench_nb.memscore(questions)).html  # labels from its own run_id and provider
    for run, pct in (("full-context", "77.6%"), ("sqlite", "67.3%"), ("no-memory", "14.3%")):
        assert f">{run}<" in shown and pct in shown and pct in board
    assert bench_nb.memscore(questions)["accuracy"].iloc[0] == pytest.approx(38 / 49)  # frames unchanged
