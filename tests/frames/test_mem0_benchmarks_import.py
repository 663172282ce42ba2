"""mem0's memory-benchmarks unified results (``benchmarks/locomo/run.py``'s ``locomo_results_<ts>.json``, read from
a fork that keeps the upstream runner) load as one run per retrieval depth on LoCoMo's question ids.

The fixture (tests/fixtures/harnesses/mem0-benchmarks/) is written by hand from that runner's output dict.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_nb import load_runs, questions_df
from bench_nb.errors import RunFormatError
from bench_nb.metrics.paired import paired_comparison
from bench_nb.runformat.harnesses import find_importer
from stats_fixtures import write_run

FIXTURE = (
    Path(__file__).parents[1]
    / "fixtures"
    / "harnesses"
    / "mem0-benchmarks"
    / "locomo_results_20260101_000000.json"
)


def test_one_run_per_retrieval_depth_on_locomos_ids() -> None:
    assert find_importer(FIXTURE)[0].name == "mem0-benchmarks"
    runs = load_runs(FIXTURE)
    assert runs.all_problems == []
    assert [r.run_id for r in runs] == ["oss-top_10", "oss-top_50"]
    assert {r.harness for r in runs} == {"mem0-benchmarks"}
    assert [r.checkpoint.benchNb["retrievalDepth"] for r in runs] == [10, 50]  # type: ignore[union-attr,index]
    assert runs[0].imported is not None and runs[0].imported.judge == "gpt-4o-mini"
    # The format can be named, as docs/loading.md says (it was refused: not among load_runs' formats).
    assert [r.run_id for r in load_runs(FIXTURE, format="mem0-benchmarks")] == ["oss-top_10", "oss-top_50"]
    q = questions_df(runs, backend="polars").sort("run_id", "question_id")
    scores = {(r, qid): s for r, qid, s in q.select("run_id", "question_id", "score").iter_rows()}
    assert scores == {
        ("oss-top_10", "conv-26-q0"): 1.0,
        ("oss-top_10", "conv-26-q1"): 0.0,
        ("oss-top_10", "conv-30-q2"): 0.0,
        ("oss-top_50", "conv-26-q0"): 1.0,
        ("oss-top_50", "conv-26-q1"): 1.0,
        ("oss-top_50", "conv-30-q2"): 0.0,
    }
    assert q.filter(q["run_id"] == "oss-top_10")["search_ms"].to_list() == [210.5, 190.0, 150.0]


def test_depths_pair_with_each_other_and_with_a_native_run(tmp_path: Path) -> None:
    ids = ["conv-26-q0", "conv-26-q1", "conv-30-q2"]
    native = write_run(
        tmp_path / "runs",
        "native",
        answers=dict.fromkeys(ids, "x"),
        primary_scores={"conv-26-q0": 0, "conv-26-q1": 0, "conv-30-q2": 1},
        bench_nb=None,
        questions=[{"id": i, "q": i, "gt": "g", "type": "temporal"} for i in ids],
    )
    runs = load_runs([native, FIXTURE])
    depth = paired_comparison(runs, "oss-top_50", "oss-top_10")
    assert depth.n_pairs == 3 and (depth.a_only, depth.both_correct) == (1, 1)
    cmp = paired_comparison(runs, "oss-top_50", "native")
    assert cmp.n_pairs == 3 and cmp.accuracy_b == pytest.approx(1 / 3)


def test_a_damaged_file_names_file_field_and_question(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text())
    data["evaluations"][1]["cutoff_results"]["top_50"]["score"] = "high"
    del data["evaluations"][2]["cutoff_results"]["top_10"]
    bad = tmp_path / "locomo_results_x.json"
    bad.write_text(json.dumps(data))
    with pytest.warns(UserWarning):
        runs = load_runs(bad)
    problems = [str(p) for r in runs for p in r.problems]
    assert any(
        str(bad) in p
        and "(field evaluations[1].cutoff_results.top_50.score)" in p
        and "[question conv-26-q1]" in p
        for p in problems
    )
    assert any("(field evaluations[2].cutoff_results.top_10)" in p for p in problems)
    top10 = next(r for r in runs if r.run_id == "oss-top_10")
    assert sorted(top10.checkpoint.questions) == ["conv-26-q0", "conv-26-q1"]  # type: ignore[union-attr]
    with pytest.raises(RunFormatError, match="cutoff_results"):
        load_runs(bad, strict=True)


def test_every_depth_exports_to_the_run_store(tmp_path: Path) -> None:
    from bench_nb.frames.store import export_runs

    first = export_runs(FIXTURE, tmp_path / "store")
    assert sorted(first.written) == ["oss-top_10", "oss-top_50"] and first.unchanged == []
    q = questions_df(load_runs(tmp_path / "store"), backend="polars")
    assert sorted(set(q["run_id"])) == ["oss-top_10", "oss-top_50"] and len(q) == 6
    # A re-export of the unchanged file counts runs, not files: both depths unchanged, nothing written.
    again = export_runs(FIXTURE, tmp_path / "store")
    assert sorted(again.unchanged) == ["oss-top_10", "oss-top_50"] and again.written == []
    assert str(again).endswith("0 run(s) written, 2 unchanged")


def test_upstream_shape_with_depth_and_token_budget_cutoffs(tmp_path: Path) -> None:
    """issue 40: a ``max_tokens_<N>`` cutoff was recorded as a retrieval depth of 2^30. The file is written in the
    shape issue 40's survey gives for mem0ai/memory-benchmarks' ``<bench>_results_<ts>.json`` (metadata with
    ``run_id``, ``mode``, ``provider``, ``top_k``, ``cutoffs``, ``seed``; ``cutoff_results`` with ``judgment``
    PASS/FAIL): the upstream repository could not be read here, so no upstream commit is cited."""

    def cut(judgment: str, answer: str) -> dict[str, object]:
        return {
            "judgment": judgment,
            "score": 1 if judgment == "PASS" else 0,
            "generated_answer": answer,
            "reason": "r",
        }

    evaluations = [
        {
            "question_id": qid,
            "question": f"Question {qid}?",
            "ground_truth_answer": "yes",
            "category_name": "single-session-user",
            "retrieval": {"search_latency_ms": 40.0},
            "cutoff_results": {"top_20": cut(a, "yes"), "max_tokens_4000": cut(b, "no")},
        }
        for qid, a, b in (("q1", "PASS", "FAIL"), ("q2", "FAIL", "PASS"), ("q3", "PASS", "PASS"))
    ]
    evaluations[2]["cutoff_results"]["max_tokens_4000"].pop("score")  # type: ignore[index,union-attr]
    doc = {
        "metadata": {
            "benchmark": "longmemeval",
            "run_id": "lme-run",
            "mode": "answerer",
            "answerer_model": "gpt-4o-mini",
            "judge_model": "gpt-4o-mini",
            "provider": "mem0",
            "top_k": 200,
            "cutoffs": ["max_tokens_4000", "top_20"],
            "seed": 42,
        },
        "metrics_by_cutoff": {"top_20": {"overall": {"accuracy": 2 / 3}}, "max_tokens_4000": {"overall": {}}},
        "evaluations": evaluations,
    }
    path = tmp_path / "longmemeval_results_20261201_000000.json"
    path.write_text(json.dumps(doc))
    runs = load_runs(path)
    assert runs.all_problems == []
    assert [r.run_id for r in runs] == ["lme-run-top_20", "lme-run-max_tokens_4000"]
    depth, budget = (r.checkpoint.benchNb or {} for r in runs)
    assert depth["retrievalDepth"] == 20 and "contextTokenBudget" not in depth
    assert budget["contextTokenBudget"] == 4000 and budget["retrievalDepth"] == 200  # the top_k it cut from
    labels = {
        (r.run_id, qid): q.phases.evaluate.label for r in runs for qid, q in r.checkpoint.questions.items()
    }
    assert (
        labels[("lme-run-top_20", "q1")] == "correct"
        and labels[("lme-run-max_tokens_4000", "q1")] == "incorrect"
    )
    assert labels[("lme-run-max_tokens_4000", "q3")] == "correct"  # from judgment PASS, no score


def test_an_unknown_cutoff_label_is_a_problem_not_a_huge_depth(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text())
    data["metadata"]["top_k_cutoffs"] = ["top_10", "budget_big"]
    for item in data["evaluations"]:
        item["cutoff_results"]["budget_big"] = item["cutoff_results"]["top_10"]
    path = tmp_path / "locomo_results_x.json"
    path.write_text(json.dumps(data))
    with pytest.warns(Warning):
        runs = load_runs(path)
    assert any("budget_big" in p.message for p in runs.all_problems)
    odd = next(r for r in runs if r.run_id.endswith("budget_big"))
    assert "retrievalDepth" not in (odd.checkpoint.benchNb or {})
