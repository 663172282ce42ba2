"""``bench-nb run``, ``compare`` and ``clean``, including the issue's Done-when commands on the real datasets."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from cli_helpers import invoke, run_args
from click.testing import CliRunner

from bench_nb.cli import cli
from bench_nb.errors import BenchNbError, ComparisonError
from bench_nb.frames.questions import questions_df
from bench_nb.providers.sqlite import SqliteProvider
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.load import load_runs


def _expected_keys(mb_example: Path) -> list[str]:
    return list(json.loads((mb_example / "expected" / "report.json").read_text()))


def _check_run(run_dir: Path, mb_example: Path, n: int) -> dict:
    df = questions_df(run_dir)
    assert len(df) == n and set(df["status"]) == {"evaluated"}
    assert df["prompt_tokens"].notna().all() and (df["tokenizer"] == "tiktoken:o200k_base").all()
    report = json.loads((run_dir / "report.json").read_text())
    assert list(report) == _expected_keys(mb_example)
    assert report["summary"]["totalQuestions"] == n and len(report["evaluations"]) == n
    expected_eval = json.loads((mb_example / "expected" / "report.json").read_text())["evaluations"][0]
    assert list(report["evaluations"][0]) == list(expected_eval)
    return report


def test_locomo_limit_200_offline(tmp_path: Path, locomo_path: Path, mb_example: Path) -> None:
    out = invoke(
        *run_args("--dataset", locomo_path, benchmark="locomo", limit=200, run_id="loc", runs_dir=tmp_path)
    )
    assert "loc: completed, 200 evaluated, 0 failed" in out
    report = _check_run(tmp_path / "loc", mb_example, 200)
    # The true LoCoMo labels, not MemoryBench's (category 2 is temporal).
    assert set(report["byQuestionType"]) <= {
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
    }
    ck = msgspec.json.decode((tmp_path / "loc" / "checkpoint.json").read_bytes(), type=Checkpoint)
    assert ck.questions["conv-26-q0"].questionType == "temporal"
    # One container per conversation: the first 200 questions span two conversations.
    assert len({q.containerTag for q in ck.questions.values()}) == 2
    assert "retrieval" in report and report["retrieval"]["k"] == 10


def test_longmemeval_oracle_limit_200_offline(
    tmp_path: Path, longmemeval_path: Path, mb_example: Path
) -> None:
    invoke(
        *run_args(
            "--dataset", longmemeval_path, benchmark="longmemeval", limit=200, run_id="lme", runs_dir=tmp_path
        )
    )
    _check_run(tmp_path / "lme", mb_example, 200)
    ck = msgspec.json.decode((tmp_path / "lme" / "checkpoint.json").read_bytes(), type=Checkpoint)
    assert len({q.containerTag for q in ck.questions.values()}) == 200  # a question per haystack
    assert all(q.questionDate for q in ck.questions.values())


def test_run_resumes_with_the_run_id_alone(tmp_path: Path) -> None:
    invoke(*run_args("--sample", "2", "-k", "4", run_id="s", runs_dir=tmp_path))
    ck_path = tmp_path / "s" / "checkpoint.json"
    first = msgspec.json.decode(ck_path.read_bytes(), type=Checkpoint)
    assert first.sampling is not None and first.sampling.perCategory == 2
    out = invoke("run", "-r", "s", "--runs-dir", tmp_path, "--no-progress")
    assert "s: completed, 12 evaluated" in out
    again = msgspec.json.decode(ck_path.read_bytes(), type=Checkpoint)
    # Nothing ran again: every phase record is the one the first run wrote.
    assert again.questions == first.questions
    result = CliRunner().invoke(cli, ["run", "-r", "s", "-k", "5", "--runs-dir", str(tmp_path)])
    assert isinstance(result.exception, ComparisonError)  # bench-nb's main prints it as one line, exit 1
    assert "retrieval limit k: 4 in the run, 5 now" in str(result.exception)


def test_compare_runs_every_provider_like_for_like(tmp_path: Path) -> None:
    runs = tmp_path / "data" / "runs"
    out = invoke(
        "compare",
        "-p",
        "sqlite,no-memory",
        "-b",
        "sample",
        "--limit",
        "6",
        "--compare-id",
        "cmp",
        "--runs-dir",
        runs,
        "--no-progress",
    )
    manifest = tmp_path / "data" / "compare" / "cmp" / "manifest.json"
    assert f"Manifest: {manifest}" in out
    body = json.loads(manifest.read_text())
    assert [r["runId"] for r in body["runs"]] == ["cmp-sqlite", "cmp-no-memory"]
    assert len(body["targetQuestionIds"]) == 6 and "benchNb" not in body
    loaded = load_runs(manifest)
    assert [r.run_id for r in loaded] == ["cmp-sqlite", "cmp-no-memory"]


def test_compare_existing_runs_refuses_a_mismatch(tmp_path: Path) -> None:
    for rid, k in (("a", "3"), ("b", "5")):
        invoke(*run_args("-k", k, limit=3, run_id=rid, runs_dir=tmp_path))
    result = CliRunner().invoke(
        cli, ["compare", "--runs", str(tmp_path / "a"), "--runs", str(tmp_path / "b")]
    )
    assert isinstance(result.exception, ComparisonError)
    assert "not like for like" in str(result.exception)
    assert "retrieval limit k differs: a=3, b=5" in result.output  # also printed as a warning first
    out = invoke(
        "compare", "--runs", tmp_path / "a", "--runs", tmp_path / "b", "--compare-id", "x", "--allow-mismatch"
    )
    manifest = tmp_path.parent / "compare" / "x" / "manifest.json"
    assert f"Manifest: {manifest}" in out
    assert json.loads(manifest.read_text())["benchNb"]["mismatches"] == [
        "retrieval limit k differs: a=3, b=5"
    ]


def test_clean_clears_every_container(tmp_path: Path) -> None:
    invoke(*run_args(limit=20, run_id="c", runs_dir=tmp_path))
    ck = msgspec.json.decode((tmp_path / "c" / "checkpoint.json").read_bytes(), type=Checkpoint)
    tags = {q.containerTag for q in ck.questions.values()}
    assert all(SqliteProvider(tmp_path / "c").store.count(t) > 0 for t in tags)
    out = invoke("clean", tmp_path / "c")
    assert f"Cleared {len(tags)} container(s)" in out
    assert not any(SqliteProvider(tmp_path / "c").store.path(t).exists() for t in tags)


def test_usage_errors_are_clear(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "-b", "sample", "--runs-dir", str(tmp_path)])
    assert result.exit_code == 2 and "-p PROVIDER" in result.output
    result = CliRunner().invoke(cli, run_args("--sample", "1", limit=2))
    assert isinstance(result.exception, BenchNbError) and "not several" in str(result.exception)


@pytest.mark.parametrize("flag", ["--fail-fast", "--isolate-per-question"])
def test_flags_reach_the_run(tmp_path: Path, flag: str) -> None:
    invoke(*run_args(flag, limit=4, run_id="f", runs_dir=tmp_path))
    ck = msgspec.json.decode((tmp_path / "f" / "checkpoint.json").read_bytes(), type=Checkpoint)
    n_containers = len({q.containerTag for q in ck.questions.values()})
    assert n_containers == (4 if flag == "--isolate-per-question" else 1)
