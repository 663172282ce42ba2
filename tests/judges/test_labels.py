"""Human labels read back from labels.jsonl: the last line per question and labeller wins, a bad line is a
problem naming the file and the line, and the rest still loads."""

from __future__ import annotations

import json
from pathlib import Path

from bench_nb.judges.labels import append_label, labels_path, read_labels


def test_labels_read_back_the_last_line_winning(tmp_path: Path) -> None:
    append_label(tmp_path, "q1", "incorrect")
    append_label(tmp_path, "q1", "correct", labeller="ana", weight=2.5, stratum="single-hop")
    append_label(tmp_path, "q1", "correct")  # relabelled
    labels, problems = read_labels(tmp_path)
    assert problems == []
    assert sorted(labels) == [("q1", "human"), ("q1", "human:ana")]
    assert labels[("q1", "human")].score == 1
    ana = labels[("q1", "human:ana")]
    assert (ana.weight, ana.stratum, ana.labeller) == (2.5, "single-hop", "ana")


def test_bad_label_lines_are_problems_naming_file_and_line(tmp_path: Path) -> None:
    good = {"questionId": "q1", "label": "unsure"}
    lines = [
        json.dumps(good),  # 1
        json.dumps({"questionId": "q2", "label": "maybe"}),  # 2
        json.dumps({"questionId": "q3", "label": "correct", "weight": -1}),  # 3
        json.dumps({"label": "correct"}),  # 4: no questionId
        "[1, 2]",  # 5
        '{"questionId": "q4", "label": "corr',  # 6: torn
    ]
    path = labels_path(tmp_path)
    path.write_text("\n".join(lines), encoding="utf-8")
    labels, problems = read_labels(tmp_path)
    assert list(labels) == [("q1", "human")] and labels[("q1", "human")].score is None
    assert [p.field for p in problems] == ["line 2", "line 3", "line 4", "line 5", "line 6"]
    assert all(p.path == str(path) and p.message.startswith(f"{p.field} skipped: ") for p in problems)
    assert "'maybe' is not one of correct, incorrect, unsure" in problems[0].message
    assert "-1.0 is not positive" in problems[1].message
    assert "questionId" in problems[2].message


def test_labels_of_imported_runs_load_as_the_human_judge(
    tmp_path: Path, harness_results: Path, locomo_audit: Path, locomo_path: Path
) -> None:
    import shutil

    import polars as pl

    import bench_nb as bn
    from bench_nb.metrics.judge_quality import judge_vs_human

    zep = tmp_path / "zep_locomo_grades.json"
    shutil.copy(harness_results / "zep" / "zep_locomo_grades.json", zep)
    evermemos = tmp_path / "gpt-4o-mini-cot" / "eval_results.json"
    evermemos.parent.mkdir()
    shutil.copy(locomo_audit / "fc-baseline" / "gpt-4o-mini-cot" / "eval_results.json", evermemos)
    for source in (zep, evermemos.parent):
        runs = bn.load_runs(source, dataset=locomo_path)
        (run,) = runs
        machine = bn.judgments_df(runs, backend="polars")
        first = machine.filter(pl.col("replicate") == 1).sort("question_id").head(6)
        for qid, score in first.select("question_id", "score").iter_rows():
            append_label(run.path, qid, "correct" if score == 1 else "incorrect")
        assert labels_path(run.path).name.endswith(".labels.jsonl")  # beside the file
        frame = bn.judgments_df(bn.load_runs(source, dataset=locomo_path), backend="polars")
        human = frame.filter(pl.col("judge") == "human")
        assert sorted(human["question_id"]) == sorted(first["question_id"])
        vs = judge_vs_human(bn.load_runs(source, dataset=locomo_path), backend="polars")
        scored = machine.filter(
            pl.col("question_id").is_in(first["question_id"].implode()) & pl.col("score").is_not_null()
        )
        assert vs["n"].to_list() == [scored.height] and scored.height >= 6  # each replicate against the label
