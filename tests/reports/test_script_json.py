"""JSON a report carries in ``<script>`` elements (ipywidgets' state and views, which nbconvert writes) stays
inside them whatever the run's text: a question holding ``<!--<script`` and ``</script>`` neither ends the
element nor hides the end of the page (``text.json_in_script``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench_nb.text import json_in_script

EVIL = "Evil <!--<script question </script> end & more"  # no "-->" to close the comment
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def test_json_in_script_decodes_to_the_same_value_with_no_angle_bracket_or_ampersand() -> None:
    value = {"q": [EVIL, "<SCRIPT>", "</Script >", "a<b>c&d", "\u2028"], "<key>": "x"}
    text = json_in_script(json.dumps(value, ensure_ascii=False))
    assert not set("<>&") & set(text)
    assert json.loads(text) == value


_SCRIPT_START = re.compile(r"<script\b[^>]*>", re.I)
_SCRIPT_TOKENS = re.compile(r"<!--|-->|</?script(?=[\s/>])", re.I)


def _script_end(page: str, start: int) -> int | None:
    """Where the script element whose text begins at ``start`` really ends (its end tag), by HTML's script data
    states (as far as ``<!--``, ``-->``, ``<script`` and ``</script`` move them); None: it runs to the end of the
    page. After ``<!--`` the text is "escaped", where ``<script`` makes it "double escaped": there a
    ``</script`` only steps back to "escaped", and the element's own end tag no longer ends it."""
    state = "data"
    for m in _SCRIPT_TOKENS.finditer(page, start):
        token = m.group().lower()
        if token == "</script" and state != "double":
            return m.start()
        if token == "</script" or (token == "<!--" and state == "data"):
            state = "escaped"
        elif token == "<script" and state == "escaped":
            state = "double"
        elif token == "-->":
            state = "data"
    return None


def _scripts(page: str) -> list[tuple[str, str | None]]:
    """Every script element of the page as the HTML parser reads it: (start tag, text), text None for one that
    swallows the rest of the page."""
    found: list[tuple[str, str | None]] = []
    pos = 0
    while m := _SCRIPT_START.search(page, pos):
        end = _script_end(page, m.end())
        found.append((m.group(), None if end is None else page[m.end() : end]))
        if end is None:
            break
        pos = end
    return found


@pytest.fixture(scope="module")
def evil_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The explore report of a run whose first question holds ``<!--<script`` and ``</script>``."""
    from bench_nb.reports import build_report
    from bench_nb.runner import run_benchmark

    tmp = tmp_path_factory.mktemp("evil")
    run = run_benchmark("sqlite", "sample", limit=3, runs_dir=tmp, run_id="r", progress=False).run_dir
    checkpoint = json.loads((run / "checkpoint.json").read_text(encoding="utf-8"))
    next(iter(checkpoint["questions"].values()))["question"] = EVIL
    (run / "checkpoint.json").write_text(json.dumps(checkpoint), encoding="utf-8")
    out = tmp / "explore.html"
    build_report("explore", {"runs": str(run)}, out, index=False)
    return out


def _labels(state: dict[str, Any]) -> list[str]:
    """Every option label in ipywidgets' state (the explorer's question list shows each question's text)."""
    return [
        label
        for model in state["state"].values()
        for label in model.get("state", {}).get("_options_labels", [])
    ]


@pytest.mark.notebook
def test_a_question_opening_a_comment_and_a_script_does_not_hide_the_end_of_the_page(evil_page: Path) -> None:
    """nbconvert escaped only ``/`` in the widget state's JSON: the question's ``<!--<script`` put the parser in
    the "double escaped" state, so the element's own ``</script>`` did not end it and the rest of the page
    became its text (and its JSON no longer decoded)."""
    page = evil_page.read_text(encoding="utf-8")
    scripts = _scripts(page)
    assert [tag for tag, text in scripts if text is None] == []  # every element ends where it was written
    assert page[page.rindex("</script>") :].split() == ["</script>", "</html>"]
    assert (
        _SCRIPT_START.search(page, page.rindex("</script>")) is None
    )  # nothing after the last one is script
    json_texts = {tag: text for tag, text in scripts if "+json" in tag}
    assert f'<script type="{WIDGET_STATE}">' in json_texts
    for text in json_texts.values():
        json.loads(text or "")  # each decodes, as the page wrote it
    state = json.loads(json_texts[f'<script type="{WIDGET_STATE}">'] or "")
    assert any(label.endswith(EVIL) for label in _labels(state))  # the same text
    assert page.count("class='bnb-detail'") == 3  # every question's detail is there, the evil one's too


@pytest.mark.browser
@pytest.mark.notebook
def test_the_page_in_a_browser_keeps_its_elements_and_the_widget_state_decodes(
    evil_page: Path, chromium_browser: Any
) -> None:
    """Chromium reads the page as the test above does: the widget state's text is its JSON alone (it was the JSON
    and the rest of the page, which JSON.parse refused)."""
    page = chromium_browser.new_page()
    page.goto(evil_page.as_uri())
    state_text = page.eval_on_selector(f'script[type="{WIDGET_STATE}"]', "s => s.textContent")
    assert any(label.endswith(EVIL) for label in _labels(json.loads(state_text)))
    # the widget state is the page's last element: nothing after it, and every detail before it is there
    assert page.evaluate("document.body.lastElementChild.type") == WIDGET_STATE
    assert page.locator("section.bnb-detail").count() == 3
    page.close()
