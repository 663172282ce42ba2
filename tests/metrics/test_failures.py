"""Why each answer was wrong (``bn.failure_reasons``): real runs through the runner, one per reason, and the
priority order when several hold."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

import bench_nb as bn
from bench_nb.frames.columns import FAILURES
from bench_nb.metrics.failures import REASONS, failure_reasons_frame
from bench_nb.records import Answer, IngestResult, Question, SearchHit, Session
from bench_nb.runner import run_benchmark

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
from runner_fakes import make_benchmark

PETS = [f"h{h}-q{j}" for h in range(3) for j in range(3)]  # the answerable questions (q3 abstains)


class NoIdeaAnswerer:
    """Answers every answerable question wrongly, whatever it was given (and abstains on the others)."""

    name = "no-idea"

    def answer(self, question: Question, hits: Sequence[SearchHit]) -> Answer:
        return Answer("no idea at all" if question.answer else "I don't know.")


class WrongMessageProvider:
    """Finds, for every query, only each haystack's small-talk message: the gold evidence is never surfaced."""

    name = "wrong-message"
    evidence_level = "message"

    def __init__(self) -> None:
        self.data: dict[str, list[tuple[Session, str]]] = {}

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        self.data.setdefault(container, []).extend(
            (s, m.message_id or "") for s in sessions for m in s.messages
        )
        return IngestResult()

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        return None

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        return [
            SearchHit(text="bob: nice weather today", session_id=s.session_id, hit_id=mid)
            for s, mid in self.data.get(container, [])
            if mid.endswith("-w")
        ]

    def clear(self, container: str) -> None:
        self.data.pop(container, None)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("failures")
    b = make_benchmark(3, 4)
    # f1 first: the extractive answer (a whole sentence) fails f1 while contains passes it: a dispute
    run_benchmark("sqlite", b, k=2, run_id="disputed", runs_dir=d, judges="f1,contains")
    run_benchmark("sqlite", b, k=2, run_id="reader", runs_dir=d, answerer=NoIdeaAnswerer())
    run_benchmark(WrongMessageProvider(), b, run_id="miss", runs_dir=d)
    # room for the newest message (the small talk) only: the pets' messages were cut
    run_benchmark("full-context", b, run_id="cut", runs_dir=d, provider_settings={"max_context_tokens": 20})
    run_benchmark("no-memory", b, run_id="none", runs_dir=d)
    return d


@pytest.fixture(scope="module")
def errata(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("errata") / "errata.json"
    entry = {
        "question_id": "h0-q0",
        "error_type": "WRONG_ANSWER",
        "gold_wrong": True,
        "corrected_answer": "x",
    }
    path.write_text(
        json.dumps({"format": "bench_nb-errata/1", "benchmark": "synthetic", "entries": [entry]}),
        encoding="utf-8",
    )
    return path


def _reasons(frame: pl.DataFrame, run_id: str) -> dict[str, str]:
    rows = frame.filter(pl.col("run_id") == run_id)
    return dict(zip(rows["question_id"], rows["failure_reason"], strict=True))


def test_each_wrong_answer_gets_its_reason(runs: Path) -> None:
    frame = bn.failure_reasons(runs, backend="polars")
    assert frame.columns == list(FAILURES.schema())
    # every answerable question is wrong in each run, the abstentions are right: 9 wrong answers per run
    assert frame.group_by("run_id").len().sort("run_id").rows() == [
        ("cut", 9),
        ("disputed", 9),
        ("miss", 9),
        ("none", 9),
        ("reader", 9),
    ]
    assert _reasons(frame, "disputed") == dict.fromkeys(PETS, "judge_dispute")
    assert _reasons(frame, "reader") == dict.fromkeys(PETS, "reader_error")
    assert _reasons(frame, "miss") == dict.fromkeys(PETS, "retrieval_miss")
    assert _reasons(frame, "cut") == dict.fromkeys(PETS, "truncation")
    assert _reasons(frame, "none") == dict.fromkeys(PETS, "unknown")
    cut = frame.filter(pl.col("run_id") == "cut")
    assert cut["context_cut"].all() and (cut["hit_at_k"] == 0).all()
    assert not frame.filter(pl.col("run_id") != "cut")["context_cut"].any()
    assert frame.filter(pl.col("run_id") == "none")["hit_at_k"].is_null().all()
    assert frame["reanswer_score"].is_null().all()  # nothing re-answered yet


def test_an_erratum_comes_before_every_other_reason(runs: Path, errata: Path) -> None:
    frame = bn.failure_reasons(runs, errata=errata, backend="polars")
    first = frame.filter(pl.col("question_id") == "h0-q0")
    assert first["failure_reason"].to_list() == ["answer_key_erratum"] * 5
    assert first["gold_wrong"].all()
    # the other questions keep their reasons (the disputed run's h0-q0 was a dispute too)
    assert _reasons(frame, "disputed")["h0-q1"] == "judge_dispute"
    assert frame.filter(pl.col("question_id") == "h0-q0", pl.col("run_id") == "disputed")[
        "judge_disputed"
    ].item()


def test_a_dispute_needs_both_judges_only_the_chosen_ones_count(runs: Path) -> None:
    only_f1 = bn.failure_reasons(runs, judges=["f1"], backend="polars")
    assert _reasons(only_f1, "disputed") == dict.fromkeys(PETS, "reader_error")  # the evidence was surfaced


def test_pandas_by_default_and_a_questions_frame_as_input(runs: Path) -> None:
    by_default = bn.failure_reasons(runs)
    assert isinstance(by_default, pd.DataFrame) and list(by_default["failure_reason"].unique())
    questions = bn.questions_df(runs)
    from_frame = failure_reasons_frame(questions)
    assert from_frame.sort("run_id", "question_id").equals(
        failure_reasons_frame(runs).sort("run_id", "question_id")
    )


def test_the_summary_counts_and_shares_per_run_in_reason_order(runs: Path, errata: Path) -> None:
    summary = bn.metrics.failure_summary(runs, errata=errata, backend="polars")
    disputed = summary.filter(pl.col("run_id") == "disputed")
    assert disputed.select("failure_reason", "n", "wrong", "scored").rows() == [
        ("answer_key_erratum", 1, 9, 12),
        ("judge_dispute", 8, 9, 12),
    ]
    assert disputed["share"].to_list() == pytest.approx([1 / 9, 8 / 9])
    assert set(summary["failure_reason"]) <= set(REASONS)
    for _, part in summary.group_by("run_id"):
        assert part["share"].sum() == pytest.approx(1.0)
    # from the reasons frame itself: the same counts, no scored total
    again = bn.metrics.failure_summary(bn.failure_reasons(runs, errata=errata), backend="polars")
    assert again.drop("scored").equals(summary.drop("scored"))
    assert again["scored"].is_null().all()


def test_no_wrong_answer_is_an_empty_frame_with_every_column(tmp_path: Path) -> None:
    b = make_benchmark(1, 2)  # no abstention question; the extractive answer passes contains
    run_benchmark("sqlite", b, k=2, run_id="right", runs_dir=tmp_path)
    frame = bn.failure_reasons(tmp_path, backend="polars")
    assert frame.is_empty() and frame.columns == list(bn.failure_reasons(tmp_path).columns)
    assert bn.metrics.failure_summary(tmp_path, backend="polars").is_empty()


def test_a_run_store_gives_the_same_reasons(runs: Path, tmp_path: Path) -> None:
    # the store keeps each hit's raw JSON: truncation is read from it as from the run directories
    bn.export_runs(str(runs / "*"), tmp_path / "store")
    stored = bn.failure_reasons(bn.load_runs(tmp_path / "store"), backend="polars")
    direct = bn.failure_reasons(runs, backend="polars")
    keys = ["run_id", "question_id"]
    assert stored.drop("reanswer_score").sort(keys).equals(direct.drop("reanswer_score").sort(keys))
    assert set(stored["failure_reason"]) == {
        "judge_dispute",
        "reader_error",
        "retrieval_miss",
        "truncation",
        "unknown",
    }


def test_failure_summary_takes_no_reasons_of_other_errata_or_judges(runs: Path, errata: Path) -> None:
    # 99b381a gave failure_summary a public reasons= ("failure_reasons' frame of data when the caller has it"):
    # reasons worked out with errata (or judges) the summary was not given were counted with no word, beside
    # the scored answers of the questions without them. The table takes its examples from the reasons its
    # counts come from instead.
    from bench_nb.tables import table_failures

    with_errata = bn.failure_reasons(runs, errata=errata, backend="polars")
    with pytest.raises(TypeError, match="reasons"):
        bn.metrics.failure_summary(runs, reasons=with_errata, backend="polars")
    table = table_failures(runs, errata=errata, explore="explore.html")
    assert table.frame.equals(bn.metrics.failure_summary(runs, errata=errata, backend="polars"))
    assert "answer-key erratum" in table.html and "explore.html#" in table.html
    assert table.html.count(">h0-q0<") == 5  # each run's erratum row names its one question
