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
