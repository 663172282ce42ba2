"""End-to-end runs of the runner on synthetic benchmarks with a real in-memory provider."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runner_fakes import CountingProvider, Flaky, make_benchmark, pet_question

from bench_nb.errors import ComparisonError, ProviderError
from bench_nb.frames.questions import questions_frame
from bench_nb.records import Verdict
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.load import read_run
from bench_nb.runformat.verdicts import read_verdicts
from bench_nb.runner import RetryPolicy, run_benchmark

FAST_RETRY = RetryPolicy(max_attempts=3, initial_s=0.001, max_s=0.005, jitter_s=0.001)


def _run(tmp_path: Path, provider: CountingProvider, bench=None, **kw):
    kw.setdefault("judges", "contains,f1")
    kw.setdefault("retry", FAST_RETRY)
    kw.setdefault("progress", False)
    return run_benchmark(provider, bench or make_benchmark(), runs_dir=tmp_path / "runs", run_id="r1", **kw)


def _checkpoint(run_dir: Path) -> Checkpoint:
    return msgspec.json.decode((run_dir / "checkpoint.json").read_bytes(), type=Checkpoint)


def test_end_to_end_writes_a_memorybench_run_that_loads(tmp_path: Path) -> None:
    bench = make_benchmark(3, 4)
    result = _run(tmp_path, CountingProvider(), bench, k=5)
    assert (result.status, result.target, result.evaluated, result.failed) == ("completed", 12, 12, 0)
    run_dir = result.run_dir
    assert not (run_dir / "journal.jsonl").exists()  # compacted into the checkpoint at the end
    ck = _checkpoint(run_dir)
    assert ck.status == "completed" and ck.provider == "counting" and ck.benchmark == "synthetic"
    assert ck.judge == "contains" and ck.answeringModel == "extractive"
    assert ck.targetQuestionIds == [q.question_id for q in bench.questions]
    extra = ck.benchNb or {}
    assert extra["k"] == 5 and extra["judges"] == ["contains", "f1"] and extra["primaryJudge"] == "contains"
    assert extra["version"] == 2 and extra["isolatePerQuestion"] is False
    assert extra["tokenizer"] == "tiktoken:o200k_base" and "answer" in extra["promptHashes"]
    q = ck.questions["h1-q2"]
    assert re.fullmatch(r"r1-[0-9a-f]{16}", q.containerTag)  # opaque: nothing of the question or haystack
    assert q.phases.answer.hypothesis is not None and "zeta1x2" in q.phases.answer.hypothesis
    assert q.phases.evaluate.score == 1 and q.phases.evaluate.label == "correct"
    assert q.phases.answer.promptTokens and q.phases.answer.contextTokens
    assert q.phases.answer.promptTokens == q.phases.answer.basePromptTokens + q.phases.answer.contextTokens
    rm = q.phases.evaluate.retrievalMetrics
    assert rm is not None and rm.hitAtK == 1 and rm.mrr == 1 and rm.k == 5 and rm.totalRelevant == 1
    assert (q.benchNb or {})["normType"] == "single-hop" and (q.benchNb or {})["evidenceIds"] == ["h1-m2"]
    assert (q.benchNb or {})["attempts"]["search"] == 1
    # The abstention question is answered "I don't know." and graded correct for abstaining.
    abst = ck.questions["h0-q3"]
    assert abst.phases.answer.hypothesis == "I don't know." and abst.phases.evaluate.score == 1
    # MemoryBench's results file per question.
    res = json.loads((run_dir / "results" / "h1-q2.json").read_text())
    assert res["questionId"] == "h1-q2" and res["results"][0]["id"] == "h1-m2"
    # Every judge's verdict in judgments.jsonl.
    verdicts, problems = read_verdicts(run_dir)
    assert not problems and len(verdicts) == 24
    assert {j for _, j in verdicts} == {"contains", "f1"}
    # questions_df reads it, with the true labels.
    df = questions_frame(run_dir)
    assert df.height == 12 and set(df["status"]) == {"evaluated"}
    assert df.filter(df["question_id"] == "h0-q3")["question_type_norm"][0] == "abstention"
    assert set(df["tokenizer"]) == {"tiktoken:o200k_base"}
    # report.json with MemoryBench's keys.
    report = json.loads((run_dir / "report.json").read_text())
    assert report["summary"] == {"totalQuestions": 12, "correctCount": 12, "accuracy": 1}
    assert list(report)[:8] == [
        "provider",
        "benchmark",
        "runId",
        "dataSourceRunId",
        "judge",
        "answeringModel",
        "timestamp",
        "summary",
    ]
    assert {"latency", "tokens", "memscore", "retrieval", "byQuestionType", "evaluations"} <= set(report)


def test_ingest_once_per_haystack_and_isolated_per_question(tmp_path: Path) -> None:
    shared = CountingProvider()
    _run(tmp_path, shared, make_benchmark(3, 5))
    assert shared.calls["ingest"] == 3 and shared.calls["indexing"] == 3 and shared.calls["search"] == 15
    ck = _checkpoint(tmp_path / "runs" / "r1")
    tags = {q.containerTag for q in ck.questions.values()}
    assert len(tags) == 3 and all(re.fullmatch(r"r1-[0-9a-f]{16}", t) for t in tags)
    assert all((q.benchNb or {}).get("sharedContainer") == 5 for q in ck.questions.values())

    isolated = CountingProvider()
    run_benchmark(
        isolated,
        make_benchmark(3, 5),
        runs_dir=tmp_path / "runs",
        run_id="r2",
        isolate_per_question=True,
        progress=False,
    )
    assert isolated.calls["ingest"] == 15
    ck2 = _checkpoint(tmp_path / "runs" / "r2")
    assert len({q.containerTag for q in ck2.questions.values()}) == 15
    assert (ck2.benchNb or {})["isolatePerQuestion"] is True


def test_sliding_window_starts_the_next_task_as_soon_as_one_finishes(tmp_path: Path) -> None:
    # One slow search among fast ones: with fixed batches of 4 the fifth search would wait for the slow one.
    # The slow one lasts until the 11 others have finished (not a fixed 0.6 s a busy machine could outrun),
    # so fixed batches would hold it until the 60 s backstop and fail the count below.
    slow_query = pet_question(0, 0)
    slow_entered: list[float] = []

    def latency(query: str) -> float:
        if query != slow_query:
            return 0.02
        slow_entered.append(time.perf_counter())  # the span's own start is taken after this wait
        deadline = time.monotonic() + 60
        while sum(s[0] == "search" for s in list(provider.spans)) < 11 and time.monotonic() < deadline:
            time.sleep(0.005)
        return 0.0

    provider = CountingProvider(latency={"search": latency})
    _run(tmp_path, provider, make_benchmark(1, 12), concurrency=4)
    spans = sorted((s for s in provider.spans if s[0] == "search"), key=lambda s: s[2])
    slow = next(s for s in spans if s[1] == slow_query)
    assert provider.max_in_flight["search"] == 4
    started_during_slow = [s for s in spans if s[1] != slow_query and slow_entered[0] < s[2] < slow[3]]
    # The other 11 searches all start (and finish) while the slow one is still running.
    assert len(started_during_slow) == 11


def test_phase_concurrency_is_a_real_limit(tmp_path: Path) -> None:
    provider = CountingProvider(latency={"search": 0.03})
    _run(tmp_path, provider, make_benchmark(2, 8), concurrency=6, phase_concurrency={"search": 2})
    assert provider.max_in_flight["search"] == 2


def test_a_failing_question_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    bad = pet_question(0, 1)
    provider = CountingProvider(
        fail={"search": lambda q: ProviderError("index exploded") if q == bad else None}
    )
    result = _run(tmp_path, provider, make_benchmark(2, 4))
    assert (result.status, result.evaluated, result.failed) == ("completed", 7, 1)
    assert provider.calls["search"] == 8  # not retried: a ProviderError is not retryable by default
    ck = _checkpoint(result.run_dir)
    search = ck.questions["h0-q1"].phases.search
    assert search.status == "failed" and search.error == "ProviderError: index exploded"
    assert ck.questions["h0-q1"].phases.answer.status == "pending"
    err = (ck.questions["h0-q1"].benchNb or {})["errors"]["search"]
    assert err == {
        "type": "ProviderError",
        "message": "ProviderError: index exploded",
        "attempts": 1,
        "retryable": False,
    }
    df = questions_frame(result.run_dir)
    row = df.filter(df["question_id"] == "h0-q1").row(0, named=True)
    assert row["status"] == "failed" and row["failed_phase"] == "search"
    # The report counts the evaluated questions only (MemoryBench's rule).
    assert json.loads((result.run_dir / "report.json").read_text())["summary"]["totalQuestions"] == 7


def test_retryable_errors_are_retried_with_backoff(tmp_path: Path) -> None:
    seen: dict[str, int] = {}

    def flaky(q: str) -> BaseException | None:
        seen[q] = seen.get(q, 0) + 1
        return Flaky("429 slow down") if seen[q] <= 2 else None

    provider = CountingProvider(fail={"search": flaky})
    result = _run(tmp_path, provider, make_benchmark(1, 3))
    assert result.evaluated == 3 and provider.calls["search"] == 9
    ck = _checkpoint(result.run_dir)
    assert all((q.benchNb or {})["attempts"]["search"] == 3 for q in ck.questions.values())
    assert all("errors" not in (q.benchNb or {}) for q in ck.questions.values())


def test_retries_give_up_after_max_attempts(tmp_path: Path) -> None:
    provider = CountingProvider(fail={"indexing": lambda c: TimeoutError("still indexing")})
    result = _run(tmp_path, provider, make_benchmark(1, 3))
    assert provider.calls["indexing"] == 3 and result.failed == 3 and result.evaluated == 0
    ck = _checkpoint(result.run_dir)
    assert all(q.phases.indexing.status == "failed" for q in ck.questions.values())
    assert (ck.questions["h0-q0"].benchNb or {})["errors"]["indexing"]["attempts"] == 3


def test_fail_fast_stops_at_the_first_failure_and_a_rerun_finishes(tmp_path: Path) -> None:
    provider = CountingProvider(fail={"ingest": lambda c: ProviderError("down")})  # the first ingest fails
    result = _run(tmp_path, provider, make_benchmark(4, 3), fail_fast=True, concurrency=1)
    assert result.status == "failed" and result.failed == 3 and result.evaluated == 0
    assert result.report_path is None
    assert provider.calls["ingest"] == 1  # nothing else was started
    healthy = CountingProvider()
    again = _run(tmp_path, healthy, make_benchmark(4, 3), fail_fast=True, concurrency=1)
    assert again.status == "completed" and again.evaluated == 12
    # The resumed ingest clears first: a failed ingest may have stored part of the haystack.
    assert healthy.calls["clear"] == 4 and healthy.calls["ingest"] == 4


def test_resume_runs_only_what_is_not_done(tmp_path: Path) -> None:
    bad = pet_question(1, 2)
    first = CountingProvider(fail={"search": lambda q: ProviderError("boom") if q == bad else None})
    r1 = _run(tmp_path, first, make_benchmark(2, 4))
    assert r1.failed == 1
    second = CountingProvider()
    r2 = _run(tmp_path, second, make_benchmark(2, 4))
    assert (r2.status, r2.evaluated, r2.failed) == ("completed", 8, 0)
    assert second.call_keys == [("search", bad)]  # no ingest, no other search: the index is on disk
    verdicts, _ = read_verdicts(r2.run_dir)
    assert len(verdicts) == 16
    err = (_checkpoint(r2.run_dir).questions["h1-q2"].benchNb or {}).get("errors")
    assert err is None  # the old error is gone once the phase succeeds


def test_resume_reingests_for_a_provider_that_keeps_memories_in_process(tmp_path: Path) -> None:
    bad = pet_question(0, 0)
    _run(tmp_path, CountingProvider(fail={"search": lambda q: ProviderError("x") if q == bad else None}))
    volatile = CountingProvider(persistent=False)
    r2 = _run(tmp_path, volatile)
    assert r2.evaluated == 12
    # Its memories died with the first process: the container with unfinished searches is ingested again.
    assert volatile.calls["ingest"] == 1 and volatile.calls["clear"] == 1 and volatile.calls["search"] == 1


def test_resume_with_other_settings_is_refused(tmp_path: Path) -> None:
    _run(tmp_path, CountingProvider(), k=5)
    with pytest.raises(ComparisonError, match="retrieval limit k: 5 in the run, 7 now"):
        _run(tmp_path, CountingProvider(), k=7)
    with pytest.raises(ComparisonError, match="question set"):
        _run(tmp_path, CountingProvider(), k=5, limit=3)


class _Unsure:
    name = "unsure"

    def judge(self, question, hypothesis):  # type: ignore[no-untyped-def]
        return Verdict(None, "unscored", "reply could not be parsed", judge=self.name)


def test_an_unscored_verdict_is_evaluated_without_a_score(tmp_path: Path) -> None:
    result = _run(tmp_path, CountingProvider(), make_benchmark(1, 3), judges=[_Unsure(), "contains"])
    ck = _checkpoint(result.run_dir)
    ev = ck.questions["h0-q0"].phases.evaluate
    assert ev.status == "completed" and ev.score is None and ev.label == "unscored"
    assert (ck.questions["h0-q0"].benchNb or {})["unscored"] is True
    raw = json.loads((result.run_dir / "checkpoint.json").read_text())
    assert "score" not in raw["questions"]["h0-q0"]["phases"]["evaluate"]
    df = questions_frame(result.run_dir)
    assert df["unscored"].to_list() == [True] * 3 and df["correct"].to_list() == [None] * 3
    verdicts, _ = read_verdicts(result.run_dir)
    assert verdicts[("h0-q0", "contains")]["score"] == 1 and verdicts[("h0-q0", "unsure")]["unscored"] is True


def test_no_secret_reaches_the_run_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-Zq9vUfS3cr3tV4lu3xx"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    provider = CountingProvider(
        fail={"search": lambda q: ProviderError(f"401 for key {secret}; Authorization: Bearer {secret}")}
    )
    result = _run(tmp_path, provider, make_benchmark(1, 2))
    assert result.failed == 2
    for path in result.run_dir.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path
    assert "[redacted]" in _checkpoint(result.run_dir).questions["h0-q0"].phases.search.error  # type: ignore[operator]


def test_read_run_sees_journal_progress_of_a_killed_run(tmp_path: Path) -> None:
    result = _run(tmp_path, CountingProvider(), make_benchmark(1, 3))
    run_dir = result.run_dir
    # Simulate a run killed after its first compaction: questions pending in the checkpoint, done in the journal.
    from bench_nb.runformat.format import EvaluatePhase, Phases
    from bench_nb.runformat.journal import make_record

    ck = _checkpoint(run_dir)
    done = ck.questions["h0-q0"].phases.evaluate
    for q in ck.questions.values():
        q.phases = Phases()
    (run_dir / "checkpoint.json").write_bytes(msgspec.json.encode(ck))
    line = make_record(["h0-q0"], "evaluate", done, {"unscored": None})
    torn = make_record(["h0-q1"], "evaluate", EvaluatePhase(status="completed", score=1), None)[:-9]
    (run_dir / "journal.jsonl").write_bytes(line + torn)
    run = read_run(run_dir)
    assert run.checkpoint is not None
    assert run.checkpoint.questions["h0-q0"].phases.evaluate.status == "completed"
    assert run.checkpoint.questions["h0-q1"].phases.evaluate.status == "pending"  # torn line ignored


class _TraitReads(CountingProvider):
    """Counts each read of the optional attributes a provider tells of itself with (``providers.base``)."""

    TRAITS = ("evidence_level", "persistent", "reports_usage", "answer_prompt", "judge_prompt")

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()

    def __getattribute__(self, name: str) -> Any:
        if name in _TraitReads.TRAITS:
            object.__getattribute__(self, "reads")[name] += 1
        return object.__getattribute__(self, name)


def test_a_run_reads_its_providers_traits_once(tmp_path: Path) -> None:
    """Resolved once (``runner.plan.ProviderTraits``): the run read the evidence level twice and
    ``reports_usage`` at every ingest and search; its own prompts are read only when the run allows them."""
    provider = _TraitReads()
    result = _run(tmp_path, provider, make_benchmark(3, 2))
    assert (result.status, result.evaluated) == ("completed", 6)
    assert provider.reads == Counter({"evidence_level": 1, "persistent": 1, "reports_usage": 1})
