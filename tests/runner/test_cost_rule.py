"""One cost rule for every cost column (frames.usage): a part that makes no model call costs 0 (known); null
only means unknown (an unpriced call, a component or provider that does not say what it called). Checked on
real runs, then through the budget curve, the Pareto frontier and its table."""

from __future__ import annotations

import warnings
from pathlib import Path

import msgspec
import pytest
from runner_fakes import make_benchmark

from bench_nb import questions_df
from bench_nb.metrics.budget import budget_curve
from bench_nb.metrics.pareto import compared_objectives, pareto_frontier
from bench_nb.runner import run_benchmark
from run_writers import question, write_run

LLM = {"answerer": "gpt-4o-mini", "judges": ["gpt-4o", "f1"]}
ANSWER = {"model": "gpt-4o-mini", "calls": 1, "inputTokens": 900, "outputTokens": 40, "costUsd": 0.0002}
JUDGE = {"model": "gpt-4o", "calls": 1, "inputTokens": 300, "outputTokens": 20, "costUsd": 0.001}


def _offline_run(tmp_path: Path, provider: object = "sqlite", run_id: str = "offline") -> Path:
    result = run_benchmark(
        provider,  # type: ignore[arg-type]
        make_benchmark(2, 3),
        answerer="extractive",
        judges=["contains", "f1"],
        runs_dir=tmp_path / "runs",
        run_id=run_id,
        progress=False,
    )
    return result.run_dir


def _llm_run(tmp_path: Path, run_id: str = "llm", memory: dict | None = None) -> Path:
    usage = {"answer": ANSWER, "judges": {"gpt-4o": JUDGE}} | ({"memory": memory} if memory else {})
    qs = [msgspec.structs.replace(question(f"q{i}"), benchNb={"usage": usage}) for i in range(4)]
    return write_run(tmp_path / run_id, qs, run_id=run_id, provider="sqlite", bench_nb={"version": 1, **LLM})


def test_an_offline_native_run_costs_zero_in_every_cost_column(tmp_path: Path) -> None:
    q = questions_df(_offline_run(tmp_path), backend="polars")
    for column in ("answer_cost_usd", "judge_cost_usd", "cost_usd", "memory_cost_usd", "total_cost_usd"):
        assert q[column].to_list() == [0.0] * len(q), column
    assert q["answer_input_tokens"].null_count() == len(q)  # no call: no tokens to count
    # both ways of asking for cost give the curve at budget 0 with the run's accuracy, and no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for by in ("cost", "cost_usd"):
            curve = budget_curve(q, by=by, backend="polars")
            assert curve["budget"].to_list() == [0.0] and curve["accuracy"].to_list() == [1.0], by


def test_unknown_stays_null_known_free_is_zero(tmp_path: Path) -> None:
    def run(name: str, bench_nb: dict | None, usage: dict | None = None) -> dict:
        extra = None if usage is None else {"usage": usage}
        q = msgspec.structs.replace(question("q"), benchNb=extra)
        return questions_df(write_run(tmp_path / name, [q], bench_nb=bench_nb), backend="polars").row(
            0, named=True
        )

    # an imported run (no benchNb) and a run that does not name its components: unknown
    assert run("imported", None)["cost_usd"] is None
    assert run("unnamed", {"version": 1})["cost_usd"] is None
    # the extractive answerer with deterministic judges: known to cost nothing
    free = run("free", {"version": 1, "answerer": "extractive", "judges": ["contains", "f1@0.6"]})
    assert (free["answer_cost_usd"], free["judge_cost_usd"], free["cost_usd"]) == (0.0, 0.0, 0.0)
    assert free["total_cost_usd"] is None  # the provider did not report its memory side
    # an LLM judge that left no entry (its call failed, or it is not recorded): unknown, never 0
    half = run("half", {"version": 1, **LLM}, {"answer": ANSWER})
    assert half["answer_cost_usd"] == pytest.approx(0.0002)
    assert half["judge_cost_usd"] is None and half["cost_usd"] is None
    # the LLM answerer priced, the f1 judge free, the LLM judge priced
    full = run("full", {"version": 1, **LLM}, {"answer": ANSWER, "judges": {"gpt-4o": JUDGE}})
    assert full["cost_usd"] == pytest.approx(0.0012)


def test_offline_runs_are_comparable_on_the_frontier_beside_an_llm_run(tmp_path: Path) -> None:
    from bench_nb.tables.uncertainty import table_pareto

    offline = _offline_run(tmp_path)
    llm = _llm_run(tmp_path)
    q = questions_df([offline, llm], backend="polars")
    out = {r["run_id"]: r for r in pareto_frontier(q, backend="polars").iter_rows(named=True)}
    assert out["offline"]["missing"] is None and out["offline"]["on_frontier"] is True
    assert out["offline"]["cost_usd"] == 0.0
    assert "not comparable: no" not in table_pareto(q).html


def test_budget_by_cost_is_decided_by_the_runs_that_have_a_cost(tmp_path: Path) -> None:
    # an LLM run whose provider reports its memory side, beside an imported run that records no cost: the
    # import is left out (one warning) and the total, memory included, is what the LLM run is charged
    memory = {
        "search": {"model": "gpt-4o-mini", "calls": 1, "inputTokens": 10, "outputTokens": 1, "costUsd": 0.01}
    }
    llm = _llm_run(tmp_path, memory=memory)
    imported = write_run(tmp_path / "imported", [question(f"q{i}") for i in range(4)], run_id="imported")
    q = questions_df([llm, imported], backend="polars")
    with pytest.warns(UserWarning) as caught:
        curve = budget_curve(q, by="cost", budgets=[0.005, 0.02], backend="polars")
    assert [str(w.message) for w in caught] == [
        "budget_curve by cost: left out ['imported'], which record no total_cost_usd"
    ]
    acc = dict(zip(curve["budget"], curve["accuracy"], strict=True))
    assert acc == {0.005: 0.0, 0.02: 1.0}  # 0.0112 a question: over 0.005 only with the memory side counted


def test_the_frontier_compares_total_cost_when_every_run_reports_its_memory_side(tmp_path: Path) -> None:
    # a custom provider reporting its calls (providers.usage.report_model_call) beside plain sqlite (calls no
    # model, reports 0): both report their memory side, so the frontier compares total_cost_usd
    from test_memory_usage import MeteredProvider

    from bench_nb.tables.uncertainty import table_pareto

    metered = _offline_run(tmp_path, MeteredProvider(), "metered")
    plain = _offline_run(tmp_path, "sqlite", "plain")
    q = questions_df([metered, plain], backend="polars")
    frame = pareto_frontier(q, backend="polars")
    out = {r["run_id"]: r for r in frame.iter_rows(named=True)}
    assert out["metered"]["total_cost_usd"] > 0 and out["plain"]["total_cost_usd"] == 0.0
    assert out["metered"]["cost_usd"] == out["plain"]["cost_usd"] == 0.0
    assert compared_objectives(frame.to_dicts())[-1] == "total_cost_usd"
    assert "cost / question (with memory)" in table_pareto(q).html


def test_the_cost_curve_is_drawn_only_when_two_runs_have_a_cost_and_one_is_above_zero(tmp_path: Path) -> None:
    from bench_nb.metrics.budget import why_no_cost_curve

    offline, other = _offline_run(tmp_path), _offline_run(tmp_path, run_id="offline-2")
    llm = _llm_run(tmp_path)
    imported = write_run(tmp_path / "imported", [question(f"q{i}") for i in range(4)], run_id="imported")
    # every known cost is $0: a curve at $0 says nothing
    why = why_no_cost_curve(questions_df([offline, other], backend="polars"))
    assert why is not None and "every run with a known cost costs $0" in why
    # one run with a cost beside one that records none
    assert why_no_cost_curve(questions_df([llm, imported], backend="polars")) == (
        "Cost: no curve: only llm records a cost, and a curve compares two or more runs."
    )
    why = why_no_cost_curve(questions_df([imported], backend="polars"))
    assert why is not None and why.startswith("Cost: no curve: no run records a cost")
    # an offline run at $0 beside an LLM run above it: drawn
    assert why_no_cost_curve(questions_df([offline, llm], backend="polars")) is None


def test_the_compare_report_draws_the_cost_curve_beside_latency_and_tokens(tmp_path: Path) -> None:
    from bench_nb.reports import build_report

    runs = [str(_offline_run(tmp_path)), str(_llm_run(tmp_path))]
    out = tmp_path / "compare.html"
    build_report("compare", {"runs": runs, "title": "cost"}, out, index=False)
    # the section's own heading, after the table of contents' link of the same name
    section = out.read_text(encoding="utf-8").split("Accuracy under a budget")[-1].split("Why answers", 1)[0]
    assert "Accuracy under a cost budget" in section and "cost budget per question (USD)" in section
    assert "Cost: no curve" not in section
