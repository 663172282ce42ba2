"""BEAM end to end: offline on the shared 100K copy (by --dataset and through the download cache), and judged
by a model (the local API server) with scripted 0 / 0.5 / 1 grades giving known per-ability and overall
scores."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_helpers import invoke
from click.testing import CliRunner
from runner_llm import llm_env, llm_server

import bench_nb
from beam_tier import write_tier
from bench_nb.benchmarks import DatasetWarning
from bench_nb.cli import cli
from bench_nb.errors import BenchNbError
from bench_nb.judges.beam import RUBRIC_PROMPT_HASHES
from bench_nb.runformat.load import read_run
from bench_nb.runformat.spec import read_spec
from bench_nb.runner.estimate import estimate_run
from bench_nb.runner.run import run_benchmark
from bench_nb.taxonomy import BEAM_ABILITIES
from llm_server import LLMServer, request_text

__all__ = ["llm_env", "llm_server"]


def scores(run_dir: Path, reading: str = "float") -> dict[str, dict[str, Any]]:
    df = bench_nb.beam_scores(run_dir, reading, backend="polars")
    return {r["ability"]: r for r in df.iter_rows(named=True)}


@pytest.mark.slow
def test_the_100k_tier_runs_offline_end_to_end(beam_100k: Path, tmp_path: Path) -> None:
    out = invoke(
        "run",
        "-p",
        "sqlite",
        "-b",
        "beam",
        "--tier",
        "100K",
        "--dataset",
        beam_100k,
        "--runs-dir",
        tmp_path,
        "-r",
        "beam-100k",
        "--no-progress",
    )
    assert "400 evaluated, 0 failed" in out
    assert re.search(r"BEAM mean score, overall: \d+\.\d \(0\.5 as 0\.5\), \d+\.\d \(as published", out)
    run = tmp_path / "beam-100k"
    ck = json.loads((run / "checkpoint.json").read_text())
    assert ck["benchmark"] == "beam-100k" and ck["judge"] == "rubric"
    q = ck["questions"]["100K-7-summarization-1"]
    assert q["benchNb"]["graded"] is True and len(q["benchNb"]["rubricScores"]) == len(q["benchNb"]["rubric"])
    assert q["benchNb"]["haystackId"] == "100K-7"
    by = scores(run)
    assert list(by) == [*BEAM_ABILITIES, "overall"]
    for ability, r in by.items():
        assert (r["chats"], r["questions"]) == ((20, 400) if ability == "overall" else (20, 40))
        assert r["ci_low"] <= r["score"] <= r["ci_high"] and not r["partial"]
    overall = by["overall"]
    assert overall["comparable"] is True
    assert overall["score"] == pytest.approx(sum(by[a]["score"] for a in BEAM_ABILITIES) / 10)
    published = scores(run, "as-published")
    assert published["overall"]["score"] <= overall["score"]


def test_the_default_path_reads_the_download_cache(
    beam_100k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(beam_100k, tmp_path / "data" / "benchmarks" / "beam-100k", symlinks=True)
    monkeypatch.chdir(tmp_path)
    out = invoke("run", "-p", "sqlite", "-b", "beam", "--limit", "20", "-r", "cached", "--no-progress")
    assert "20 evaluated" in out and "partial: not comparable" in out
    by = scores(tmp_path / "data" / "runs" / "cached")
    assert by["overall"]["chats"] == 1 and by["overall"]["questions"] == 20
    assert by["overall"]["partial"] and by["overall"]["comparable"] is False  # 1 of the tier's 20 chats


def test_beam_refuses_a_binary_primary_judge_and_tiers_of_other_benchmarks(tmp_path: Path) -> None:
    tier = write_tier(tmp_path / "100K", chats=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        with pytest.raises(BenchNbError, match="scored by its rubric: the first judge must be 'rubric'"):
            run_benchmark("sqlite", "beam", dataset=tier, judges="contains", runs_dir=tmp_path / "runs")
    result = CliRunner().invoke(cli, ["run", "-p", "sqlite", "-b", "sample", "--tier", "1M"])
    assert (
        result.exit_code != 0
        and "--tier 1M is not a tier of sample (it has none; beam-1m has it: -b beam-1m)" in result.output
    )


def test_the_dry_run_of_beam_refuses_a_binary_primary_judge_as_the_run_does(tmp_path: Path) -> None:
    tier = write_tier(tmp_path / "100K", chats=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        with pytest.raises(BenchNbError, match="scored by its rubric: the first judge must be 'rubric'"):
            estimate_run("sqlite", "beam", dataset=tier, judges="contains")
        assert estimate_run("sqlite", "beam", dataset=tier).judges[0] == "rubric"  # its default judges


# Chat 1 and 2 share these markers, except abstention (FULL in chat 1, NONE in chat 2).
MARKERS = {
    "abstention": ("FULL",),
    "contradiction_resolution": ("FULL", "HALF"),
    "information_extraction": ("HALF",),
    "instruction_following": ("NONE",),
    "knowledge_update": ("FULL", "FULL", "NONE"),
    "multi_session_reasoning": ("HALF", "HALF"),
    "preference_following": ("FULL",),
    "summarization": ("FULL", "HALF", "HALF", "NONE"),
    "temporal_reasoning": ("FULL",),
}
GRADE = {"FULL": 1, "HALF": 0.5, "NONE": 0}
ANSWER = "1. the Flask skeleton\n2. the login form\n3. the staging deployment"


def scripted(path: str, body: dict[str, Any]) -> str:
    text = request_text(body)
    if "You grade one criterion" in text:
        criterion = text.split("Criterion:\n", 1)[1].split("\n", 1)[0]
        marker = re.search(r"\b(FULL|HALF|NONE)\b", criterion)
        assert marker is not None, criterion
        return json.dumps({"score": GRADE[marker[1]], "reason": f"scripted {marker[1]}"})
    if "You compare the order of events" in text:
        return json.dumps({"positions": [2, 1, 3]})  # tau-b 1/3: (1/3 + 1) / 2 = 2/3
    return ANSWER


def test_an_llm_judged_run_gives_the_expected_scores(tmp_path: Path, llm_env: LLMServer) -> None:
    llm_env.responder = scripted
    tier = write_tier(tmp_path / "100K", chats=2, markers=MARKERS, by_chat={2: {"abstention": ("NONE",)}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)  # a hand-made tier: not the pinned files
        result = run_benchmark(
            "sqlite",
            "beam",
            dataset=tier,
            answerer="gpt-4o-mini",
            judges="rubric:gpt-4o-mini",
            runs_dir=tmp_path / "runs",
            run_id="judged",
            progress=False,
        )
    assert (result.status, result.evaluated) == ("completed", 20)
    hashes = json.loads((result.run_dir / "checkpoint.json").read_text())["benchNb"]["promptHashes"]
    assert (
        hashes["judge:rubric:gpt-4o-mini:beam-rubric"] == RUBRIC_PROMPT_HASHES["beam-rubric"]
    )  # recorded, so
    assert read_spec(read_run(result.run_dir)).judge_prompt  # a changed judge prompt is not like for like
    expected_float = {
        "abstention": 0.5,
        "contradiction_resolution": 0.75,
        "event_ordering": 2 / 3,
        "information_extraction": 0.5,
        "instruction_following": 0.0,
        "knowledge_update": 2 / 3,
        "multi_session_reasoning": 0.5,
        "preference_following": 1.0,
        "summarization": 0.5,
        "temporal_reasoning": 1.0,
    }
    expected_published = expected_float | {
        "contradiction_resolution": 0.5,
        "information_extraction": 0.0,
        "multi_session_reasoning": 0.0,
        "summarization": 0.25,
    }
    for reading, expected in (("float", expected_float), ("as-published", expected_published)):
        by = scores(result.run_dir, reading)
        assert {a: by[a]["score"] for a in BEAM_ABILITIES} == pytest.approx(expected)
        assert by["overall"]["score"] == pytest.approx(sum(expected.values()) / 10)
        assert by["overall"]["questions"] == 20 and by["abstention"]["chats"] == 2
    assert scores(result.run_dir)["overall"]["score"] == pytest.approx(6.0833333 / 10)
    assert scores(result.run_dir, "as-published")["overall"]["score"] == pytest.approx(4.5833333 / 10)
    texts = [request_text(c.body) for c in llm_env.calls]
    assert any("Criterion:\nLLM response should state: HALF criterion 1 of summarization" in t for t in texts)
    q = bench_nb.questions_df(result.run_dir, backend="polars").filter(
        pl.col("question_id") == "100K-1-summarization-0"
    )
    assert q["score"][0] == 0.5 and q["published_score"][0] == 0.25 and q["graded"][0]
    lines = [json.loads(x) for x in (result.run_dir / "judgments.jsonl").read_text().splitlines()]
    summ = next(x for x in lines if x["questionId"] == "100K-1-summarization-0")
    assert summ["items"] == [1.0, 0.5, 0.5, 0.0] and summ["publishedScore"] == 0.25


def test_rejudging_a_beam_run_with_a_model_makes_it_primary(tmp_path: Path, llm_env: LLMServer) -> None:
    from bench_nb.runner.rejudge import rejudge

    llm_env.responder = scripted
    tier = write_tier(tmp_path / "100K", chats=2, markers=MARKERS, by_chat={2: {"abstention": ("NONE",)}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        result = run_benchmark(
            "sqlite",
            "beam",
            dataset=tier,
            answerer="gpt-4o-mini",
            runs_dir=tmp_path / "runs",
            run_id="offline",
            progress=False,
        )
    assert json.loads((result.run_dir / "checkpoint.json").read_text())["judge"] == "rubric"
    rejudge(result.run_dir, ["rubric:gpt-4o-mini"], primary="rubric:gpt-4o-mini")
    ck = json.loads((result.run_dir / "checkpoint.json").read_text())
    assert ck["judge"] == "rubric:gpt-4o-mini"
    q = ck["questions"]["100K-1-summarization-0"]
    assert q["phases"]["evaluate"]["score"] == 0.5 and q["benchNb"]["publishedScore"] == 0.25
    assert scores(result.run_dir)["overall"]["score"] == pytest.approx(6.0833333 / 10)
    assert scores(result.run_dir, "as-published")["overall"]["score"] == pytest.approx(4.5833333 / 10)
