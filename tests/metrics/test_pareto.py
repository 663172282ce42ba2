"""The Pareto frontier on one common set of objectives (issue 27, item 5): a run lacking one is not
comparable and named, dominance never cycles, and a run with no scored answer never dominates."""

from __future__ import annotations

import itertools
import random

import polars as pl
from metric_frames import frame, row

from bench_nb.metrics.pareto import OBJECTIVES, compared_objectives, dominates, pareto_frontier


def _run(run_id: str, correct: list[bool | None], **costs: float | None) -> list[dict]:
    """A run of 10 questions in 10 haystacks; ``costs`` set search_ms, prompt/context tokens and cost_usd
    on every question (None: not recorded). ``correct`` None: unscored."""
    out = []
    for i, c in enumerate(correct):
        values = {
            "run_id": run_id,
            "provider": run_id,
            "question_id": f"q{i}",
            "haystack_id": f"h{i}",
            "search_ms": costs.get("search_ms"),
            "context_tokens": costs.get("context_tokens"),
            "prompt_tokens": costs.get("context_tokens"),
            "cost_usd": costs.get("cost_usd"),
            "total_cost_usd": costs.get("total_cost_usd"),
        }
        if c is None:
            out.append(row(None, unscored=True, **values))
        else:
            out.append(row(c, **values))
    return out


SEVEN = [True] * 7 + [False] * 3


def test_runs_missing_different_costs_are_not_comparable_and_named_not_a_cycle() -> None:
    # Three runs at accuracy 0.7, each missing a different cost: compared pairwise on what both had, each
    # dominated the next (a cycle) and the frontier was empty.
    q = frame(
        *_run("a", SEVEN, search_ms=100.0, context_tokens=None, cost_usd=0.02),
        *_run("b", SEVEN, search_ms=None, context_tokens=500, cost_usd=0.01),
        *_run("c", SEVEN, search_ms=50.0, context_tokens=900, cost_usd=None),
        *_run("d", SEVEN, search_ms=200.0, context_tokens=800, cost_usd=0.03),
    )
    out = {r["run_id"]: r for r in pareto_frontier(q, backend="polars").iter_rows(named=True)}
    assert {k: out[k]["missing"] for k in "abcd"} == {
        "a": "context_tokens",
        "b": "search_ms",
        "c": "cost_usd",
        "d": None,
    }
    assert [out[k]["on_frontier"] for k in "abcd"] == [None, None, None, True]
    assert all(out[k]["dominated_by"] == "" for k in "abcd")


def test_a_run_with_no_scored_answer_never_dominates() -> None:
    # Every answer of "cheap" unscored: it has no accuracy, so it cannot dominate on cost alone.
    q = frame(
        *_run("good", SEVEN, search_ms=100.0, context_tokens=500, cost_usd=0.02),
        *_run("cheap", [None] * 10, search_ms=10.0, context_tokens=50, cost_usd=0.001),
    )
    out = {r["run_id"]: r for r in pareto_frontier(q, backend="polars").iter_rows(named=True)}
    assert out["good"]["on_frontier"] is True and out["good"]["dominated_by"] == ""
    # MemScore's latency and tokens are over scored answers too: it has none of them
    assert out["cheap"]["on_frontier"] is None
    assert out["cheap"]["missing"] == "accuracy, search_ms, context_tokens"


def test_a_cost_no_run_records_is_left_out_and_dominance_follows_the_rest() -> None:
    q = frame(
        *_run("a", SEVEN, search_ms=100.0, context_tokens=500),
        *_run("b", [True] * 6 + [False] * 4, search_ms=120.0, context_tokens=500),
        *_run("c", [True] * 9 + [False], search_ms=900.0, context_tokens=400),
    )
    out = {r["run_id"]: r for r in pareto_frontier(q, backend="polars").iter_rows(named=True)}
    assert out["b"]["dominated_by"] == "a" and out["b"]["on_frontier"] is False
    assert out["a"]["on_frontier"] and out["c"]["on_frontier"]  # a trade-off
    assert all(r["missing"] is None for r in out.values())


def test_dominance_never_cycles_and_a_comparable_run_is_always_on_the_frontier() -> None:
    rng = random.Random(27)
    for _ in range(300):
        rows = [
            {k: (None if rng.random() < 0.2 else float(rng.randint(0, 3))) for k in OBJECTIVES}
            for _ in range(rng.randint(2, 6))
        ]
        objectives = compared_objectives(rows)
        n = len(rows)
        edge = [[dominates(rows[i], rows[j], objectives) for j in range(n)] for i in range(n)]
        for i, j in itertools.permutations(range(n), 2):
            assert not (edge[i][j] and edge[j][i])
        for i, j, k in itertools.permutations(range(n), 3):
            if edge[i][j] and edge[j][k]:
                assert edge[i][k]  # transitive, so no cycle of any length
        comparable = [i for i in range(n) if all(rows[i][k] is not None for k in objectives)]
        if comparable:
            assert any(not any(edge[j][i] for j in range(n)) for i in comparable)


def test_pareto_frontier_frame_has_the_missing_column_in_pandas_too() -> None:
    q = frame(*_run("a", SEVEN, search_ms=1.0, context_tokens=2))
    pd_out = pareto_frontier(q)
    assert list(pd_out.columns)[-3:] == ["on_frontier", "dominated_by", "missing"]
    assert pl.from_pandas(pd_out)["on_frontier"].to_list() == [True]


def test_the_memory_sides_cost_counts_when_every_run_reports_it() -> None:
    # a answers cheaply but its memory system spends on ingestion; b answers dearer and spends nothing itself
    a = _run("a", SEVEN, search_ms=100.0, context_tokens=500, cost_usd=0.001, total_cost_usd=0.02)
    b = _run("b", SEVEN, search_ms=100.0, context_tokens=500, cost_usd=0.002, total_cost_usd=0.002)
    out = {r["run_id"]: r for r in pareto_frontier(frame(*a, *b), backend="polars").iter_rows(named=True)}
    assert out["a"]["dominated_by"] == "b" and out["b"]["on_frontier"]  # the total decides
    assert out["a"]["total_cost_usd"] == 0.02 and out["a"]["cost_usd"] == 0.001
    # one run without a reported memory side: answer and judge cost for all (no run charged for it alone)
    z = _run("z", SEVEN, search_ms=100.0, context_tokens=500, cost_usd=0.003, total_cost_usd=None)
    out = {r["run_id"]: r for r in pareto_frontier(frame(*a, *b, *z), backend="polars").iter_rows(named=True)}
    assert out["b"]["dominated_by"] == "a" and out["z"]["dominated_by"] == "a, b"
    assert compared_objectives([out["a"], out["z"]])[-1] == "cost_usd"
