"""The per-question grid in headless Chromium (no network), on the two LoCoMo-audit runs of 1,540 questions: sort
by a column, filter to "A wrong, B right", open a question's detail, find the gold evidence marked; in the explore
report, then in the explore notebook in a real JupyterLab (the grid an itables widget: selecting a row shows its
detail; the grid follows the explorer's filters). Screenshots go to /tmp/bench-nb-shots; the JupyterLab test prints how long the grid and a row's detail
took to show."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from bench_nb.reports import build_report
from bench_nb.widgets import Explorer

pytestmark = [pytest.mark.browser, pytest.mark.notebook]

REPO = Path(__file__).resolve().parents[2]
SHOTS = Path("/tmp/bench-nb-shots")
GRID = ".bnb-grid [id^=itables_][id$=_wrapper]"  # the grid's DataTables container
TABLE = ".bnb-grid table[id^=itables_]"  # the grid itself (its filter panes are DataTables too)


@pytest.fixture(scope="module")
def explore_report(tmp_path_factory: pytest.TempPathFactory, locomo_audit: Path, locomo_path: Path) -> Path:
    out = tmp_path_factory.mktemp("site") / "explore.html"
    runs = str(locomo_audit / "fc-baseline" / "*")
    build_report("explore", {"runs": runs, "dataset": str(locomo_path)}, out, index=False)
    return out


def _first_rows(page: Any, column: int) -> list[str]:
    return page.eval_on_selector_all(
        f"{TABLE} tbody tr", f"rows => rows.map(r => r.cells[{column}].textContent)"
    )


def test_grid_sorts_filters_a_wrong_b_right_and_opens_gold_evidence(
    explore_report: Path, chromium_browser: Any, browser_proxy: tuple[int, list[str]]
) -> None:
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(explore_report.as_uri())
    grid = page.locator(GRID)
    grid.wait_for(timeout=60_000)
    headers = page.eval_on_selector_all(f"{TABLE} thead th", "ths => ths.map(t => t.textContent.trim())")
    assert headers[:3] == ["question", "type", "haystack"] and "A vs B" in headers
    assert "1,540 entries" in page.locator(f"{GRID} .dt-info").inner_text()
    # Sort by the question type: the first rows become the alphabetically first type, ascending.
    type_col = headers.index("type")
    page.locator(f"{TABLE} thead th", has_text="type").first.locator(
        ".dt-column-order"
    ).click()  # the sort icon
    page.wait_for_function(  # DataTables redraws after the click: read the rows once it has
        "(sel) => document.querySelector(sel).classList.contains('dt-ordering-asc')",
        arg=f"{TABLE} thead th:nth-child({type_col + 1})",
        timeout=30_000,
    )
    types = _first_rows(page, type_col)
    assert types == sorted(types) and types[0] == "multi-hop"
    # The "A wrong, B right" pane: every row left is one where A is wrong and B right (107 of them).
    ab_col = headers.index("A vs B")
    page.locator(".dtsp-searchPane td", has_text="A wrong, B right").first.click()
    page.wait_for_function(
        "(sel) => document.querySelector(sel + ' .dt-info').innerText.includes('filtered')",
        arg=GRID,
        timeout=30_000,
    )
    info = page.locator(f"{GRID} .dt-info").inner_text()
    assert "107 entries" in info and "filtered from 1,540" in info, info
    assert set(_first_rows(page, ab_col)) == {"A wrong, B right"}
    assert set(_first_rows(page, headers.index("A: verdict"))) == {"incorrect"}
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "explore-grid-a-wrong-b-right.png"))
    # Open the first row's detail: both runs' answers, the verdicts and the gold evidence marked.
    link = page.locator(f"{TABLE} tbody tr a").first
    qid = link.inner_text()
    link.click()
    detail = page.locator(".bnb-detail:target")
    detail.wait_for(timeout=10_000)
    assert qid in detail.inner_text() and "gold evidence" in detail.inner_text()
    assert detail.locator(".bnb-gold").count() >= 1
    assert detail.locator("text=no context retrieved").count() == 2  # imported runs record no retrieval
    page.screenshot(path=str(SHOTS / "explore-grid-detail.png"))
    assert errors == []


LAB_GRID = ".itables_anywidget"  # the explorer's grid widget in JupyterLab (its table and filter panes)
LAB_TABLE = f"{LAB_GRID} table.dataTable:not(.dtsp-searchPane table)"


def _explore_notebook(target: Path, **params: str) -> Path:
    """explore.ipynb with its parameters set (what papermill's injection would do)."""
    nb = json.loads((REPO / "notebooks" / "explore.ipynb").read_text())
    cell = nb["cells"][0]
    assert "parameters" in cell["metadata"].get("tags", [])
    lines = "".join(cell["source"]).splitlines(keepends=True)
    for name, value in params.items():
        lines = [f"{name} = {value!r}\n" if ln.startswith(f"{name} = ") else ln for ln in lines]
    cell["source"] = lines
    target.write_text(json.dumps(nb))
    return target


def test_in_jupyterlab_the_grid_sorts_filters_and_a_selected_row_shows_gold_evidence(
    jupyter_lab: Any, lab_page: Any, locomo_audit: Path, locomo_path: Path, tmp_path: Path
) -> None:
    runs = str(locomo_audit / "fc-baseline" / "*")
    jupyter_lab.add(
        "explore.ipynb", _explore_notebook(tmp_path / "e.ipynb", runs=runs, dataset=str(locomo_path))
    )
    page = lab_page.page
    lab_page.open_notebook("explore.ipynb")
    start = time.perf_counter()
    lab_page.run_all()
    info = page.locator(f"{LAB_GRID} .dt-info").first
    info.wait_for(timeout=120_000)
    shown = time.perf_counter() - start  # kernel imports, two runs of 1,540 questions read, the grid drawn
    assert "1,540 entries" in info.inner_text()
    assert lab_page.errors() == []
    headers = page.eval_on_selector_all(f"{LAB_TABLE} thead th", "ths => ths.map(t => t.textContent.trim())")
    assert headers[:3] == ["question", "type", "haystack"] and "A vs B" in headers
    assert page.locator(".bnb-explore").count() == 0  # the static grid is the report's, not shown here
    # Sort by the question type (its sort icon).
    page.locator(f"{LAB_TABLE} thead th", has_text="type").first.locator(".dt-column-order").click()
    rows = lambda col: page.eval_on_selector_all(  # noqa: E731
        f"{LAB_TABLE} tbody tr", f"rows => rows.map(r => r.cells[{col}].textContent)"
    )
    types = rows(headers.index("type"))
    assert types == sorted(types) and types[0] == "multi-hop"
    # "A wrong, B right" in the A vs B pane: 107 questions, each one A got wrong and B right.
    page.locator(f"{LAB_GRID} .dtsp-searchPane td", has_text="A wrong, B right").first.click()
    page.wait_for_function(
        "(el) => el.innerText.includes('filtered')", arg=info.element_handle(), timeout=30_000
    )
    assert "107 entries" in info.inner_text() and "filtered from 1,540" in info.inner_text()
    assert set(rows(headers.index("A vs B"))) == {"A wrong, B right"}
    assert set(rows(headers.index("A: verdict"))) == {"incorrect"}
    SHOTS.mkdir(exist_ok=True)
    lab_page.screenshot(SHOTS / "lab-explore-grid-a-wrong-b-right.png")
    # Select the first row: the detail below the grid becomes that question's, with its gold evidence marked.
    first = page.locator(f"{LAB_TABLE} tbody tr").first
    qid = first.locator("td").first.locator("b").inner_text()
    start = time.perf_counter()
    first.locator("td").nth(1).click()
    detail = page.locator(".jp-OutputArea-output .widget-html", has_text="retrieved context").last
    page.wait_for_function(
        "([el, q]) => el.innerText.includes(q + ' ·')", arg=[detail.element_handle(), qid], timeout=30_000
    )
    opened = time.perf_counter() - start
    text = detail.inner_text()
    assert "gold evidence" in text and detail.locator(".bnb-gold").count() >= 1
    assert (
        text.count("no context retrieved") == 2
    )  # both runs' answers shown; imported runs record no retrieval
    chosen = page.locator(".widget-dropdown", has_text="question").locator("select option:checked")
    assert chosen.inner_text().replace("\xa0", " ").startswith(f"{qid} ·")  # the list follows the grid
    detail.scroll_into_view_if_needed()
    lab_page.screenshot(SHOTS / "lab-explore-grid-detail.png")
    print(
        f"JupyterLab, 2 x 1,540 questions: grid shown {shown:.1f} s after Run All, a row's detail {opened:.2f} s"
    )
    # The grid follows the explorer's filters: outcome "incorrect" leaves the questions some run got wrong.
    explorer = Explorer(runs, grid=False)
    explorer.outcomes.value = ("incorrect",)
    wrong = explorer.rows()["question_id"].n_unique()
    assert 0 < wrong < 1540
    outcome = page.locator(".widget-select-multiple", has_text="outcome").locator("select")
    outcome.select_option(["incorrect"])
    page.wait_for_function(
        "(n) => [...document.querySelectorAll('.itables_anywidget .dt-info')].some(e => e.innerText.includes(n))",
        arg=f"{wrong:,} entries",
        timeout=60_000,
    )
    assert lab_page.errors() == [] and lab_page.outside == []
