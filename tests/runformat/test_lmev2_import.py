"""LongMemEval-V2's per_question.jsonl (+ aggregated_metrics.json, run_args.json) imported by load_runs, paired
with a native -b longmemeval-v2 run on the same question ids (tests/fixtures/lmev2_runs, written from the
harness's documented record fields)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from bench_nb.benchmarks import DatasetWarning
from bench_nb.errors import RunFormatError
from bench_nb.metrics.paired import paired_comparison
from bench_nb.runformat.load import load_runs
from lmev2_data import QUESTIONS, write_dataset

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "lmev2_runs" / "no_retrieval_web_small"


def _quiet_load(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_runs(*args, **kwargs)  # type: ignore[arg-type]


def test_the_folder_is_detected_and_read_on_the_benchmarks_own_ids() -> None:
    runs = load_runs(FIXTURE)
    assert not runs.all_problems
    (run,) = runs
    ck = run.checkpoint
    assert run.harness == "longmemeval-v2" and run.imported is not None
    assert ck.benchmark == "longmemeval-v2-small"  # from run_args.json's haystack path
    assert ck.judge == "gpt-5.2" and ck.answeringModel == "Qwen/Qwen3.5-9B"
    assert list(ck.questions) == [q["id"] for q in QUESTIONS]
    labels = {qid: q.phases.evaluate.label for qid, q in ck.questions.items()}
    assert labels["web_static_001"] == "correct" and labels["sn_procedure_005"] == "incorrect"
    q = ck.questions["web_static_001"]
    assert q.phases.search.durationMs == pytest.approx(12.0)  # memory_query_duration_seconds, in ms
    assert q.phases.answer.contextTokens == 812  # memory_context_token_count
    assert q.phases.answer.promptTokens == 1712
    assert q.phases.answer.hypothesis == "It is at the \\boxed{top right}."
    assert q.benchNb is not None and q.benchNb["haystackId"] == "web_static_001"
    assert ck.questions["web_gotcha_004"].benchNb["haystackId"] == "web_static_001"  # type: ignore[index]
    assert ck.questions["sn_abs_006"].benchNb["normType"] == "abstention"  # type: ignore[index]
    assert run.imported.published["overall"]["overall_full_set"] == pytest.approx(4 / 6)
    # The file itself, or the summary beside it, name the same run.
    assert list(load_runs(FIXTURE / "per_question.jsonl")[0].checkpoint.questions) == list(ck.questions)
    assert load_runs(FIXTURE / "aggregated_metrics.json")[0].checkpoint.runId == ck.runId


def _native_run(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A native sqlite run (id "native") of LongMemEval-V2 on the hand-made folder (its pins differ: quiet)."""
    from bench_nb.runner import run_benchmark

    data = write_dataset(tmp_path / "lme")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        return run_benchmark(
            "sqlite",
            "longmemeval-v2",
            dataset=data,
            runs_dir=tmp_path / "runs",
            run_id="native",
            progress=False,
        )


def test_it_pairs_with_a_native_run_on_the_same_question_ids(tmp_path: Path) -> None:
    native = _native_run(tmp_path)
    runs = _quiet_load([native.run_dir, FIXTURE])
    assert [r.checkpoint.benchmark for r in runs] == ["longmemeval-v2-small"] * 2
    result = paired_comparison(runs, "native", "no_retrieval_web_small")
    # The two LLM-judged questions are unscored offline in the native run: 4 pairs of the 6 questions.
    assert result.n_pairs == 4
    assert result.accuracy_b == pytest.approx(2 / 4)  # the imported verdicts on those 4


def _damaged(tmp_path: Path) -> Path:
    folder = tmp_path / "damaged_small"
    shutil.copytree(FIXTURE, folder)
    lines = (folder / "per_question.jsonl").read_text().splitlines()
    row2 = json.loads(lines[1])
    row2["score_bool"] = "yes"
    row2.pop("score")
    lines[1] = json.dumps(row2)
    lines[2] = lines[2][:40]  # cut short
    row4 = json.loads(lines[3])
    del row4["question_id"]
    lines[3] = json.dumps(row4)
    row5 = json.loads(lines[4])
    row5["memory_query_duration_seconds"] = -1
    lines[4] = json.dumps(row5)
    (folder / "per_question.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_a_damaged_file_names_file_line_and_field_and_the_good_rows_load(tmp_path: Path) -> None:
    folder = _damaged(tmp_path)
    runs = _quiet_load(folder)
    (run,) = runs
    file = str(folder / "per_question.jsonl")
    found = {(p.path, p.field) for p in run.problems}
    assert (file, "line 2: score_bool") in found
    assert (file, "line 3: (the line)") in found
    assert (file, "line 4: question_id") in found
    assert (file, "line 5: memory_query_duration_seconds") in found
    assert any("not valid JSON" in p.message and "line 3" in p.message for p in run.problems)
    ck = run.checkpoint
    assert list(ck.questions) == ["web_static_001", "web_dynamic_002", "sn_procedure_005", "sn_abs_006"]
    assert ck.questions["web_dynamic_002"].phases.evaluate.label == "unscored"  # never a made-up verdict
    assert ck.questions["sn_procedure_005"].phases.search.durationMs is None  # null, never zero
    # The summary no longer agrees with the rows read: said, naming the file and field.
    assert any(
        p.field == "overall.overall_full_set" and p.path.endswith("aggregated_metrics.json")
        for p in run.problems
    )
    with pytest.raises(RunFormatError, match="line 2"):
        load_runs(folder, strict=True)


def test_a_file_with_no_readable_row_is_refused_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "empty_small"
    folder.mkdir()
    (folder / "per_question.jsonl").write_text("not json\n")
    runs = _quiet_load(folder)
    assert not list(runs)
    assert any("per_question.jsonl" in p.path and "no readable row" in p.message for p in runs.problems)


def test_truncation_and_post_query_fields_are_read(tmp_path: Path) -> None:
    """issue 40: memory_context_was_truncated, memory_post_query_duration_seconds and memory_post_query_metadata
    were ignored; truncation now feeds failure attribution, the post-query time and metadata are kept."""
    from bench_nb.metrics.failures import failure_reasons

    folder = tmp_path / "truncating_small"
    shutil.copytree(FIXTURE, folder)
    rows = [json.loads(line) for line in (folder / "per_question.jsonl").read_text().splitlines()]
    for row in rows:
        row["memory_context_was_truncated"] = row["question_id"] == "sn_procedure_005"
        row["memory_post_query_duration_seconds"] = 0.25
        row["memory_post_query_metadata"] = {"stored_items": 3}
    rows[0]["memory_context_was_truncated"] = "yes"
    (folder / "per_question.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    runs = _quiet_load(folder)
    (problem,) = runs.all_problems
    assert (
        "memory_context_was_truncated" in (problem.field or "")
        and problem.question_id == rows[0]["question_id"]
    )
    qs = runs[0].checkpoint.questions
    cut = qs["sn_procedure_005"].benchNb or {}
    assert cut["contextCut"] is True and cut["postQueryMs"] == pytest.approx(250.0)
    assert cut["postQueryMetadata"] == {"stored_items": 3}
    assert all("contextCut" not in (q.benchNb or {}) for qid, q in qs.items() if qid != "sn_procedure_005")
    assert qs["web_static_001"].phases.search.durationMs == pytest.approx(12.0)  # the query time alone
    frame = failure_reasons(runs)
    reasons = dict(zip(frame["question_id"], frame["failure_reason"], strict=True))
    assert reasons["sn_procedure_005"] == "truncation"
    assert {r for q, r in reasons.items() if q != "sn_procedure_005"} <= {"unknown"}


def test_longmemeval_v2_types_are_its_own_not_other_in_the_compare_tables(tmp_path: Path) -> None:
    """Issue 37: static-environment, dynamic-environment, procedure and errors-gotchas all read "other" in the
    compare notebook. The benchmark's type map (``BenchmarkTraits.question_types``) keeps them, for an imported
    result file and a native run alike; the -abs types stay abstention."""
    import bench_nb
    from bench_nb import tables

    native = _native_run(tmp_path)
    questions = bench_nb.questions_df(_quiet_load([native.run_dir, FIXTURE]), backend="polars")
    by_run = {
        run: dict(zip(rows["question_id"], rows["question_type_norm"], strict=True))
        for (run,), rows in questions.group_by(["run_id"])
    }
    expected = {
        "web_static_001": "static",
        "web_dynamic_002": "dynamic",
        "web_gotcha_004": "gotchas",
        "sn_abs_006": "abstention",
    }
    for run in ("native", "no_retrieval_web_small"):
        assert {q: by_run[run][q] for q in expected} == expected, run
        assert "other" not in by_run[run].values()
    table = tables.table_accuracy_by_type(questions)
    shown = set(table.frame["question_type_norm"].to_list())
    assert {"static", "dynamic", "procedure", "gotchas"} <= shown and "other" not in shown
