"""AML's (Agent Memory Leaderboard's) local JSON-lines outputs, a judgments file (``{id, label, is_correct,
judge_response}``) and an answers file (``{id, generated_answer}``) beside it, load as one run and pair with a
native LoCoMo run on bench_nb's LoCoMo ids.

The files are written here by hand from the line shapes the issue names (AML's pipeline source could not be read).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_nb import load_runs, questions_df
from bench_nb.metrics.paired import paired_comparison
from bench_nb.runformat.harnesses import find_importer
from stats_fixtures import write_native_run

# AML's ids in the forms the importer reads, and the LoCoMo id each one is.
IDS = {
    "conv-26_q0": "conv-26-q0",
    "conv-26-q1": "conv-26-q1",
    "locomo_1_qa3": "conv-30-q3",
    "conv-26_q5": "conv-26-q5",
}
CORRECT = {"conv-26_q0": True, "conv-26-q1": False, "locomo_1_qa3": True, "conv-26_q5": True}


def _write(folder: Path, judgments: list[object], answers: list[object]) -> Path:
    folder.mkdir(parents=True)
    (folder / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    judged = folder / "judgments.jsonl"
    judged.write_text("".join((a if isinstance(a, str) else json.dumps(a)) + "\n" for a in judgments))
    return judged


def _aml_pair(folder: Path) -> Path:
    return _write(
        folder,
        [
            {
                "id": i,
                "label": "CORRECT" if ok else "WRONG",
                "is_correct": ok,
                "judge_response": f'{{"label": "{"CORRECT" if ok else "WRONG"}"}}',
            }
            for i, ok in CORRECT.items()
        ],
        [{"id": i, "generated_answer": f"answer to {i}"} for i in IDS],
    )


def test_an_aml_pair_loads_on_locomo_ids_with_answers_and_verdicts(tmp_path: Path) -> None:
    judged = _aml_pair(tmp_path / "aml-run")
    assert find_importer(judged)[0].name == "aml" and find_importer(judged.parent)[0].name == "aml"
    assert find_importer(judged.parent / "answers.jsonl") is None  # the answers alone are not a run
    runs = load_runs(judged.parent)
    assert runs.all_problems == []
    (run,) = runs
    assert run.harness == "aml" and run.run_id == "aml-run"
    assert run.checkpoint is not None and run.checkpoint.benchmark == "locomo"
    assert run.imported is not None
    assert run.imported.verdicts == {IDS[i]: [ok] for i, ok in CORRECT.items()}
    q = questions_df(runs, backend="polars").sort("question_id")
    assert dict(zip(q["question_id"], q["hypothesis"], strict=True)) == {
        IDS[i]: f"answer to {i}" for i in IDS
    }
    assert dict(zip(q["question_id"], q["score"], strict=True)) == {
        IDS[i]: float(ok) for i, ok in CORRECT.items()
    }


def test_it_pairs_with_a_native_locomo_run(tmp_path: Path) -> None:
    judged = _aml_pair(tmp_path / "aml-run")
    scores = {"conv-26-q0": 1, "conv-26-q1": 1, "conv-30-q3": 0, "conv-26-q5": 0}
    native = write_native_run(tmp_path / "runs", scores, "single-hop")
    runs = load_runs([native, judged])
    assert runs.all_problems == []
    cmp = paired_comparison(runs, "aml-run", "native")
    assert cmp.n_pairs == 4 and cmp.n_dropped == 0
    assert cmp.accuracy_a == pytest.approx(0.75) and cmp.accuracy_b == pytest.approx(0.5)
    assert (cmp.both_correct, cmp.a_only, cmp.b_only) == (1, 2, 1)


def test_bad_lines_name_file_line_and_field_and_the_good_lines_load(tmp_path: Path) -> None:
    judged = _write(
        tmp_path / "aml-bad",
        [
            {"id": "conv-26_q0", "label": "CORRECT", "is_correct": True, "judge_response": "{}"},
            '{"id": "conv-26_q1", "label": "CORR',  # line 2: cut off
            {"label": "WRONG", "is_correct": False},  # line 3: no id
            {"id": "conv-26_q2", "label": "WRONG", "is_correct": "no"},  # line 4: verdict from label
            {"id": "conv-26_q3", "label": "WRONG", "is_correct": True},  # line 5: they disagree
        ],
        [{"id": "conv-26_q0", "generated_answer": "a"}, {"id": "conv-26_q3", "generated_answer": "b"}],
    )
    with pytest.warns(UserWarning):
        (run,) = load_runs(judged)
    problems = [str(p) for p in run.problems]
    assert any(str(judged) in p and "line 2: not valid JSON" in p for p in problems)
    assert any("line 3: no id" in p and "(field id)" in p for p in problems)
    assert any(
        "line 4: is_correct 'no'" in p and "read from label" in p and "conv-26-q2" in p for p in problems
    )
    assert any("line 5: label 'WRONG' disagrees" in p for p in problems)
    assert any(
        "answers.jsonl" in p and "no answer for 1 judged question(s) (conv-26_q2)" in p for p in problems
    )
    assert run.imported is not None
    assert run.imported.verdicts == {"conv-26-q0": [True], "conv-26-q2": [False], "conv-26-q3": [True]}
