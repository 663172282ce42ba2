"""The notebooks as a user meets them: a real JupyterLab from this venv, in headless Chromium with no network.

compare.ipynb and explore.ipynb run cell by cell in the browser; every chart must be drawn by JupyterLab's
own Vega (an SVG with marks, no "Error loading script"), the explorer's filters must change what it shows,
and the page must ask nothing of any host but the lab.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench_nb.reports import build_report

pytestmark = [pytest.mark.browser, pytest.mark.notebook]

REPO = Path(__file__).resolve().parents[2]
FIXTURE_GLOB = str(REPO / "tests" / "fixtures" / "runs" / "*")
SHOTS = Path("/tmp/bench-nb-shots")  # screenshots for a look (overwritten each run)
MARKS = (
    "g[class*='mark-'] > path, g[class*='mark-'] > rect, g[class*='mark-'] > line, g[class*='mark-'] > text"
)


def _with_runs(source: Path, target: Path, runs: str) -> Path:
    """``source`` with its ``runs`` parameter set to ``runs`` (what papermill's injection would do)."""
    nb = json.loads(source.read_text())
    cell = nb["cells"][0]
    assert "parameters" in cell["metadata"].get("tags", [])
    lines = "".join(cell["source"]).splitlines(keepends=True)
    cell["source"] = [f"runs = {runs!r}\n" if ln.startswith("runs = ") else ln for ln in lines]
    target.write_text(json.dumps(nb))
    return target


def _charts(page: Any) -> list[dict[str, Any]]:
    """Every Vega-Lite output JupyterLab rendered: its marks, and whether it drew an SVG."""
    return page.evaluate(
        """(marks) => [...document.querySelectorAll('.jp-RenderedVegaLite')].map(el => ({
             svg: !!el.querySelector('svg'),
             marks: el.querySelectorAll(marks).length,
             text: el.innerText.slice(0, 200)}))""",
        MARKS,
    )


def _chart_outputs(nb: dict[str, Any]) -> int:
    return sum(
        "application/vnd.vegalite.v5+json" in o.get("data", {})
        for c in nb["cells"]
        for o in c.get("outputs", [])
    )


def test_compare_draws_every_chart_offline(jupyter_lab: Any, lab_page: Any, tmp_path: Path) -> None:
    jupyter_lab.add(
        "compare.ipynb", _with_runs(REPO / "notebooks" / "compare.ipynb", tmp_path / "c.ipynb", FIXTURE_GLOB)
    )
    lab_page.open_notebook("compare.ipynb")
    lab_page.run_all()
    page = lab_page.page
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-RenderedVegaLite svg').length >= 6", timeout=60_000
    )
    SHOTS.mkdir(exist_ok=True)
    page.locator(".jp-RenderedVegaLite").first.scroll_into_view_if_needed()
    lab_page.screenshot(SHOTS / "lab-compare.png")  # the MemScore chart, drawn by JupyterLab
    charts = _charts(page)
    # every chart output the notebook made (memscore, accuracy, outcome matrix, latency, tokens, kappa, and
    # whatever sections the report has gained) is drawn
    outputs = lab_page.outputs_with("application/vnd.vegalite.v5+json")
    assert len(charts) == outputs >= 6, charts
    assert all(c["svg"] and c["marks"] >= 3 for c in charts), charts
    body = page.inner_text("body")
    assert "Error loading script" not in body and "<chart" not in body
    assert "MemScore leaderboard" in body
    assert lab_page.errors() == []
    assert lab_page.outside == []  # no CDN, no request to any host but the lab


def test_explorer_filters_change_the_view(jupyter_lab: Any, lab_page: Any, tmp_path: Path) -> None:
    jupyter_lab.add(
        "explore.ipynb", _with_runs(REPO / "notebooks" / "explore.ipynb", tmp_path / "e.ipynb", FIXTURE_GLOB)
    )
    page = lab_page.page
    page.set_viewport_size({"width": 1280, "height": 900})  # a laptop window, the file browser open
    lab_page.open_notebook("explore.ipynb")
    lab_page.run_all()
    provider = page.locator(".widget-select-multiple", has_text="provider").locator("select")
    provider.wait_for(timeout=60_000)
    assert page.locator(".jp-FileBrowser").is_visible()
    # Every control fits inside the output area, and every list box shows all its options.
    fit = page.evaluate(
        """() => {
          const area = document.querySelector('.jp-OutputArea-output .widget-vbox').getBoundingClientRect();
          return [...document.querySelectorAll('.widget-select-multiple, .widget-dropdown')].map(el => {
            const r = el.getBoundingClientRect(), s = el.querySelector('select');
            return {label: el.innerText.split('\\n')[0], inside: r.left >= area.left - 1 && r.right <= area.right + 1,
                    rows: s.size, options: s.options.length};
          });
        }"""
    )
    assert len(fit) == 6 and all(c["inside"] for c in fit), fit
    assert all(c["rows"] >= min(c["options"], 8) for c in fit if c["rows"] > 1), fit
    question = page.locator(".widget-dropdown", has_text="question").locator("select")
    first = question.locator("option").first.inner_text().replace("\xa0", " ")
    assert first.startswith("conv-1-q1 · What is the name of")  # the text, not only an id
    summary = page.locator(".widget-html", has_text="Selection").first
    before = summary.inner_text()
    assert "no-memory" in before and "sqlite" in before
    provider.select_option(["sqlite"])
    page.wait_for_function(
        "(el) => !el.innerText.includes('no-memory')", arg=summary.element_handle(), timeout=30_000
    )
    after = summary.inner_text()
    assert "sqlite" in after and "full-context" not in after
    SHOTS.mkdir(exist_ok=True)
    lab_page.screenshot(SHOTS / "lab-explore.png")
    assert lab_page.errors() == []
    assert lab_page.outside == []


def test_an_executed_report_notebook_opens_with_its_charts_drawn(
    jupyter_lab: Any, lab_page: Any, tmp_path: Path
) -> None:
    built = build_report(
        "compare",
        {"runs": FIXTURE_GLOB},
        tmp_path / "compare.html",
        notebook=tmp_path / "compare.ipynb",
        index=False,
    )
    assert built.notebook is not None
    nb = json.loads(built.notebook.read_text())
    expected = _chart_outputs(nb)
    assert expected >= 6
    jupyter_lab.add("executed.ipynb", built.notebook)
    lab_page.open_notebook("executed.ipynb")
    page = lab_page.page
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jp-RenderedVegaLite svg').length >= n",
        arg=expected,
        timeout=60_000,
    )
    charts = _charts(page)
    assert len(charts) == expected and all(c["marks"] >= 3 for c in charts), charts
    assert "Error loading script" not in page.inner_text("body")
    assert lab_page.outside == []


def test_charts_draw_offline_in_a_plain_notebook_with_no_setup_call(
    jupyter_lab: Any, lab_page: Any, tmp_path: Path
) -> None:
    # What a user types first: import bench_nb and show a chart. No reports.setup_notebook().
    from notebook_files import write_notebook

    source = write_notebook(
        tmp_path / "plain.ipynb",
        "import bench_nb as bn\nfrom bench_nb import charts\n"
        "runs = bn.load_runs(sources)\ncharts.chart_memscore(runs)",
        "charts.chart_accuracy_by_type(runs)",
        params=f"sources = {FIXTURE_GLOB!r}",  # a cell that runs (an empty one is never counted as run)
    )
    jupyter_lab.add("plain.ipynb", source)
    lab_page.open_notebook("plain.ipynb")
    lab_page.run_all()
    page = lab_page.page
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-RenderedVegaLite svg').length >= 2", timeout=60_000
    )
    SHOTS.mkdir(exist_ok=True)
    page.locator(".jp-RenderedVegaLite").first.scroll_into_view_if_needed()
    lab_page.screenshot(SHOTS / "lab-plain-no-setup.png")
    charts = _charts(page)
    assert len(charts) == 2 and all(c["svg"] and c["marks"] >= 3 for c in charts), charts
    body = page.inner_text("body")
    assert "Error loading script" not in body
    assert lab_page.errors() == []
    assert lab_page.outside == []  # no CDN: nothing asked of any host but the lab
