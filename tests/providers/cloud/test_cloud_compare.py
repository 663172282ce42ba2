"""The issue's "done when": ``bench-nb compare -p supermemory,mem0,zep,sqlite -b locomo --limit 50`` runs end
to end against the three fake APIs (the CLI in a subprocess, base URLs and dummy keys in its environment),
every run has the same k, answer prompt and judge, its report shows the four providers under them, and
``bench-nb clean`` deletes what the runs stored at the providers. No key reaches any file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_services import FakeMem0, FakeSupermemory, FakeZep

from bench_nb.frames.questions import questions_frame, runs_frame
from bench_nb.runformat.load import load_runs, read_run
from bench_nb.runformat.spec import read_spec
from bench_nb.runner.comparison import check_like_for_like

PROVIDERS = ("supermemory", "mem0", "zep", "sqlite")
COMPARE_ID = "cloud4"


def _cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def compared(locomo_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The four-provider comparison, made once for the tests of this module."""
    root = tmp_path_factory.mktemp("compare")
    with (
        FakeSupermemory(polls_to_ready=2) as sm,
        FakeMem0(polls_to_ready=2) as m0,
        FakeZep(polls_to_ready=2) as zep,
    ):
        env = {
            **os.environ,
            "SUPERMEMORY_API_KEY": sm.key,
            "SUPERMEMORY_BASE_URL": sm.url,
            "MEM0_API_KEY": m0.key,
            "MEM0_BASE_URL": m0.url,
            "ZEP_API_KEY": zep.key,
            "ZEP_BASE_URL": zep.url,
            "BENCH_NB_QUIET": "1",
        }
        proc = _cli(
            "compare",
            "-p",
            ",".join(PROVIDERS),
            "-b",
            "locomo",
            "--dataset",
            str(locomo_path),
            "--limit",
            "50",
            "--compare-id",
            COMPARE_ID,
            "--runs-dir",
            str(root / "runs"),
            "--no-progress",
            env=env,
            cwd=root,
        )
        yield {
            "root": root,
            "proc": proc,
            "services": {"supermemory": sm, "mem0": m0, "zep": zep},
            "env": env,
        }


@pytest.mark.slow
def test_compare_runs_end_to_end_like_for_like(compared: dict[str, Any]) -> None:
    proc, root = compared["proc"], compared["root"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    manifest_path = root / "compare" / COMPARE_ID / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert [r["provider"] for r in manifest["runs"]] == list(PROVIDERS)
    assert len(manifest["targetQuestionIds"]) == 50

    runs = load_runs(manifest_path, strict=True)
    assert check_like_for_like(runs) == []
    frame = runs_frame(runs)
    assert frame["provider"].to_list() == list(PROVIDERS)
    assert set(frame["k"].to_list()) == {10}
    assert set(frame["judge"].to_list()) == {"contains"} and frame["evaluate_completed"].to_list() == [50] * 4
    settings = [run.checkpoint.benchNb for run in runs]  # type: ignore[union-attr]
    for key in (
        "k",
        "answerer",
        "judges",
        "primaryJudge",
        "promptHashes",
        "questionSetHash",
        "benchmarkSha256",
    ):
        assert len({json.dumps(s.get(key), sort_keys=True) for s in settings}) == 1, key
    assert settings[0]["promptHashes"]["answer"]  # the answer prompt is recorded, and the same for all four

    questions = questions_frame(runs)
    assert questions.height == 200 and questions["error"].null_count() == 200
    for name, svc in compared["services"].items():
        assert svc.violations == [], name
        searches = svc.calls("POST", "/search")
        assert len(searches) == 50, name  # one search per question
        asked = {
            r.body.get("limit") or r.body.get("top_k") or int(r.query.get("page_size", 0)) for r in searches
        }
        assert asked == {10}, name  # the run's k, for every provider
    # Each cloud provider got the first LoCoMo conversation's 19 dated sessions in one run-specific container,
    # named opaquely: the run id and 16 random hex digits, nothing of the benchmark (issue 40).
    (name,) = compared["services"]["supermemory"].namespaces
    assert (
        re.fullmatch(rf"{re.escape(COMPARE_ID)}-supermemory-[0-9a-f]{{16}}", name) and "conv-26" not in name
    )
    assert len(compared["services"]["supermemory"].namespaces[name]) == 19


@pytest.mark.slow
def test_retrieval_metrics_at_the_level_each_provider_allows(compared: dict[str, Any]) -> None:
    """LoCoMo's evidence is message ids: sqlite is scored by message, Supermemory and Mem0 (whose hits are
    memories of a session) by session, and Zep's facts (traced to nothing of ours) get no metrics at all."""
    runs = {
        run.checkpoint.provider: run  # type: ignore[union-attr]
        for run in load_runs(compared["root"] / "compare" / COMPARE_ID / "manifest.json")
    }
    expected = {"sqlite": "message", "supermemory": "session", "mem0": "session", "zep": None}
    for name, level in expected.items():
        ck = runs[name].checkpoint
        assert ck is not None
        with_evidence = [q for q in ck.questions.values() if (q.benchNb or {}).get("evidenceIds")]
        assert with_evidence, name
        for q in with_evidence:
            extra, metrics = q.benchNb or {}, q.phases.evaluate.retrievalMetrics
            assert extra.get("retrievalLevel") == level, (name, q.questionId)
            if level is None:
                assert metrics is None and "evidence_level 'none'" in extra["retrievalNote"]
            else:
                assert metrics is not None and metrics.k == 10
        if level == "session":
            assert all("mapped to its sessions" in (q.benchNb or {})["retrievalNote"] for q in with_evidence)
        report = json.loads((runs[name].path / "report.json").read_text())
        assert ("retrieval" in report) == (level is not None), name


@pytest.mark.slow
def test_no_key_reaches_a_file(compared: dict[str, Any]) -> None:
    keys = [svc.key for svc in compared["services"].values()]
    for path in compared["root"].rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", "replace")
            assert not any(key in text for key in keys), path


@pytest.mark.slow
@pytest.mark.notebook
def test_the_compare_report_shows_four_providers_under_one_k_prompt_and_judge(
    compared: dict[str, Any],
) -> None:
    from bench_nb.reports import build_report

    root = compared["root"]
    manifest = root / "compare" / COMPARE_ID / "manifest.json"
    built = build_report(
        "compare", {"runs": str(manifest), "title": "Cloud providers"}, root / "reports" / "compare.html"
    )
    html = built.path.read_text(encoding="utf-8")
    runs = load_runs(manifest)
    settings = runs[0].checkpoint.benchNb  # type: ignore[union-attr]
    prompts = {run.checkpoint.benchNb["promptHashes"]["answer"] for run in runs}  # type: ignore[union-attr]
    assert prompts == {settings["promptHashes"]["answer"]}
    # The report's settings line: the four providers under one k, one answer prompt and one judge.
    line = (
        f"All 4 runs ({', '.join(PROVIDERS)}): k=10, answerer {settings['answerer']}, "
        f"answer prompt {settings['promptHashes']['answer'][:12]}, judge contains (no prompt), "
        f"question set {settings['questionSetHash'][:12]} (50 questions); "
    )
    # each run's settings fingerprint: its provider settings (the local servers' URLs) are its own
    fingerprints = {run.checkpoint.provider: read_spec(run).fingerprint for run in runs}  # type: ignore[union-attr]  # labels
    if len(set(fingerprints.values())) == 1:
        line += f"settings fingerprint {next(iter(fingerprints.values()))}"
    else:
        line += "settings fingerprints " + ", ".join(f"{r}={f}" for r, f in fingerprints.items())
    assert f'<div class="bnb-settings">{line}</div>' in html
    assert "not like for like" not in html.lower()  # no like-for-like warning anywhere in the report


@pytest.mark.slow
def test_clean_deletes_what_each_run_stored(compared: dict[str, Any]) -> None:
    root, services = compared["root"], compared["services"]
    for name in ("supermemory", "mem0", "zep"):
        run_dir = root / "runs" / f"{COMPARE_ID}-{name}"
        assert read_run(run_dir).checkpoint is not None
        proc = _cli("clean", str(run_dir), env=compared["env"], cwd=root)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Cleared 1 container(s)" in proc.stdout
    assert services["supermemory"].namespaces == {}
    assert services["mem0"].users == {}
    assert services["zep"].users == {}
    for name, svc in services.items():
        assert svc.violations == [], name
