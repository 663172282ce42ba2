"""Tokens and cost per question and per run: the answerer's and each LLM judge's calls, against the local
API server, whose token counts (``fake_token_count``) times the price table must be what the run records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from runner_fakes import CountingProvider, make_benchmark
from runner_llm import llm_env, llm_server

from bench_nb.models.prices import DEFAULT_PRICES
from bench_nb.runner import run_benchmark
from bench_nb.runner.usage import run_usage
from llm_server import LLMServer, default_responder, fake_token_count, request_text

__all__ = ["llm_env", "llm_server"]


def _checkpoint(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "checkpoint.json").read_text())


def _cost(model: str, n_in: int, n_out: int) -> float:
    price = DEFAULT_PRICES[model]
    return (n_in * price.input_per_mtok + n_out * price.output_per_mtok) / 1e6


def _run(tmp_path: Path, run_id: str, **kw: Any):
    return run_benchmark(
        CountingProvider(),
        make_benchmark(2, 2),
        answerer="gpt-4o-mini",
        judges="gpt-4o,f1",
        run_id=run_id,
        runs_dir=tmp_path / "runs",
        progress=False,
        **kw,
    )


def test_usage_equals_the_servers_token_counts_times_the_prices(llm_env: LLMServer, tmp_path: Path) -> None:
    server = llm_env
    flaky = "what is the red pet in house1 named?"
    replies: list[tuple[str, bool, str]] = []  # (prompt text, is a judge call, reply), as served

    def responder(path: str, body: dict[str, Any]) -> str:
        text, is_judge = request_text(body), bool(body.get("response_format"))  # judges ask for JSON
        first_verdict = is_judge and flaky in text and not any(j and flaky in t for t, j, _ in replies)
        reply = "I think it is right" if first_verdict else default_responder(path, body)
        replies.append((text, is_judge, reply))
        return reply

    server.responder = responder
    result = _run(tmp_path, "u1")
    assert (result.evaluated, result.failed) == (4, 0)
    assert len(replies) == server.count() == 9  # 4 answers, 4 verdicts, 1 verdict asked again

    # What the server counted, per question and component.
    ck = _checkpoint(result.run_dir)
    expected: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for text, is_judge, reply in replies:
        qid = next(qid for qid, q in ck["questions"].items() if q["question"] in text)
        role = "judge" if is_judge else "answer"
        expected.setdefault((qid, role), []).append((fake_token_count(text), fake_token_count(reply)))

    total_in = total_out = 0
    total_cost = 0.0
    for qid, q in ck["questions"].items():
        usage = q["benchNb"]["usage"]
        assert set(usage) == {"answer", "judges"} and set(usage["judges"]) == {"gpt-4o"}  # f1: no model
        ((a_in, a_out),) = expected[(qid, "answer")]
        assert usage["answer"] == {
            "model": "gpt-4o-mini",
            "calls": 1,
            "inputTokens": a_in,
            "outputTokens": a_out,
            "costUsd": pytest.approx(_cost("gpt-4o-mini", a_in, a_out)),
            "cached": False,
        }
        judge_calls = expected[(qid, "judge")]
        j_in, j_out = sum(c[0] for c in judge_calls), sum(c[1] for c in judge_calls)
        assert usage["judges"]["gpt-4o"] == {
            "model": "gpt-4o",
            "calls": 2 if flaky in q["question"] else 1,  # the unreadable verdict was asked again
            "inputTokens": j_in,
            "outputTokens": j_out,
            "costUsd": pytest.approx(_cost("gpt-4o", j_in, j_out)),
            "cached": False,
        }
        total_in += a_in + j_in
        total_out += a_out + j_out
        total_cost += _cost("gpt-4o-mini", a_in, a_out) + _cost("gpt-4o", j_in, j_out)

    run = ck["benchNb"]["usage"]
    assert run["total"] == {
        "calls": server.count(),
        "cachedCalls": 0,
        "inputTokens": total_in,
        "outputTokens": total_out,
        "costUsd": pytest.approx(total_cost),
        "unpricedCalls": 0,
    }
    assert run["total"]["inputTokens"] == sum(fake_token_count(request_text(c.body)) for c in server.calls)
    assert run["answer"]["calls"] == 4 and run["judges"]["gpt-4o"]["calls"] == 5
    assert set(run["judges"]) == {"gpt-4o"}

    # The same run from the response cache: no HTTP call, the same tokens and list-price cost, marked cached.
    calls = server.count()
    again = _run(tmp_path, "u2")
    assert server.count() == calls
    run2 = _checkpoint(again.run_dir)["benchNb"]["usage"]
    assert run2["total"]["cachedCalls"] == run2["total"]["calls"] == calls
    assert run2["total"]["costUsd"] == pytest.approx(run["total"]["costUsd"])
    assert all(
        q["benchNb"]["usage"]["answer"]["cached"] for q in _checkpoint(again.run_dir)["questions"].values()
    )


def test_offline_components_record_no_usage(tmp_path: Path) -> None:
    result = run_benchmark(
        CountingProvider(), make_benchmark(1, 3), runs_dir=tmp_path / "runs", run_id="r", progress=False
    )
    ck = _checkpoint(result.run_dir)
    assert "usage" not in ck["benchNb"]
    assert not any("usage" in q["benchNb"] for q in ck["questions"].values())


def test_run_usage_sums_and_keeps_unknown_prices_apart() -> None:
    priced = {"calls": 1, "inputTokens": 10, "outputTokens": 2, "costUsd": 0.5, "cached": True}
    unpriced = {"calls": 2, "inputTokens": 7, "outputTokens": 1, "costUsd": None, "cached": False}
    extras = [
        {"usage": {"answer": priced, "judges": {"j": unpriced}}},
        {"usage": {"answer": priced}},
        {"normType": "single-hop"},
        None,
    ]
    assert run_usage(extras) == {
        "answer": {
            "calls": 2,
            "cachedCalls": 2,
            "inputTokens": 20,
            "outputTokens": 4,
            "costUsd": 1.0,
            "unpricedCalls": 0,
        },
        "judges": {
            "j": {
                "calls": 2,
                "cachedCalls": 0,
                "inputTokens": 7,
                "outputTokens": 1,
                "costUsd": 0.0,
                "unpricedCalls": 2,
            }
        },
        "total": {
            "calls": 4,
            "cachedCalls": 2,
            "inputTokens": 27,
            "outputTokens": 5,
            "costUsd": 1.0,
            "unpricedCalls": 2,
        },
    }
    assert run_usage([{"normType": "x"}, None]) is None
