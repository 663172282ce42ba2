"""The tokens-and-cost table: memory-side cost beside answer and judge cost when a run's provider reports
its own model calls, "n/a" (not 0) for a run whose provider does not, and the one cost column otherwise."""

from __future__ import annotations

from pathlib import Path

import msgspec
import polars as pl

from bench_nb import questions_df, tables
from run_writers import question, write_run

ANSWER = {"model": "gpt-4o-mini", "calls": 1, "inputTokens": 900, "outputTokens": 40, "costUsd": 0.0002}
JUDGE = {"gpt-4o": {"model": "gpt-4o", "calls": 1, "inputTokens": 300, "outputTokens": 20, "costUsd": 0.001}}
INGEST = {"model": "gpt-4o-mini", "calls": 4, "inputTokens": 8000, "outputTokens": 800, "costUsd": 0.0168}
SEARCH = {"model": None, "calls": 0, "inputTokens": 0, "outputTokens": 0, "costUsd": 0.0}


def _run(path: Path, provider: str, memory: dict | None) -> Path:
    usage: dict = {"answer": ANSWER, "judges": JUDGE}
    if memory is not None:
        usage["memory"] = memory
    qs = [
        msgspec.structs.replace(question(f"q{i}"), benchNb={"usage": usage}, containerTag="c0")
        for i in range(4)
    ]
    return write_run(path, qs, provider=provider, bench_nb={"version": 1})


def test_memory_side_cost_shows_beside_answer_and_judges_when_a_run_reports_it(tmp_path: Path) -> None:
    infer = _run(
        tmp_path / "mem0-infer", "mem0-local", {"ingest": {**INGEST, "sharedBy": 4}, "search": SEARCH}
    )
    cloud = _run(tmp_path / "zep-run", "zep", None)
    q = questions_df([infer, cloud], backend="polars")
    table = tables.table_tokens(q)
    for header in ("answer (USD)", "judges (USD)", "memory (USD)", "total (USD)"):
        assert header in table.html
    data = {r["run_id"]: r for r in table.frame.iter_rows(named=True)}
    # four questions share the ingest: the run's memory side is the whole ingest, once
    assert data["mem0-infer"]["memory_cost_usd"] == 0.0168
    assert abs(data["mem0-infer"]["total_cost_usd"] - (4 * 0.0012 + 0.0168)) < 1e-12
    assert data["zep-run"]["memory_cost_usd"] is None and data["zep-run"]["total_cost_usd"] is None
    assert "$0.0168" in table.html and "$0.0216" in table.html
    rows = [r.split("</tr>")[0] for r in table.html.split("<tr")[1:] if "$0.0168" not in r and "<td" in r]
    assert len(rows) == 1
    row = rows[0]  # the zep run's
    # memory and total: not reported, never $0; its answer and judge cost still shown
    assert row.endswith(
        '<td class="num">$0.0008</td><td class="num">$0.0040</td><td class="num">n/a</td><td class="num">n/a</td>'
    )


def test_no_memory_side_calls_keeps_the_one_cost_column(tmp_path: Path) -> None:
    plain = _run(tmp_path / "sqlite-run", "sqlite", {"ingest": {**SEARCH, "sharedBy": 4}, "search": SEARCH})
    q = questions_df([plain], backend="polars")
    html = tables.table_tokens(q).html
    assert "cost (USD)" in html and "memory (USD)" not in html
    assert q["total_cost_usd"].to_list() == q["cost_usd"].to_list()
    assert pl.Series(q["memory_cost_usd"]).to_list() == [0.0] * 4
