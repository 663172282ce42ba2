"""Results entries, retry classification, redaction, selection, like-for-like checks."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from runner_fakes import CountingProvider, make_benchmark

from bench_nb.errors import BenchNbError, ComparisonError, ProviderError
from bench_nb.records import SearchHit
from bench_nb.redaction import redact
from bench_nb.runformat.load import load_runs
from bench_nb.runformat.spec import question_set_hash
from bench_nb.runner import check_like_for_like, run_benchmark, run_comparison
from bench_nb.runner.hits import hit_from_result, hit_to_result
from bench_nb.runner.retry import Attempts, RetryPolicy, call_with_retries, is_retryable
from bench_nb.runner.selection import select_questions


def hit(hid: str, session: str = "s") -> SearchHit:
    return SearchHit(text=hid, hit_id=hid, session_id=session)


def test_hits_round_trip_through_results() -> None:
    h = SearchHit("text", score=1.5, session_id="s1", date="2024-01-01", hit_id="m1", raw={"k": [1]})
    assert hit_from_result(hit_to_result(h)) == h
    assert hit_to_result(SearchHit("t")) == {"content": "t"}


class _Status(Exception):
    def __init__(self, code: int) -> None:
        self.status_code = code


def test_what_is_retryable() -> None:
    assert is_retryable(TimeoutError()) and is_retryable(ConnectionResetError())
    assert is_retryable(_Status(429)) and is_retryable(_Status(503)) and not is_retryable(_Status(400))
    assert is_retryable(httpx.ConnectError("refused"))
    assert not is_retryable(ValueError("bug")) and not is_retryable(ProviderError("bad input"))
    flagged = ProviderError("busy")
    flagged.retryable = True  # type: ignore[attr-defined]
    assert is_retryable(flagged)


def test_call_with_retries_counts_attempts_and_reraises() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise TimeoutError("slow")
        return "ok"

    attempts = Attempts()
    policy = RetryPolicy(max_attempts=4, initial_s=0.001, max_s=0.002, jitter_s=0.001)
    assert call_with_retries(flaky, policy, attempts) == "ok" and attempts.count == 3
    attempts = Attempts()
    with pytest.raises(ValueError):
        call_with_retries(lambda: (_ for _ in ()).throw(ValueError("x")), policy, attempts)
    assert attempts.count == 1


def test_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok_abcdef123456")
    text = redact("key sk-proj-abcdefghijk, Bearer abc.def.ghi-123, api_key=zzzz9999 and tok_abcdef123456 ok")
    for secret in ("sk-proj-abcdefghijk", "abc.def.ghi-123", "zzzz9999", "tok_abcdef123456"):
        assert secret not in text
    assert text.endswith("ok") and "[redacted]" in text


def test_selection_is_deterministic() -> None:
    bench = make_benchmark(3, 4)
    limited, sampling = select_questions(bench, limit=5)
    assert [q.question_id for q in limited] == [q.question_id for q in bench.questions[:5]]
    assert (sampling.mode, sampling.limit) == ("limit", 5)
    per_type, sampling = select_questions(bench, per_type=2)
    assert [q.question_id for q in per_type] == ["h0-q0", "h0-q1", "h0-q3", "h1-q3"]
    assert sampling.perCategory == 2
    ids, _ = select_questions(bench, question_ids=["h2-q0", "h0-q1"])
    assert [q.question_id for q in ids] == ["h0-q1", "h2-q0"]  # benchmark order
    with pytest.raises(BenchNbError, match="no question 'nope'"):
        select_questions(bench, question_ids=["nope"])
    assert question_set_hash(["b", "a"]) == question_set_hash(["a", "b"]) != question_set_hash(["a"])


def test_check_like_for_like_and_compare(tmp_path: Path) -> None:
    bench = make_benchmark(2, 3)
    runs = tmp_path / "data" / "runs"
    for rid, k, judges in (("a", 5, "contains"), ("b", 5, "contains"), ("c", 3, "f1")):
        run_benchmark(
            CountingProvider(), bench, k=k, judges=judges, run_id=rid, runs_dir=runs, progress=False
        )
    assert check_like_for_like([runs / "a", runs / "b"]) == []
    diffs = check_like_for_like(load_runs([runs / "a", runs / "c"]))
    assert diffs == ["retrieval limit k differs: a=5, c=3", "judge differs: a=contains, c=f1"]
    with pytest.raises(ComparisonError, match="not like for like"):
        from bench_nb.runner import write_compare_manifest

        write_compare_manifest([runs / "a", runs / "c"], compare_id="bad")


def test_compare_gives_every_provider_the_same_questions(tmp_path: Path) -> None:
    from bench_nb.benchmarks import load_benchmark

    runs = tmp_path / "data" / "runs"
    result = run_comparison(
        "sqlite, no-memory",
        load_benchmark("sample"),
        compare_id="cmp",
        runs_dir=runs,
        limit=5,
        progress=False,
    )
    assert [r.run_id for r in result.runs] == ["cmp-sqlite", "cmp-no-memory"]
    assert result.manifest_path == tmp_path / "data" / "compare" / "cmp" / "manifest.json"
    loaded = load_runs(result.manifest_path)
    assert [r.checkpoint.targetQuestionIds for r in loaded if r.checkpoint] == [
        loaded[0].checkpoint.targetQuestionIds  # type: ignore[union-attr]
    ] * 2
    assert check_like_for_like(loaded) == []
    with pytest.raises(ComparisonError, match="once"):
        run_comparison(["sqlite", "sqlite"], "sample", runs_dir=runs)


def test_compare_is_a_deprecated_alias_of_run_comparison() -> None:
    import bench_nb

    with (
        pytest.warns(
            DeprecationWarning, match=r"bench_nb\.compare is renamed bench_nb\.runner\.run_comparison"
        ),
        pytest.raises(ComparisonError, match="run_comparison needs at least one provider"),
    ):
        bench_nb.compare([], "sample")
