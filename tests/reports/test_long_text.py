"""Long text never breaks a page: a table cell longer than ``LONG_TEXT`` shows its start and folds the rest."""

from __future__ import annotations

from bench_nb.text import Cell, esc, render

LONG_TEXT = 400


def test_a_runaway_answer_folds_in_a_table_cell() -> None:
    answer = "Let me think step by step. <b>" + "x " * 53_000  # a 106k-character chain of thought
    html = render(["answer"], [[Cell(answer, "text")]])
    summary = html.split("<summary>", 1)[1].split("</summary>", 1)[0]
    assert "<details" in html and f"{len(answer):,} characters: open" in summary
    assert len(summary) < LONG_TEXT + 100  # what shows before a click
    assert "<b>" not in html.split("<details", 1)[1]  # escaped, folded or not
    assert esc(answer) in html.split("</summary>", 1)[1]  # the whole text is one click away
    short = render(["answer"], [["Twice."]])
    assert "<details" not in short and "Twice." in short
