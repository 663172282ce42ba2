"""Judge replicates on bench_nb's own runs: ``rejudge(..., replicates=N)`` / ``--judge-replicates N`` grade each
answer N times with a model judge against the local API server, each replicate's reply cached on its own;
judgments.jsonl keeps every replicate, the checkpoint the majority."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from bench_nb import judgments_df, rejudge, replicate_summary
from bench_nb.judges.base import majority_verdict
from bench_nb.judges.llm import LLMJudge
from bench_nb.models.client import LLMClient
from bench_nb.models.settings import ClientSettings
from bench_nb.records import Verdict
from bench_nb.runformat.verdicts import append_verdicts, read_replicates, read_verdicts
from llm_server import LLMServer, llm_server

__all__ = ["llm_server"]

ANSWERS = {"q1": "Biscuit", "q2": "London", "q3": "in March 2024", "q4": "cello"}


def _verdict(score: int) -> str:
    return json.dumps({"score": score, "label": "correct" if score else "incorrect", "explanation": "x"})


@pytest.fixture
def client(llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LLMClient:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = ClientSettings(
        timeout_s=2.0,
        max_retries=1,
        backoff_initial_s=0.01,
        backoff_max_s=0.02,
        cache_path=tmp_path / "llm.sqlite",
        openai_base_url=llm_server.openai_base_url,
        anthropic_base_url=llm_server.base_url,
    )
    return LLMClient(settings)


def test_replicates_are_cached_apart_and_replicate_1_keeps_the_plain_key(
    client: LLMClient, llm_server: LLMServer
) -> None:
    messages = [{"role": "user", "content": "grade this"}]
    first = client.complete("gpt-4o-mini", messages)
    again = client.complete("gpt-4o-mini", messages, replicate=1)
    second = client.complete("gpt-4o-mini", messages, replicate=2)
    second_again = client.complete("gpt-4o-mini", messages, replicate=2)
    assert (first.cached, again.cached, second.cached, second_again.cached) == (False, True, False, True)
    assert llm_server.count() == 2  # replicate 2 was a real call, once
    assert all("replicate" not in json.dumps(c.body) for c in llm_server.calls)  # never sent to the model


def test_rejudge_grades_each_answer_n_times_and_resumes(
    make_run, client: LLMClient, llm_server: LLMServer
) -> None:  # type: ignore[no-untyped-def]
    run = make_run(
        "run-r", answers=ANSWERS, primary="contains", bench_nb={"k": 10, "primaryJudge": "contains"}
    )
    # q1 correct 3 times, q2 incorrect 3 times, q3 split 2-1, q4 split 1-2 (replicate order: all q's, per replicate)
    script = {1: [1, 0, 1, 0], 2: [1, 0, 1, 1], 3: [1, 0, 0, 0]}
    verdicts = iter([s for r in sorted(script) for s in script[r]])  # in call order (one worker)
    llm_server.responder = lambda path, body: _verdict(next(verdicts))
    judge = LLMJudge("gpt-4o-mini", client=client)
    result = rejudge(run, [judge], replicates=3)
    assert result.graded == {"gpt-4o-mini": 12} and llm_server.count() == 12
    every, problems = read_replicates(run)
    assert not problems and sorted({r for (_, j, r) in every if j == "gpt-4o-mini"}) == [1, 2, 3]
    assert len(read_verdicts(run)[0]) == 4  # read_verdicts: replicate 1 of each (question, judge)
    again = rejudge(run, [judge], replicates=3)
    assert again.graded == {"gpt-4o-mini": 0} and again.skipped == {"gpt-4o-mini": 12}
    assert llm_server.count() == 12
    j = judgments_df(run, backend="polars").filter(pl.col("judge") == "gpt-4o-mini")
    assert j.group_by("replicate").len().sort("replicate")["len"].to_list() == [4, 4, 4]
    scores = {qid: part.sort("replicate")["score"].to_list() for (qid,), part in j.group_by("question_id")}
    assert scores == {"q1": [1, 1, 1], "q2": [0, 0, 0], "q3": [1, 1, 0], "q4": [0, 1, 0]}
    # replicate_summary reads the primary judge: make the model judge primary (the checkpoint: majority).
    rejudge(run, primary="gpt-4o-mini")
    ck = json.loads((run / "checkpoint.json").read_text())
    assert {q: ck["questions"][q]["phases"]["evaluate"]["score"] for q in ANSWERS} == {
        "q1": 1,
        "q2": 0,
        "q3": 1,
        "q4": 0,
    }
    row = replicate_summary(run, backend="polars").row(0, named=True)
    assert row["replicates"] == 3 and row["replicate_accuracies"] == [50.0, 75.0, 25.0]
    assert row["majority_accuracy"] == 50.0


def test_deterministic_judges_grade_once_and_bad_replicate_lines_are_problems(make_run) -> None:  # type: ignore[no-untyped-def]
    run = make_run(
        "run-d", answers=ANSWERS, primary="contains", bench_nb={"k": 10, "primaryJudge": "contains"}
    )
    result = rejudge(run, ["f1"], replicates=3)
    assert result.graded == {"f1": 4}
    append_verdicts(run, [("q1", Verdict(1, "correct", "", judge="x"))], replicate=2)
    with open(run / "judgments.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"questionId": "q2", "judge": "x", "score": 1, "replicate": 0}) + "\n")
    every, problems = read_replicates(run)
    assert ("q1", "x", 2) in every and ("q1", "x", 1) not in every
    assert len(problems) == 1 and "replicate 0 is not a whole number from 1" in problems[0].message


def test_majority_verdict() -> None:
    v = [Verdict(1, "correct", "a", judge="j"), Verdict(0, "incorrect", "b", judge="j")]
    assert majority_verdict(v).label == "unscored" and "split evenly" in majority_verdict(v).explanation
    three = [*v, Verdict(0, "incorrect", "c", judge="j")]
    assert (
        majority_verdict(three).score,
        majority_verdict(three).explanation.startswith("majority: 1 correct, 2"),
    ) == (
        0,
        True,
    )
    assert majority_verdict(v[:1]) is v[0]
