"""A question is reported under the normalised type it was judged as: the type the runner records
(``benchNb.normType``) wins over one derived again from the raw label."""

from __future__ import annotations

import json
from pathlib import Path

from bench_nb.benchmarks import load_benchmark
from bench_nb.frames.questions import questions_frame
from bench_nb.judges.prompts import rubric_for
from bench_nb.records import Question, Verdict
from bench_nb.runformat.question_types import question_types
from bench_nb.runner import run_benchmark
from bench_nb.runner.rejudge import rejudge


class RubricRecorder:
    """A judge that notes the rubric each question would be graded with, and calls every answer correct."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rubrics: dict[str, str] = {}
        self.norm_types: dict[str, str] = {}

    def judge(self, question: Question, hypothesis: str) -> Verdict:
        self.rubrics[question.question_id] = rubric_for(question)
        self.norm_types[question.question_id] = question.norm_type
        return Verdict(1.0, "correct", "recorded", judge=self.name)


def _custom_benchmark(tmp_path: Path) -> Path:
    doc = {
        "name": "team-bench",
        "types": {"billing": {"description": "Invoices"}, "deadline": {"description": "Due dates"}},
        "conversations": [
            {
                "id": "c1",
                "sessions": [
                    {
                        "id": "c1-s1",
                        "date": "2024-03-04T09:15:00",
                        "messages": [
                            {"role": "Ada", "content": "Invoice 42 was billed to Acme for 300 euros."},
                            {"role": "Ada", "content": "The Acme invoice is due on the 1st of April."},
                        ],
                    }
                ],
            }
        ],
        "questions": [
            {
                "id": "q-billing",
                "conversation": "c1",
                "question": "Who was invoice 42 billed to?",
                "answer": "Acme",
                "type": "billing",
                "norm_type": "single-hop",
            },
            {
                "id": "q-deadline",
                "conversation": "c1",
                "question": "When is the Acme invoice due?",
                "answer": "the 1st of April",
                "type": "deadline",
                "norm_type": "temporal",
            },
        ],
    }
    path = tmp_path / "team.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_custom_type_is_reported_and_rejudged_under_its_declared_normalised_type(tmp_path: Path) -> None:
    bench = load_benchmark("custom", path=_custom_benchmark(tmp_path), progress=False)
    at_run = RubricRecorder("recorder")
    result = run_benchmark(
        "sqlite", bench, judges=[at_run], runs_dir=tmp_path / "runs", run_id="r1", progress=False
    )
    # judged at run time by the declared type: temporal gets the temporal rubric, single-hop the default one
    assert at_run.norm_types == {"q-billing": "single-hop", "q-deadline": "temporal"}
    assert at_run.rubrics == {"q-billing": "default", "q-deadline": "temporal"}

    rows = questions_frame(result.run_dir).sort("question_id")
    assert rows["question_type"].to_list() == ["billing", "deadline"]
    assert rows["question_type_norm"].to_list() == ["single-hop", "temporal"]  # not "other"
    assert rows["type_source"].to_list() == ["run", "run"]

    later = RubricRecorder("later")
    rejudge(result.run_dir, [later])
    assert later.norm_types == at_run.norm_types
    assert later.rubrics == at_run.rubrics


def test_the_recorded_type_wins_over_the_raw_label() -> None:
    assert question_types("q", "billing", benchmark="custom", true_labels=True) == ("other", None, "run")
    assert question_types("q", "billing", benchmark="custom", true_labels=True, recorded="single-hop") == (
        "single-hop",
        None,
        "run",
    )
    # a recorded value that is not a normalised type is ignored, not trusted
    assert (
        question_types("q", "billing", benchmark="custom", true_labels=True, recorded="bogus")[0] == "other"
    )


def test_a_runs_type_columns_are_question_types_of_each_question() -> None:
    from bench_nb.runformat.dataset import DatasetQuestion
    from bench_nb.runformat.question_types import question_type_columns

    qids = ["conv-1-q1", "conv-1-q2", "e47becba_abs", "conv-2-q9", "conv-3-q1", "conv-3-q2", "conv-3-q3"]
    raws = ["single-hop", "single-hop", "single-hop", "temporal", "billing", "billing", "multi-hop"]
    recorded: list[object] = [None, "temporal", None, None, "single-hop", "not-a-type", None]
    index = {"conv-3-q3": DatasetQuestion("conv-3-q3", "adversarial", "Q?", "A", "abstention", 5)}
    for benchmark, true_labels, idx in (
        ("locomo", False, None),
        ("locomo", True, index),
        ("custom", True, None),
    ):
        columns = question_type_columns(
            qids, raws, recorded, benchmark=benchmark, true_labels=true_labels, index=idx
        )
        one_by_one = [
            question_types(q, r, benchmark=benchmark, true_labels=true_labels, recorded=rec, index=idx)
            for q, r, rec in zip(qids, raws, recorded, strict=True)
        ]
        assert list(zip(*columns, strict=True)) == one_by_one
    norms = columns[
        0
    ]  # the last benchmark's: abstention by id, recorded types win, the dataset's is not used
    assert norms[2] == "abstention" and norms[1] == "temporal" and norms[4] == "single-hop"
    assert norms[5] == "other"  # a recorded value that is no normalised type is ignored: "billing" is other
