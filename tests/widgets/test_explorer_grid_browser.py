"""The explore report's per-question grid in headless Chromium (no network), on the two LoCoMo-audit runs of
1,540 questions: sort by a column, filter to "A wrong, B right", open a question's detail, find the gold evidence
marked. Screenshots go to /tmp/bench-nb-shots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench_nb.reports import build_report

pytestmark = [pytest.mark.browser, pytest.mark.notebook]

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
