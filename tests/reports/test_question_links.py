"""Links from the compare report to a question's detail in the explore report built beside it
(``explore.html#q=<question id>``): from the outcome matrix's cells, the disputed questions and the "why answers
were wrong" rows; without an explore report of the same runs beside it the page says so and links nowhere. The
browser test clicks a link in the compare report and lands on that question's detail."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bench_nb.reports import build_report

pytestmark = pytest.mark.notebook

FIXTURES = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")
SHOTS = Path("/tmp/bench-nb-shots")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """explore.html, then compare.html beside it (the order `bench-nb demo` builds them in)."""
    out = tmp_path_factory.mktemp("site")
    build_report("explore", {"runs": FIXTURES}, out / "explore.html")  # index.json: the runs it shows
    build_report("compare", {"runs": FIXTURES}, out / "compare.html", index=False)
    return out


def _links(page: str) -> list[str]:
    return re.findall(r'href="(explore\.html#q=[^"]+)"', page)


def test_the_compare_report_links_each_question_to_its_detail_in_the_explore_report(site: Path) -> None:
    page = (site / "compare.html").read_text()
    explore = (site / "explore.html").read_text()
    matrix = page[page.index("Outcome per question and run") - 20_000 :]
    assert re.search(r'<a xlink:href="explore\.html#q=conv-[0-9]+-q[0-9]+"', page), "outcome matrix cells"
    assert "https://vega.github.io" not in matrix  # the links stay relative to the page
    assert "click a cell for its question" in matrix
    disputed = page[page.index("Disputed questions") :]
    assert _links(disputed), "disputed questions rows"
    failures = page[page.index("Why answers were wrong</caption>") - 3000 :]
    assert "e.g. question" in failures and _links(failures), "why answers were wrong rows"
    # every link names a question whose detail the explore report holds
    for href in set(_links(page)):
        anchor = href.split("#", 1)[1]
        assert f"id='{anchor}'" in explore, anchor  # the explorer's HTML as it displayed it
    assert "No explore report" not in page


def test_without_an_explore_report_beside_it_the_page_says_so_and_links_nowhere(tmp_path: Path) -> None:
    built = build_report("compare", {"runs": FIXTURES}, tmp_path / "compare.html", index=False)
    page = built.path.read_text()
    assert "explore.html#q=" not in page
    assert "No explore report of these runs (explore.html) beside this report" in page


def test_the_compare_report_linked_to_an_explore_report_of_other_runs(tmp_path: Path) -> None:
    """An explore report beside the compare report that shows other runs (index.json says which) is not linked:
    its details would show other runs' answers. The page says there is no explore report of these runs."""
    one_run = str(Path(FIXTURES).parent / "synthetic-sqlite")
    build_report("explore", {"runs": one_run}, tmp_path / "explore.html")
    page = build_report(
        "compare", {"runs": FIXTURES}, tmp_path / "compare.html", index=False
    ).path.read_text()
    assert "explore.html#q=" not in page
    assert "No explore report of these runs (explore.html) beside this report" in page


@pytest.mark.browser
def test_a_click_in_the_compare_report_lands_on_the_questions_detail(
    site: Path, chromium_browser: Any, browser_proxy: tuple[int, list[str]]
) -> None:
    page = chromium_browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((site / "compare.html").as_uri())
    link = page.locator("table.bnb-table:has(caption:text-matches('Disputed questions')) a").first
    qid = link.inner_text()
    link.click()
    page.wait_for_url(re.compile(r"explore\.html#q="), timeout=30_000)
    detail = page.locator(".bnb-detail:target")
    detail.wait_for(timeout=30_000)
    assert detail.is_visible() and f"{qid} ·" in detail.inner_text()
    assert detail.locator("text=verdicts:").count() == 3  # each of the three runs' answer
    top = page.evaluate("() => document.querySelector('.bnb-detail:target').getBoundingClientRect().top")
    assert 0 <= top < 900, top  # scrolled to it
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "compare-link-to-detail.png"))
    # and from a cell of the outcome matrix (an SVG link)
    page.goto((site / "compare.html").as_uri())
    cell = page.locator("figure.bnb-chart a").first
    href = cell.get_attribute("xlink:href") or cell.get_attribute("href")
    assert href and href.startswith("explore.html#q=")
    cell.click()
    page.wait_for_url(re.compile(re.escape(href) + "$"), timeout=30_000)
    page.locator(".bnb-detail:target").wait_for(timeout=30_000)
    assert errors == []
