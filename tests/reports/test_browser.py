"""Reports opened in headless Chromium with no network: charts render, nothing is fetched, run text stays text."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench_nb.reports import build_report
from lab_browser import CHROMIUM_ARGS, recording_proxy

pytestmark = [pytest.mark.browser, pytest.mark.notebook]
# Chromium's own services (updater, accounts, connectivity and variations checks) live under Google's domains and
# change between Chromium versions; nothing in a report points there.
CHROMIUM_OWN = ("google.com", "googleapis.com", "gvt1.com", "gstatic.com")

FIXTURE_GLOB = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")


@pytest.fixture(scope="session")
def fixture_glob() -> str:
    return FIXTURE_GLOB


def _host(request: str) -> str:
    """The host a recorded request went to: ``CONNECT host:443`` or ``GET http://host/path``."""
    target = request.split(" ", 1)[1]
    target = target.split("://", 1)[-1]
    return target.split("/", 1)[0].rsplit(":", 1)[0]


def _browse(chromium: str, url: str, tmp: Path, proxy_port: int, *args: str) -> str:
    cmd = [
        chromium,
        "--headless",
        *CHROMIUM_ARGS,
        f"--user-data-dir={tmp / 'profile'}",
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        "--proxy-bypass-list=<-loopback>",
        "--virtual-time-budget=5000",
        *args,
        url,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    return done.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, fixture_glob: str) -> Path:
    out = tmp_path_factory.mktemp("site") / "compare.html"
    build_report("compare", {"runs": fixture_glob, "title": "Browser check"}, out)
    return out


def test_report_renders_offline_in_chromium(report: Path, tmp_path: Path, chromium: str) -> None:
    with recording_proxy() as (port, seen):
        # What Chromium asks for by itself (its own services change between versions): a blank page's requests.
        blank = tmp_path / "blank.html"
        blank.write_text("<p>blank</p>")
        _browse(chromium, blank.as_uri(), tmp_path, port, "--dump-dom")
        own_hosts = {_host(r) for r in seen}
        del seen[:]
        dom = _browse(chromium, report.as_uri(), tmp_path, port, "--dump-dom")
        shot = tmp_path / "compare.png"
        _browse(chromium, report.as_uri(), tmp_path, port, f"--screenshot={shot}", "--window-size=1280,4000")
        index = _browse(chromium, (report.parent / "index.html").as_uri(), tmp_path, port, "--dump-dom")
        control = tmp_path / "control.html"
        control.write_text('<img src="http://example.invalid/pixel.png">')
        seen_before = list(seen)
        _browse(chromium, control.as_uri(), tmp_path, port, "--dump-dom")
        control_seen = [r for r in seen[len(seen_before) :] if "example.invalid" in r]
        seen[:] = seen_before
    # Headless Chromium still calls its own services (component updater, accounts, connectivity checks) through
    # the proxy, as it does for a blank page; anything else would come from the page.
    from_page = [
        r
        for r in seen
        if _host(r) not in own_hosts
        and not any(_host(r) == h or _host(r).endswith("." + h) for h in CHROMIUM_OWN)
    ]
    assert control_seen  # the recorder does see a page's outside request
    assert from_page == []  # no request of the report left the machine
    assert dom.count("<svg") >= 6 and dom.count('class="bnb-chart"') >= 6
    assert "MemScore leaderboard" in dom and "Browser check" in dom
    # The hostile answer is text in the DOM, not an element.
    assert "<script>alert" not in dom and "&lt;script&gt;alert(" in dom and '<img src="x"' not in dom
    assert shot.is_file() and shot.stat().st_size > 50_000
    assert "compare.html" in index and "Browser check" in index


def test_compare_report_with_runaway_answers_stays_short_with_contents(
    tmp_path: Path, locomo_audit: Path, chromium_browser: Any
) -> None:
    """The two LoCoMo-audit runs hold 106k- and 71k-character chain-of-thought answers: once 116,819 px tall,
    the report folds them and is under 25,000 px, with a table of contents whose links all land."""
    out = tmp_path / "compare.html"
    build_report("compare", {"runs": str(locomo_audit / "fc-baseline" / "*")}, out, index=False)
    page = chromium_browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(out.as_uri())
        page.wait_for_timeout(3000)
        height = page.evaluate("document.documentElement.scrollHeight")
        links = page.evaluate(
            "Array.from(document.querySelectorAll('a[href^=\"#\"]')).map(a => a.getAttribute('href'))"
        )
        missing = page.evaluate(
            "(hrefs) => hrefs.filter(h => !document.getElementById(decodeURIComponent(h.slice(1))))", links
        )
        page.screenshot(path=str(tmp_path / "compare-top.png"))
        sections = page.evaluate(
            "Array.from(document.querySelectorAll('details.bnb-section')).map(d => "
            "[d.querySelector('summary h2').id, d.open, d.getBoundingClientRect().top])"
        )
        contents_top = page.evaluate(
            "document.getElementById('cell-id=contents').getBoundingClientRect().top"
        )
        folded = next(id_ for id_, is_open, _ in sections if not is_open)
        page.evaluate("(id) => { location.hash = '#' + id; }", folded)
        page.wait_for_timeout(300)
        opened = page.evaluate("(id) => document.getElementById(id).closest('details').open", folded)
    finally:
        page.close()
    assert height < 25_000, height
    assert "Contents:" in out.read_text() and len(links) >= 10 and missing == []
    # Issue 37: a one-screen summary first, then the contents; long reference sections folded, the others open,
    # every one reachable from the contents (a link to a folded one opens it).
    heads = {id_: (is_open, top) for id_, is_open, top in sections}
    # These two runs are not like for like (their answer prompts differ), so the summary opens with their
    # settings table (one row a run, ~200 px) before the leaderboard: the contents come a little below the
    # first 900 px screen; runs that are like for like get one settings line there instead.
    assert heads["Summary"][0] and heads["Summary"][1] < contents_top < 1_200, contents_top
    assert (
        not heads["Runs-and-settings"][0]
        and not heads["Uncertainty:-clustered-intervals-and-rank-intervals"][0]
    )
    assert heads["Accuracy-per-question-type"][0] and heads["Judges"][0]
    assert {f"#{id_}" for id_ in heads} <= set(links)
    assert opened
