"""Memory-side usage: a provider's own model calls during ingest and search, recorded per question
(``benchNb.usage.memory``), summed per run with each container's ingest counted once, and read into the
questions frame's ``memory_*`` and ``total_cost_usd`` columns."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from runner_fakes import CountingProvider, Flaky, make_benchmark

from bench_nb import questions_df
from bench_nb.models.prices import DEFAULT_PRICES
from bench_nb.providers.usage import report_model_call
from bench_nb.records import IngestResult, SearchHit, Session
from bench_nb.runformat.journal import merge_bench_nb
from bench_nb.runner import RetryPolicy, run_benchmark

FAST_RETRY = RetryPolicy(max_attempts=3, initial_s=0.001, max_s=0.002, jitter_s=0.001)


def _cost(n_in: int, n_out: int) -> float:
    price = DEFAULT_PRICES["gpt-4o-mini"]
    return (n_in * price.input_per_mtok + n_out * price.output_per_mtok) / 1e6


class MeteredProvider(CountingProvider):
    """Reports one extraction call per session ingested (1000 in, 100 out) and one call per search (50 in,
    5 out); ``flaky_ingests`` ingests report a call and then fail with a retryable error."""

    reports_usage = True

    def __init__(self, flaky_ingests: int = 0, model: str = "gpt-4o-mini") -> None:
        super().__init__("metered")
        self.flaky_ingests = flaky_ingests
        self.model = model

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        for _ in sessions:
            report_model_call(self.model, 1000, 100)
        if self.flaky_ingests:
            self.flaky_ingests -= 1
            raise Flaky("extraction endpoint busy")
        return super().ingest(container, sessions)

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        report_model_call(self.model, 50, 5)
        return super().search(container, query, k)


def _run(tmp_path: Path, provider: Any, run_id: str = "r") -> dict[str, Any]:
    result = run_benchmark(
        provider,
        make_benchmark(2, 3),
        runs_dir=tmp_path / "runs",
        run_id=run_id,
        progress=False,
        retry=FAST_RETRY,
    )
    return {"dir": result.run_dir, "ck": json.loads((result.run_dir / "checkpoint.json").read_text())}


def test_ingest_and_search_calls_are_recorded_per_question_and_summed_once_per_container(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path, MeteredProvider(flaky_ingests=1))
    ck = run["ck"]
    q = ck["questions"]["h0-q1"]["benchNb"]["usage"]["memory"]
    # The whole ingest of the haystack (two sessions: two calls), unsplit, with how many questions share it;
    # the failed first attempt's call is not counted (only the kept attempt's calls are).
    assert q["ingest"] == {
        "model": "gpt-4o-mini",
        "calls": 2,
        "inputTokens": 2000,
        "outputTokens": 200,
        "costUsd": pytest.approx(_cost(2000, 200)),
        "cached": False,
        "sharedBy": 3,
    }
    assert q["search"]["calls"] == 1 and q["search"]["costUsd"] == pytest.approx(_cost(50, 5))
    memory = ck["benchNb"]["usage"]["memory"]
    assert memory["ingest"]["calls"] == 4  # two containers, each counted once (not once per question)
    assert memory["search"]["calls"] == 6
    assert memory["total"]["inputTokens"] == 2 * 2000 + 6 * 50
    assert memory["total"]["costUsd"] == pytest.approx(2 * _cost(2000, 200) + 6 * _cost(50, 5))
    assert "total" not in ck["benchNb"]["usage"]  # the run-level total stays answer + judges: none here

    df = questions_df(run["dir"], backend="polars")
    row = df.filter(df["question_id"] == "h0-q1").row(0, named=True)
    assert row["memory_calls"] == pytest.approx(2 / 3 + 1)
    assert row["memory_input_tokens"] == pytest.approx(2000 / 3 + 50)
    assert row["memory_cost_usd"] == pytest.approx(_cost(2000, 200) / 3 + _cost(50, 5))
    # the shares add up to the run's memory-side total
    assert df["memory_cost_usd"].sum() == pytest.approx(memory["total"]["costUsd"])
    assert df["memory_calls"].sum() == pytest.approx(10)
    # offline answerer and judges call no model: they cost 0, so the total is the memory side alone
    assert row["cost_usd"] == 0.0
    assert row["total_cost_usd"] == pytest.approx(row["memory_cost_usd"])


def test_a_provider_that_calls_no_model_reports_zero_and_one_that_does_not_say_reports_null(
    tmp_path: Path,
) -> None:
    sqlite = _run(tmp_path, "sqlite", "s")
    entry = sqlite["ck"]["questions"]["h0-q0"]["benchNb"]["usage"]["memory"]["search"]
    assert entry["calls"] == 0 and entry["costUsd"] == 0.0
    df = questions_df(sqlite["dir"], backend="polars")
    assert df["memory_cost_usd"].to_list() == [0.0] * 6 and df["total_cost_usd"].to_list() == [0.0] * 6

    silent = _run(tmp_path, CountingProvider(), "c")  # declares nothing: its own calls are unknown
    assert "usage" not in silent["ck"]["benchNb"]
    df = questions_df(silent["dir"], backend="polars")
    for column in ("memory_calls", "memory_input_tokens", "memory_cost_usd", "total_cost_usd"):
        assert df[column].null_count() == 6, column


def test_an_unpriced_model_leaves_the_memory_cost_and_the_total_unknown(tmp_path: Path) -> None:
    run = _run(tmp_path, MeteredProvider(model="house-model-7"))
    assert run["ck"]["benchNb"]["usage"]["memory"]["total"]["unpricedCalls"] == 10
    df = questions_df(run["dir"], backend="polars")
    assert df["memory_calls"].sum() == pytest.approx(10)
    assert df["memory_cost_usd"].null_count() == 6 and df["total_cost_usd"].null_count() == 6


def test_ingest_and_search_entries_recorded_by_two_phases_both_stay() -> None:
    ingest = {"usage": {"memory": {"ingest": {"calls": 2, "sharedBy": 3}}}}
    search = {"usage": {"memory": {"search": {"calls": 1}}}}
    merged = merge_bench_nb(merge_bench_nb({"usage": {"answer": {"calls": 1}}}, ingest), search)
    assert merged == {
        "usage": {
            "answer": {"calls": 1},
            "memory": {"ingest": {"calls": 2, "sharedBy": 3}, "search": {"calls": 1}},
        }
    }
    # a redone ingest replaces the ingest entry only
    again = merge_bench_nb(merged, {"usage": {"memory": {"ingest": {"calls": 5, "sharedBy": 3}}}})
    assert again is not None and again["usage"]["memory"]["search"] == {"calls": 1}
    assert again["usage"]["memory"]["ingest"]["calls"] == 5
