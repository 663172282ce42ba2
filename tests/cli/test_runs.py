"""bench-nb status, show-failures and summary, on MemoryBench's shared example and variants of it.

MemoryBench's own outputs for the example are in ``expected/cli-*.txt``; ours agree on the counts and the
failures listed. Where ours differ it is on purpose: ``status`` also counts failures and the success rate,
``show-failures`` also lists errored questions (MemoryBench lists only incorrect ones).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench_nb.cli import cli
from bench_nb.metrics import wilson_interval

RUN = "fx-compare-supermemory"


def invoke(*args: str | Path, ok: bool = True) -> Result:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def example_run(mb_example: Path) -> Path:
    return mb_example / "data" / "runs" / RUN


def _counts(text: str) -> dict[str, int]:
    return {
        m[1]: int(m[2])
        for m in re.finditer(
            r"^(Total Questions|Ingested|Indexed|Searched|Answered|Evaluated): (\d+)", text, re.M
        )
    }


def test_status_counts_agree_with_memorybench(example_run: Path, mb_example: Path) -> None:
    expected = (mb_example / "expected" / "cli-status.txt").read_text()
    out = invoke("status", example_run).stdout
    assert (
        _counts(out)
        == _counts(expected)
        == {
            "Total Questions": 20,
            "Ingested": 20,
            "Indexed": 20,
            "Searched": 20,
            "Answered": 20,
            "Evaluated": 19,
        }
    )
    for line in ("Run: fx-compare-supermemory", "Provider: supermemory", "Benchmark: locomo"):
        assert line in out and line in expected
    assert "Evaluated: 19  (1 failed)" in out
    assert "Success rate: 95.0% (19 of 20; 1 failed, 0 not finished, 0 unscored)" in out


def test_status_of_an_unfinished_run_with_a_missing_results_file(example_run: Path, tmp_path: Path) -> None:
    run = tmp_path / RUN
    shutil.copytree(example_run, run)
    ck = json.loads((run / "checkpoint.json").read_text())
    for qid in ("conv-fx2-q8", "conv-fx2-q9"):  # answered, not yet judged
        ck["questions"][qid]["phases"]["evaluate"] = {"status": "pending"}
    ck["questions"]["conv-fx2-q7"]["phases"]["evaluate"] = {"status": "in_progress"}
    (run / "checkpoint.json").write_text(json.dumps(ck, indent=2))
    (run / "results" / "conv-fx1-q3.json").unlink()
    result = invoke("status", run)
    assert _counts(result.stdout)["Evaluated"] == 16
    assert "Success rate: 80.0% (16 of 20; 1 failed, 3 not finished, 0 unscored)" in result.stdout
    assert "problem:" in result.stderr and "conv-fx1-q3" in result.stderr


def _failure_ids(text: str) -> list[str]:
    return re.findall(r"^\[\d+/\d+\] (\S+)", text, re.M)


def test_show_failures_lists_memorybench_failures_and_errored_questions(
    example_run: Path, mb_example: Path
) -> None:
    expected = (mb_example / "expected" / "cli-show-failures.txt").read_text()
    out = invoke("show-failures", example_run).stdout
    incorrect = _failure_ids(expected)
    assert incorrect == ["conv-fx1-q5", "conv-fx2-q6", "conv-fx2-q8"]
    assert _failure_ids(out) == [
        "conv-fx1-q5",
        "conv-fx1-q9",
        "conv-fx2-q6",
        "conv-fx2-q8",
    ]  # + the errored one
    assert "Showing 4 of 4 failures" in out
    # Each incorrect question's block says what MemoryBench's says: question, truth, answer, verdict, results.
    for qid in incorrect:
        theirs = expected.split(f"] {qid}\n", 1)[1].split("\n[", 1)[0]
        ours = out.split(f"] {qid}\n", 1)[1].split("\n[", 1)[0]
        for key in ("Question:", "Ground Truth:", "Judge Verdict:", "Explanation:"):
            line = next(x for x in theirs.splitlines() if x.startswith(key))
            assert line in ours.splitlines(), (qid, key)
        answer = theirs.split("Generated Answer: ", 1)[1].split("\nJudge Verdict", 1)[0]
        assert f"Generated Answer: {answer}\n" in ours
        hits = re.findall(r'^\s+\d+\. \[N/A\] "(.*)"$', theirs, re.M)
        assert len(hits) == 3 and all(hit in ours for hit in hits), qid
    errored = out.split("] conv-fx1-q9\n", 1)[1].split("\n[", 1)[0]
    assert "Error in evaluate: Rate limit reached for gpt-4o" in errored


def test_show_failures_limit(example_run: Path) -> None:
    out = invoke("show-failures", example_run, "--limit", "1", "--results", "1").stdout
    assert "Showing 1 of 4 failures" in out and _failure_ids(out) == ["conv-fx1-q5"]
    assert "  1. " in out and "  2. " not in out


def test_summary_shows_memscore_interval_and_counts(
    example_run: Path, mb_example: Path, tmp_path: Path
) -> None:
    expected = (mb_example / "expected" / "cli-report.txt").read_text()
    (memscore,) = re.findall(r"MemScore: (.+)", expected)
    out = invoke("summary", example_run).stdout
    row = next(line for line in out.splitlines() if line.startswith(RUN))
    low, high = wilson_interval(16, 19)
    assert memscore in row and f"{low:.0%}-{high:.0%}" in row and "19/20" in row
    assert row.split()[-1] == "1"  # failed

    # several runs: a copy without token fields (a run made before 2026-03-23) and a report.json-only run
    old = tmp_path / "runs" / "old-run"
    shutil.copytree(example_run, old)
    ck = json.loads((old / "checkpoint.json").read_text())
    ck["runId"] = "old-run"
    for q in ck["questions"].values():
        for key in ("promptTokens", "basePromptTokens", "contextTokens"):
            q["phases"]["answer"].pop(key, None)
    (old / "checkpoint.json").write_text(json.dumps(ck))
    shared = tmp_path / "runs" / "shared-run"
    shared.mkdir()
    report = json.loads((mb_example / "expected" / "report.json").read_text())
    report["runId"] = "shared-run"
    (shared / "report.json").write_text(json.dumps(report))
    out = invoke("summary", str(tmp_path / "runs" / "*"), example_run).stdout
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert list(rows) == ["old-run", "shared-run", RUN]
    assert "84% / 450ms / n/a" in rows["old-run"]
    # report.json has no per-question tokens; the run shows the MemScore MemoryBench wrote in it
    assert "84% / 450ms / 178tok" in rows["shared-run"] and "19/19" in rows["shared-run"]


def test_summary_without_runs_fails_clearly(tmp_path: Path) -> None:
    result = invoke("summary", str(tmp_path / "nothing-*"), ok=False)
    assert result.exit_code != 0
    assert "matched no run directory" in result.output and "no run loaded" in result.output


def test_show_failures_by_question_id_or_type(example_run: Path) -> None:
    out = invoke("show-failures", example_run, "-q", "conv-fx2-q6", "-q", "conv-fx1-q9").stdout
    assert _failure_ids(out) == ["conv-fx1-q9", "conv-fx2-q6"] and "Showing 2 of 2 failures" in out
    assert _failure_ids(invoke("show-failures", example_run, "-t", "Abstention").stdout) == [
        "conv-fx1-q9",
        "conv-fx2-q8",
    ]  # the normalised type, any case
    assert _failure_ids(invoke("show-failures", example_run, "--type", "multi-hop").stdout) == [
        "conv-fx1-q5",
        "conv-fx2-q6",
    ]  # the raw type
    bad = invoke("show-failures", example_run, "-t", "nope", ok=False)
    assert bad.exit_code == 2 and "no question type 'nope'" in bad.output and "abstention" in bad.output
    bad = invoke("show-failures", example_run, "-q", "conv-zz", ok=False)
    assert bad.exit_code == 2 and "no question 'conv-zz'" in bad.output


def test_show_failures_takes_a_run_id_as_status_does(example_run: Path) -> None:
    # status took a run id (under --runs-dir) or a directory; show-failures only a directory, so the id
    # `bench-nb run` prints was "Directory 'fx-compare-supermemory' does not exist."
    by_dir = invoke("show-failures", example_run, "-n", "2").stdout
    assert invoke("show-failures", RUN, "--runs-dir", example_run.parent, "-n", "2").stdout == by_dir
    assert (
        invoke("status", RUN, "--runs-dir", example_run.parent).stdout == invoke("status", example_run).stdout
    )
    bad = invoke("show-failures", "no-such-run", "--runs-dir", example_run.parent, ok=False)
    assert bad.exit_code == 2 and "no run directory 'no-such-run', and no run 'no-such-run' in" in bad.output
