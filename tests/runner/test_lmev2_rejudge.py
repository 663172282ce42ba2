"""A LongMemEval-V2 run graded offline (its LLM-judged rules unscored), then re-judged with lme-v2:<model>
against the fake OpenAI server: the run keeps each question's eval_function so the rules apply again."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from runner_llm import llm_env, llm_server

from bench_nb.benchmarks import DatasetWarning
from bench_nb.runner import run_benchmark
from bench_nb.runner.rejudge import rejudge
from llm_server import LLMServer
from lmev2_data import write_dataset

__all__ = ["llm_env", "llm_server"]


def test_rejudging_grades_the_llm_rules_that_were_unscored_offline(
    tmp_path: Path, llm_env: LLMServer
) -> None:
    llm_env.responder = lambda path, body: json.dumps({"label": 1, "reason": "captures it"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        result = run_benchmark(
            "sqlite",
            "longmemeval-v2",
            dataset=write_dataset(tmp_path / "lme"),
            runs_dir=tmp_path / "runs",
            run_id="offline",
            progress=False,
        )
    ck = json.loads((result.run_dir / "checkpoint.json").read_text())
    assert ck["questions"]["web_gotcha_004"]["benchNb"]["evalFunction"] == "llm_gotchas_checker"
    assert ck["questions"]["web_gotcha_004"]["phases"]["evaluate"]["label"] == "unscored"
    assert not llm_env.calls  # offline: no model asked
    rejudge(result.run_dir, ["lme-v2:gpt-4o-mini"], primary="lme-v2:gpt-4o-mini")
    ck = json.loads((result.run_dir / "checkpoint.json").read_text())
    assert ck["judge"] == "lme-v2:gpt-4o-mini"
    labels = {qid: q["phases"]["evaluate"]["label"] for qid, q in ck["questions"].items()}
    # The two LLM rules are graded by the model; the others keep their deterministic verdicts.
    assert labels["web_gotcha_004"] == "correct" and labels["sn_abs_006"] == "correct"
    assert labels["web_procedure_003"] == "incorrect"
    systems = sorted(c.body["messages"][0]["content"][:60] for c in llm_env.calls)
    assert len(systems) == 2 and systems[0].startswith("You are a strict grader for flawed-premise")
