"""Token and cost usage recorded by LLM answerers and judges reaches questions_df."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from bench_nb import questions_df
from run_writers import question, write_run


def _with_usage(qid: str, usage: dict | None):
    q = question(qid)
    return msgspec.structs.replace(q, benchNb=None if usage is None else {"usage": usage})


def test_usage_columns_sum_answer_and_judges_and_stay_null_when_unpriced_or_offline(tmp_path: Path) -> None:
    answer = {"model": "gpt-4o-mini", "calls": 1, "inputTokens": 900, "outputTokens": 40, "costUsd": 0.000159}
    judges = {
        "gpt-4o": {"calls": 2, "inputTokens": 700, "outputTokens": 60, "costUsd": 0.00235},
        "f-local": {"calls": 1, "inputTokens": 10, "outputTokens": 5, "costUsd": None},
    }
    run = write_run(
        tmp_path / "r",
        [
            _with_usage("priced", {"answer": answer, "judges": {"gpt-4o": judges["gpt-4o"]}}),
            _with_usage("unpriced-judge", {"answer": answer, "judges": judges}),
            _with_usage("offline", None),
        ],
        bench_nb={"version": 1},
    )
    df = questions_df(run, backend="polars").sort("question_id")
    rows = {r["question_id"]: r for r in df.iter_rows(named=True)}
    priced = rows["priced"]
    assert priced["answer_input_tokens"] == 900 and priced["answer_output_tokens"] == 40
    assert priced["answer_cost_usd"] == pytest.approx(0.000159)
    assert priced["judge_cost_usd"] == pytest.approx(0.00235)
    assert priced["cost_usd"] == pytest.approx(0.000159 + 0.00235)
    # One unpriced call makes the judges' cost and the total unknown, never silently smaller.
    assert rows["unpriced-judge"]["judge_cost_usd"] is None
    assert rows["unpriced-judge"]["cost_usd"] is None
    assert rows["unpriced-judge"]["answer_cost_usd"] == pytest.approx(0.000159)
    # No usage and a run that names no answerer or judges (frames.usage): unknown, not zero.
    assert rows["offline"]["cost_usd"] is None and rows["offline"]["answer_input_tokens"] is None


def test_retrieval_level_says_what_the_metrics_were_computed_against(tmp_path: Path) -> None:
    q_session = msgspec.structs.replace(question("s"), benchNb={"retrievalLevel": "session"})
    q_default = question("m")
    run = write_run(
        tmp_path / "r", [q_session, q_default], bench_nb={"version": 1, "evidenceLevel": "message"}
    )
    df = questions_df(run, backend="polars").sort("question_id")
    assert df["retrieval_level"].to_list() == ["message", "session"]
    mb_run = write_run(tmp_path / "mb", [question("x")])
    assert questions_df(mb_run, backend="polars")["retrieval_level"].to_list() == [None]


def test_a_loaded_run_set_builds_its_questions_frame_once_and_rebuilds_when_its_runs_change(
    tmp_path: Path,
) -> None:
    from bench_nb import load_runs
    from bench_nb.frames.questions import questions_frame

    a = write_run(tmp_path / "a", [question("q1"), question("q2", "incorrect")])
    b = write_run(tmp_path / "b", [question("q3")])
    runs = load_runs([a])
    first = questions_frame(runs)
    assert questions_frame(runs) is first  # the same frame: built once per run set
    assert questions_frame(runs, strict=True) is not first  # other settings, another frame
    runs.extend(load_runs([b]))
    grown = questions_frame(runs)
    assert sorted(grown["question_id"].to_list()) == ["q1", "q2", "q3"]
