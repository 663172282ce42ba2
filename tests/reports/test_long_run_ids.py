"""Runs with long ids in the compare report: tables keep each run on one line (its full id as the tooltip)
and scroll sideways inside the page rather than past it; pairs of one provider's runs are told apart; a
chart's run labels carry the full id as the SVG's tooltip."""

from __future__ import annotations

import re

import polars as pl
import pytest

import bench_nb
from bench_nb import charts, tables
from bench_nb.charts.save import chart_spec
from bench_nb.reports.svg import spec_to_svg
from synthetic_runs import write_synthetic_run

IDS = {
    "sqlite-locomo-exclude-adversarial-k10-extractive-20261202T040000Z": "sqlite",
    "sqlite-locomo-exclude-adversarial-k10-extractive-20261202T050000Z": "sqlite",
    "full-context-locomo-exclude-adversarial-k10-extractive-20261202T040000Z": "full-context",
}


@pytest.fixture(scope="module")
def q(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    runs = tmp_path_factory.mktemp("runs")
    for seed, (rid, provider) in enumerate(IDS.items()):
        write_synthetic_run(runs, provider, run_id=rid, seed=seed, n_questions=30)
    return bench_nb.questions_df(str(runs / "*"), backend="polars")


def test_a_runs_cell_is_its_label_on_one_line_with_its_full_id_as_tooltip(q: pl.DataFrame) -> None:
    html = tables.table_uncertainty(q).html
    cells = dict(re.findall(r'<td class="run" title="([^"]+)">([^<]+)</td>', html))
    assert cells == {
        "sqlite-locomo-exclude-adversarial-k10-extractive-20261202T040000Z": "sqlite · …40000Z",
        "sqlite-locomo-exclude-adversarial-k10-extractive-20261202T050000Z": "sqlite · …50000Z",
        "full-context-locomo-exclude-adversarial-k10-extractive-20261202T040000Z": "full-context",
    }
    assert ".bnb-table td.run{white-space:nowrap}" in html
    # the table scrolls inside a box as wide as the page
    assert '<div class="bnb-scroll"><table class="bnb-table">' in html and html.count("</table></div>") == 1
    assert ".bnb-scroll{max-width:100%;overflow-x:auto}" in html


def test_a_pair_of_one_providers_runs_is_told_apart(q: pl.DataFrame) -> None:
    pairs = re.findall(r'<td title="([^"]+) vs ([^"]+)">([^<]+)</td>', tables.table_paired(q).html)
    shown = sorted(text for _, _, text in pairs)
    assert "sqlite vs sqlite" not in shown
    assert "sqlite · …40000Z vs sqlite · …50000Z" in shown
    assert len(set(shown)) == len(shown) == 3


def test_a_charts_run_labels_carry_the_full_run_id_as_a_tooltip(q: pl.DataFrame) -> None:
    svg = spec_to_svg(chart_spec(charts.chart_context_tokens(q)))
    titled = dict(re.findall(r"<text\b[^>]*><title>([^<]+)</title>([^<]+)</text>", svg))
    assert titled == {rid: label for rid, label in _labels(q).items()}


def _labels(q: pl.DataFrame) -> dict[str, str]:
    from bench_nb.charts.labels import run_labels

    return run_labels(q)


def test_a_label_two_runs_share_gets_no_tooltip() -> None:
    from bench_nb.reports.svg import with_run_ids

    svg = '<svg><text x="1">sqlite</text><text x="2">a · …1</text></svg>'
    spec = {
        "datasets": {
            "d": [
                {"run": "sqlite", "run_id": "s-1"},
                {"run": "sqlite", "run_id": "s-2"},
                {"run": "a · …1", "run_id": "a-long-1"},
            ]
        }
    }
    assert with_run_ids(svg, spec) == (
        '<svg><text x="1">sqlite</text><text x="2"><title>a-long-1</title>a · …1</text></svg>'
    )


@pytest.mark.parametrize("chart", ["chart_accuracy_by_type", "chart_accuracy_intervals"])
def test_a_legend_shows_each_run_label_whole_with_its_full_id(
    tmp_path_factory: pytest.TempPathFactory, chart: str
) -> None:
    """Issue 37: the legend cut "evermemos · gpt-4.1-mini-memos" to "evermemos · gpt-4.1-mini-…" (Vega's
    160-pixel label limit), so the label matched neither the axes' nor the tables' and lost its tooltip."""
    runs = tmp_path_factory.mktemp("evermemos")
    for seed, rid in enumerate(("gpt-4.1-mini-cot", "gpt-4.1-mini-memos")):
        write_synthetic_run(runs, "sqlite", run_id=rid, seed=seed, n_questions=30)
    q = bench_nb.questions_df(str(runs / "*"), backend="polars").with_columns(provider=pl.lit("evermemos"))
    svg = spec_to_svg(chart_spec(getattr(charts, chart)(q)))
    titled = dict(re.findall(r"<text\b[^>]*><title>([^<]+)</title>([^<]+)</text>", svg))
    assert titled == {
        "gpt-4.1-mini-cot": "evermemos · gpt-4.1-mini-cot",
        "gpt-4.1-mini-memos": "evermemos · gpt-4.1-mini-memos",
    }
    assert "…" not in "".join(re.findall(r"<text\b[^>]*>([^<]*)</text>", svg))
