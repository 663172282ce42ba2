"""``bench-nb run -p sqlite -b longmemeval-v2`` offline, end to end, through the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lmev2_data import QUESTIONS, write_dataset


def test_a_sqlite_run_of_longmemeval_v2_scores_each_question_by_its_rule(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "lme")
    runs = tmp_path / "runs"
    command = [
        *(sys.executable, "-m", "bench_nb", "run", "-p", "sqlite", "-b", "longmemeval-v2", "--tier", "small"),
        *("--dataset", str(data), "--runs-dir", str(runs), "-r", "lme"),
    ]
    env = {**os.environ, "BENCH_NB_QUIET": "1"}
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (
        "differ from their pins" in out.stderr
    )  # a copy that is not the published dataset is said, not hidden
    assert "6 evaluated, 0 failed" in out.stdout and "2 unscored" in out.stdout, out.stdout
    checkpoint = json.loads((runs / "lme" / "checkpoint.json").read_text())
    assert checkpoint["benchmark"] == "longmemeval-v2-small" and checkpoint["judge"] == "lme-v2"
    assert list(checkpoint["questions"]) == [q["id"] for q in QUESTIONS]
    for qid, entry in checkpoint["questions"].items():
        phases = entry["phases"]
        evaluation = phases["evaluate"]
        llm_rule = next(q for q in QUESTIONS if q["id"] == qid)["eval_function"].startswith("llm_")
        # The two LLM-judged rules have no model offline: unscored, never incorrect.
        assert (evaluation["label"] == "unscored") == llm_rule, (qid, evaluation)
        assert (
            evaluation["explanation"].split(":")[0]
            in next(q for q in QUESTIONS if q["id"] == qid)["eval_function"]
            or llm_rule
        )
        # LME-V2's harness records the memory query's duration and the context's tokens per question.
        assert phases["search"]["durationMs"] >= 0
        assert phases["answer"]["contextTokens"] > 0
        assert phases["search"]["results"], qid  # the trajectories were ingested and searched
    # A different tier name for the same folder reads the medium haystacks.
    medium = subprocess.run(
        [*command[:8], "--tier", "medium", *command[10:-2], "-r", "lme-medium", "--limit", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert medium.returncode == 0, medium.stderr[-3000:]
    assert (
        json.loads((runs / "lme-medium" / "checkpoint.json").read_text())["benchmark"]
        == "longmemeval-v2-medium"
    )
