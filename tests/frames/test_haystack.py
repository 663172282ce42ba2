"""The questions frame's haystack_id: the cluster of questions that share what a provider stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_nb.benchmarks.registry import haystack_id_of
from bench_nb.frames.questions import questions_frame
from bench_nb.runner.run import run_benchmark
from run_writers import question, write_run


def _haystacks(run: Path) -> dict[str, str]:
    df = questions_frame(run)
    return dict(zip(df["question_id"], df["haystack_id"], strict=True))


def test_memorybench_locomo_run_clusters_by_conversation(tmp_path: Path) -> None:
    # MemoryBench names a container after the question ("<qid>-<run>"): the conversation is in the id.
    qids = ["conv-26-q0", "conv-26-q11", "conv-30-q0"]
    run = write_run(tmp_path / "r", [question(q) for q in qids], run_id="r", benchmark="locomo")
    assert _haystacks(run) == {"conv-26-q0": "conv-26", "conv-26-q11": "conv-26", "conv-30-q0": "conv-30"}


def test_longmemeval_questions_are_their_own_haystacks(tmp_path: Path) -> None:
    qids = ["gpt4_2655b836", "e47becba_abs"]
    run = write_run(tmp_path / "r", [question(q) for q in qids], run_id="r", benchmark="longmemeval")
    assert _haystacks(run) == {q: q for q in qids}


def test_a_container_named_after_its_haystack_gives_the_haystack(tmp_path: Path) -> None:
    q1, q2 = question("a1"), question("a2")
    q1.containerTag = q2.containerTag = "chat-7-r"
    run = write_run(tmp_path / "r", [q1, q2, question("b1")], run_id="r", benchmark="custom")
    # b1's container is "b1-r": the question's own haystack.
    assert _haystacks(run) == {"a1": "chat-7", "a2": "chat-7", "b1": "b1"}


def test_the_haystack_a_run_recorded_wins(tmp_path: Path) -> None:
    q = question("conv-26-q0")
    q.benchNb = {"haystackId": "chat-3"}
    run = write_run(tmp_path / "r", [q], run_id="r", benchmark="locomo")
    assert _haystacks(run) == {"conv-26-q0": "chat-3"}


@pytest.mark.parametrize(
    ("qid", "benchmark", "tag", "expected"),
    [
        ("locomo_3_qa17", "locomo", None, "locomo_3"),  # the EverMemOS pipeline's ids
        ("conv-26-q0", "LoCoMo", None, "conv-26"),
        ("odd-id", "locomo", None, "odd-id"),
        ("q1", "custom", "q1", "q1"),
        ("q1", "custom", None, "q1"),
    ],
)
def test_haystack_rules(qid: str, benchmark: str, tag: str | None, expected: str) -> None:
    assert haystack_id_of(qid, benchmark=benchmark, container_tag=tag, run_id="r") == expected


def test_bench_nb_runs_record_the_benchmark_haystack(tmp_path: Path) -> None:
    from bench_nb.benchmarks import load_benchmark

    result = run_benchmark("no-memory", "sample", run_id="h", runs_dir=tmp_path, progress=False)
    bench = load_benchmark("sample")
    truth = {q.question_id: q.haystack_id for q in bench.questions}
    got = _haystacks(result.run_dir)
    assert got == truth
    assert len(set(got.values())) > 1  # the sample has several conversations
