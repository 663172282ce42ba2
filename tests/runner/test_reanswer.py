"""``bench-nb reanswer RUN --from gold-evidence``: a run's wrong answers answered again from the gold evidence alone,
written to reanswer.jsonl beside the run (its checkpoint untouched), read by ``bn.failure_reasons``; offline with
the extractive answerer through the real command, and with an LLM answerer against the local API server (its
calls cached like every other)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from runner_fakes import CountingProvider, make_benchmark
from runner_llm import llm_env, llm_server

import bench_nb as bn
from bench_nb.benchmarks import load_benchmark
from bench_nb.errors import BenchNbError
from bench_nb.runformat.reanswer import read_reanswers
from bench_nb.runner import run_benchmark
from bench_nb.runner.reanswer import gold_hits, reanswer
from llm_server import LLMServer, default_responder, request_text

__all__ = ["llm_env", "llm_server"]

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PYTHONPATH": str(SRC), "BENCH_NB_QUIET": "1"}
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", *args], capture_output=True, text=True, timeout=300, env=env
    )


def test_gold_hits_are_the_messages_and_sessions_the_evidence_names() -> None:
    b = make_benchmark(1, 3)
    q = b.questions[1]  # evidence: h0-m1
    assert [h.hit_id for h in gold_hits(q, b.haystacks["h0"])] == ["h0-m1"]
    whole = type(q)(**{**q.__dict__, "evidence_ids": ("h0-s2", "h0-m0")})
    hits = gold_hits(whole, b.haystacks["h0"])
    assert [h.hit_id for h in hits] == ["h0-m0", "h0-w"]  # haystack order; a session id names its messages
    assert hits[1].text == "[2024-02-03T10:00:00] bob: nice weather today"


def test_reanswer_offline_through_the_command(tmp_path: Path) -> None:
    run_benchmark("sqlite", "sample", k=1, run_id="s1", runs_dir=tmp_path, progress=False)
    run = tmp_path / "s1"
    checkpoint, judgments = (run / "checkpoint.json").read_bytes(), (run / "judgments.jsonl").read_bytes()
    before = bn.failure_reasons(run, backend="polars")
    assert not before.is_empty() and "reader_error_confirmed" not in set(before["failure_reason"])

    done = _cli("reanswer", str(run), "--from", "gold-evidence")
    assert done.returncode == 0, done.stderr
    records, problems = read_reanswers(run)
    assert problems == []
    bench = {q.question_id: q for q in load_benchmark("sample").questions}
    with_evidence = [qid for qid in before["question_id"] if bench[qid].evidence_ids]
    assert sorted(records) == sorted(with_evidence)  # every wrong answer that has gold evidence, once
    for qid, r in records.items():
        assert (
            r.evidence_ids == bench[qid].evidence_ids and r.answerer == "extractive" and r.judge == "contains"
        )
        assert r.score in (0.0, 1.0)
    n = len(records)
    still = sum(r.score == 0 for r in records.values())
    assert f"{n} wrong answer(s) answered again" in done.stdout and f"{still} still wrong" in done.stdout
    # the run itself is untouched
    assert (run / "checkpoint.json").read_bytes() == checkpoint
    assert (run / "judgments.jsonl").read_bytes() == judgments

    after = bn.failure_reasons(run, backend="polars")
    scores = dict(zip(after["question_id"], after["reanswer_score"], strict=True))
    assert scores == {qid: (records[qid].score if qid in records else None) for qid in after["question_id"]}
    confirmed = after.filter(pl.col("failure_reason") == "reader_error_confirmed")
    expected = before.filter(pl.col("failure_reason") == "reader_error")["question_id"].to_list()
    expected = [qid for qid in expected if qid in records and records[qid].score == 0]
    assert expected and sorted(confirmed["question_id"]) == sorted(expected)
    # the other reasons are where they were
    unchanged = after.filter(~pl.col("question_id").is_in(expected))
    assert (
        unchanged.select("question_id", "failure_reason")
        .sort("question_id")
        .equals(
            before.filter(~pl.col("question_id").is_in(expected))
            .select("question_id", "failure_reason")
            .sort("question_id")
        )
    )

    again = _cli("reanswer", str(run))
    assert again.returncode == 0 and "0 wrong answer(s) answered again" in again.stdout
    assert f"{n} already done" in again.stdout
    assert len((run / "reanswer.jsonl").read_text().splitlines()) == n


def test_a_torn_tail_of_reanswer_jsonl_is_repaired_before_the_next_record(tmp_path: Path) -> None:
    """A reanswer killed mid-write leaves a last line without its newline (issue 38): the next reanswer cuts
    it off (as journal.jsonl's writer does) instead of gluing its first record onto it."""
    run_benchmark("sqlite", "sample", k=1, run_id="s1", runs_dir=tmp_path, progress=False)
    run = tmp_path / "s1"
    assert _cli("reanswer", str(run), "--from", "gold-evidence").returncode == 0
    file = run / "reanswer.jsonl"
    full, _ = read_reanswers(run)
    lines = file.read_bytes().splitlines(keepends=True)
    assert len(lines) >= 2
    torn = lines[-1][: len(lines[-1]) // 2]  # the last record, half written
    file.write_bytes(b"".join(lines[:-1]) + torn)

    again = _cli("reanswer", str(run), "--from", "gold-evidence")
    assert again.returncode == 0, again.stderr
    assert "1 wrong answer(s) answered again" in again.stdout  # the torn one only
    records, problems = read_reanswers(run)
    assert problems == []  # no line glued onto the torn one
    assert sorted(records) == sorted(full) and len(records) == len(lines)
    assert len(file.read_bytes().splitlines()) == len(lines)


def test_an_unknown_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BenchNbError, match="unknown source 'retrieved'"):
        reanswer(tmp_path, source="retrieved")
    bad = _cli("reanswer", str(tmp_path), "--from", "retrieved")
    assert bad.returncode != 0 and "gold-evidence" in bad.stderr


def test_reanswer_with_an_llm_answerer_is_cached(llm_env: LLMServer, tmp_path: Path) -> None:
    server = llm_env
    b = make_benchmark(2, 2)
    run_benchmark(
        CountingProvider(),
        b,
        answerer="gpt-4o-mini",
        judges="f1",
        run_id="llm",
        runs_dir=tmp_path,
        progress=False,
    )
    run = tmp_path / "llm"
    assert len(bn.failure_reasons(run, backend="polars")) == 4  # "scripted answer" is never the pet's name
    calls_before = server.count()
    seen: list[str] = []

    def from_context(path: str, body: dict[str, Any]) -> str:
        text = request_text(body)
        seen.append(text)
        found = re.findall(r"named (zeta\d+x\d+)", text)
        return found[0] if len(found) == 1 else default_responder(path, body)

    server.responder = from_context
    result = reanswer(run, benchmark=b)
    assert (result.answered, result.still_wrong, result.answerer) == (4, 0, "gpt-4o-mini")
    assert server.count() - calls_before == 4
    for q in b.questions:  # each prompt held its question's gold message and no other pet's
        (prompt,) = [t for t in seen if q.question in t]
        assert re.findall(r"named (zeta\d+x\d+)", prompt) == [q.answer]
    records, _ = read_reanswers(run)
    assert {qid: r.score for qid, r in records.items()} == {q.question_id: 1.0 for q in b.questions}
    assert {r.hypothesis for r in records.values()} == {q.answer for q in b.questions}

    forced = reanswer(run, benchmark=b, force=True)  # asked again: the response cache answers
    assert forced.answered == 4 and server.count() - calls_before == 4
    frame = bn.failure_reasons(run, backend="polars")
    assert frame["reanswer_score"].to_list() == [1.0] * 4


def test_reanswer_checks_its_keys_before_the_first_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38: a missing key failed the first question's answer call, in the answerer's words for that
    question; now it is named with the answerer before any call, and nothing is written."""
    from bench_nb.cli import main

    run_benchmark("sqlite", "sample", k=1, run_id="s1", runs_dir=tmp_path, progress=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["reanswer", str(tmp_path / "s1"), "--answerer", "gpt-4o-mini"])
    assert exc.value.code == 1
    [error] = capsys.readouterr().err.splitlines()
    assert error.startswith("error: answerer 'gpt-4o-mini': OPENAI_API_KEY is not set")
    assert read_reanswers(tmp_path / "s1") == ({}, [])


def test_a_reanswer_line_whose_evidence_ids_is_a_string_is_skipped_not_split_into_characters(
    tmp_path: Path,
) -> None:
    """The reader took ``str()`` of each field and iterated ``evidenceIds``: a string ``"D1:3"`` was read as the
    evidence ids D, 1, : and 3, silently. A line with a field of the wrong type is skipped, naming it."""
    good = (
        '{"questionId": "q1", "hypothesis": "Paris", "score": 1, "judge": "contains", "answerer": "extractive", '
        '"evidenceIds": ["D1:3"], "source": "gold-evidence", "createdAt": "2026-01-01T00:00:00.000Z"}'
    )
    (tmp_path / "reanswer.jsonl").write_text(
        good + "\n" + good.replace('["D1:3"]', '"D1:3"').replace("q1", "q2") + "\n"
    )
    records, problems = read_reanswers(tmp_path)
    assert list(records) == ["q1"] and records["q1"].evidence_ids == ("D1:3",) and records["q1"].score == 1.0
    (problem,) = problems
    assert problem.field == "line 2" and "evidenceIds" in problem.message and "skipped" in problem.message


def test_a_reanswer_reads_the_run_and_reanswer_jsonl_under_the_runs_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reanswer read the run and reanswer.jsonl before it took the run's lock: a reanswer by another process
    that ended in between (or a rejudge) was not seen, and its questions were answered again, twice in the
    file. Here the other reanswer (a real ``bench-nb reanswer``) ends just before this one takes the lock."""
    import bench_nb.runner.reanswer as module

    run_benchmark("sqlite", "sample", k=1, run_id="s1", runs_dir=tmp_path, progress=False)
    run = tmp_path / "s1"
    take, others = module.lock_run, []

    def another_reanswer_ends_first(path: Path, command: str) -> Any:
        others.append(_cli("reanswer", str(run)))
        return take(path, command)

    monkeypatch.setattr(module, "lock_run", another_reanswer_ends_first)
    mine = reanswer(run)
    assert len(others) == 1 and others[0].returncode == 0, others[0].stderr
    records, problems = read_reanswers(run)
    assert records and problems == []
    assert mine.answered == 0 and mine.skipped == len(records)  # all done by the other, none twice
    assert len((run / "reanswer.jsonl").read_text().splitlines()) == len(records)
