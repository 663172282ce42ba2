"""LongMemEval's official judged answers (``<hyps>.eval-results-<judge>``, written by xiaowu0162/LongMemEval's
``src/evaluation/evaluate_qa.py``) load as a run on LongMemEval's own question ids and pair with a native run.

The fixture (tests/fixtures/harnesses/lme_hyps.jsonl.eval-results-gpt-4o) is written by hand from that script:
each line is the hypothesis line (``question_id``, ``hypothesis``) plus ``autoeval_label: {model, label}``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from bench_nb import load_runs, questions_df
from bench_nb.errors import RunFormatError
from bench_nb.metrics.paired import paired_comparison
from bench_nb.runformat.harnesses import find_importer
from stats_fixtures import write_native_run

FIXTURE = Path(__file__).parents[1] / "fixtures" / "harnesses" / "lme_hyps.jsonl.eval-results-gpt-4o"
LABELS = {"e47becba": True, "118b2229": False, "gpt4_2655b836": True, "0a995998_abs": True}


def test_the_judged_file_loads_on_longmemevals_own_ids_with_its_judge() -> None:
    assert find_importer(FIXTURE)[0].name == "longmemeval"
    runs = load_runs(FIXTURE)
    assert runs.all_problems == []
    (run,) = runs
    assert run.harness == "longmemeval" and run.run_id == "lme_hyps-gpt-4o"
    assert run.imported is not None and run.imported.judge == "gpt-4o-2024-08-06"
    assert run.imported.verdicts == {qid: [label] for qid, label in LABELS.items()}
    assert run.checkpoint is not None and run.checkpoint.benchmark == "longmemeval"
    q = questions_df(runs, backend="polars").sort("question_id")
    assert dict(zip(q["question_id"], q["score"], strict=True)) == {
        qid: float(label) for qid, label in LABELS.items()
    }
    first = q.filter(pl.col("question_id") == "e47becba").row(0, named=True)
    assert first["hypothesis"] == "You graduated with a degree in Business Administration."
    assert first["harness"] == "longmemeval"
    # Nothing is timed or counted in the file: null, never zero.
    assert q["search_ms"].null_count() == len(q)


def test_a_renamed_jsonl_copy_is_detected_and_the_format_can_be_named(tmp_path: Path) -> None:
    copy = tmp_path / "judged.jsonl"
    shutil.copy(FIXTURE, copy)
    runs = load_runs(copy)
    assert [r.run_id for r in runs] == ["judged"] and runs[0].harness == "longmemeval"
    runs = load_runs(copy, format="longmemeval")
    assert len(runs[0].checkpoint.questions) == 4  # type: ignore[union-attr]
    with pytest.raises(RunFormatError, match="not valid JSON"):  # another harness's format forced on it
        load_runs(copy, format="zep", strict=True)


def test_it_pairs_with_a_native_run_on_the_same_question_ids(tmp_path: Path) -> None:
    scores = {"e47becba": 1, "118b2229": 1, "gpt4_2655b836": 0, "0a995998_abs": 0}
    native = write_native_run(tmp_path / "runs", scores, "single-session-user")
    runs = load_runs([native, FIXTURE])
    assert runs.all_problems == []
    cmp = paired_comparison(runs, "lme_hyps-gpt-4o", "native")
    assert cmp.n_pairs == 4 and cmp.n_dropped == 0
    assert cmp.accuracy_a == pytest.approx(0.75) and cmp.accuracy_b == pytest.approx(0.5)
    assert (cmp.both_correct, cmp.a_only) == (1, 2)


def test_a_damaged_file_names_file_line_and_field_and_keeps_the_good_lines(tmp_path: Path) -> None:
    bad = tmp_path / "hyps.jsonl.eval-results-gpt-4o"
    good = FIXTURE.read_text().splitlines()
    bad.write_text(
        "\n".join(
            [
                good[0],
                '{"question_id": "x1", "hypothesis": "a", "autoeval_label": {"model": "m"',  # line 2: cut off
                '{"hypothesis": "no id", "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": true}}',
                '{"question_id": "x3", "hypothesis": "b", "autoeval_label": {"model": "gpt-4o", "label": "yes"}}',
                good[1],
            ]
        )
        + "\n"
    )
    with pytest.warns(UserWarning):
        runs = load_runs(bad)
    (run,) = runs
    problems = [str(p) for p in run.problems]
    assert any(str(bad) in p and "line 2: not valid JSON" in p for p in problems)
    assert any("line 3: no question_id" in p and "(field question_id)" in p for p in problems)
    assert any(
        "line 4: autoeval_label.label 'yes'" in p
        and "[question x3]" in p
        and "(field autoeval_label.label)" in p
        for p in problems
    )
    assert run.checkpoint is not None
    assert sorted(run.checkpoint.questions) == ["118b2229", "e47becba", "x3"]
    assert run.checkpoint.questions["x3"].phases.evaluate.score is None  # type: ignore[union-attr]
    with pytest.raises(RunFormatError, match=r"line 2: not valid JSON"):
        load_runs(bad, strict=True)


def test_the_judged_file_exports_to_the_run_store(tmp_path: Path) -> None:
    from bench_nb.frames.store import export_runs

    export_runs(FIXTURE, tmp_path / "store")
    stored = load_runs(tmp_path / "store")
    q = questions_df(stored, backend="polars")
    assert sorted(q["question_id"]) == sorted(LABELS)
    assert set(q["harness"]) == {"longmemeval"}
