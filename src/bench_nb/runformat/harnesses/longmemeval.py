"""LongMemEval's official judged answers (xiaowu0162/LongMemEval, ``src/evaluation/evaluate_qa.py``).

``evaluate_qa.py METRIC_MODEL HYP_FILE REF_FILE`` writes ``HYP_FILE.eval-results-METRIC_MODEL``: JSON lines,
one per judged question, each the hypothesis line as given (``question_id``, ``hypothesis``, anything else the
system wrote) plus ``autoeval_label``: ``{"model": <the judge's full model name>, "label": <bool>}``. Questions
skipped for not being in the reference file have no line. ``question_id`` is LongMemEval's own id (``_abs``
marks an abstention question), so the run pairs with bench_nb's LongMemEval runs without a dataset. The file
holds no question text, gold answer or type (they are in the reference file): those stay empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench_nb.errors import Problem
from bench_nb.runformat.format import Checkpoint, Question
from bench_nb.runformat.harnesses.common import (
    UNKNOWN,
    ImportInfo,
    completed,
    imported_phases,
    json_lines,
    repeated,
    text_field,
    unscored_mark,
)

HARNESS = "longmemeval"
MARK = ".eval-results-"
NOT_RECORDED = ("latency", "tokens", "retrieved context", "question text", "gold answer", "question type")


def has_name(path: Path) -> bool:
    """``evaluate_qa.py``'s output name: ``<hypothesis file>.eval-results-<metric model>``."""
    return MARK in path.name and not path.name.endswith(MARK)


def looks_like(data: Any) -> bool:
    """A judged line: an object with ``question_id``, ``hypothesis`` and an ``autoeval_label`` object."""
    return (
        isinstance(data, dict)
        and "question_id" in data
        and "hypothesis" in data
        and isinstance(data.get("autoeval_label"), dict)
    )


def read(path: Path, problems: list[Problem]) -> tuple[Checkpoint, ImportInfo]:
    """The run of one judged file. A line that is not JSON, lacks ``question_id``, or whose label is not
    true/false is a problem naming the file, line and field; the line is skipped (a bad label: kept unscored)."""
    judges: list[str] = []
    questions: dict[str, Question] = {}
    verdicts: dict[str, list[bool | None]] = {}
    for n, entry in json_lines(path, problems):
        qid = entry.get("question_id") if isinstance(entry, dict) else None
        if not isinstance(qid, str) or not qid:
            problems.append(
                Problem(str(path), f"line {n}: no question_id string; skipped", field="question_id")
            )
            continue
        if repeated(qid, questions, problems, path, "question_id", f"line (line {n})"):
            continue
        label_obj = entry.get("autoeval_label")
        label = label_obj.get("label") if isinstance(label_obj, dict) else None
        if not isinstance(label, bool):
            problems.append(
                Problem(
                    str(path),
                    f"line {n}: autoeval_label.label {label!r} is not true/false: unscored",
                    field="autoeval_label.label",
                    question_id=qid,
                )
            )
            label = None
        model = label_obj.get("model") if isinstance(label_obj, dict) else None
        if isinstance(model, str) and model and model not in judges:
            judges.append(model)
        hypothesis = entry.get("hypothesis")
        if hypothesis is not None:
            hypothesis = text_field(
                hypothesis, path=path, field=f"line {n}: hypothesis", problems=problems, question_id=qid
            )
        questions[qid] = Question(
            questionId=qid,
            groundTruth="",
            phases=imported_phases(label, hypothesis=hypothesis),
            benchNb=unscored_mark(label),
        )
        verdicts[qid] = [label]
    if len(judges) > 1:
        problems.append(
            Problem(str(path), f"lines judged by different models ({', '.join(judges)}); the first is named")
        )
    info = ImportInfo(
        harness=HARNESS,
        judge=judges[0] if judges else UNKNOWN,
        not_recorded=NOT_RECORDED,
        verdicts=verdicts,
    )
    checkpoint = completed(info, questions, _run_name(path), UNKNOWN, "longmemeval")
    return checkpoint, info


def _run_name(path: Path) -> str:
    """The hypothesis file's stem with the judge: ``hyps.jsonl.eval-results-gpt-4o`` -> ``hyps-gpt-4o``."""
    head, _, judge = path.name.removesuffix(".gz").partition(MARK)
    if not judge:  # a renamed copy: its stem
        return head.rsplit(".", 1)[0] if "." in head else head
    stem = head.rsplit(".", 1)[0] if head.endswith((".jsonl", ".json")) else head
    return f"{stem}-{judge}" if stem else judge
