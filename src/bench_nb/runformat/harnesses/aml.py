"""AML's (the Agent Memory Leaderboard's) local JSON-lines outputs: an answers file and a judgments file.

AML's per-dataset pipelines (``data/*/pipeline.py`` of AML-memory/agent-memory-leaderboard) write, per run, one
JSON line per question with the answer (``{id, generated_answer}``) and one per judged question
(``{id, label, is_correct, judge_response}``; ``label`` CORRECT/WRONG). The pipeline's source could not be read
when this importer was written, so file names are not relied on: the judgments file is told by its first line
(``id``, ``is_correct`` and ``label``), its answers by a JSON-lines file beside it whose first line has ``id`` and
``generated_answer`` (several: the one sharing the most ids). A folder holding one judgments file reads it.

Question ids are kept as written, except LoCoMo's, which become bench_nb's ``<sample_id>-q<i>`` (from
``conv-26-q0``, ``conv-26_q0`` or ``locomo_<c>_qa<i>``, ``c`` the conversation 0-9 in locomo10.json order), so
a run pairs with bench_nb's LoCoMo runs; LongMemEval's and BEAM's ids pair when AML writes the datasets' own
ids. AML's LoCoMo set is LoCoMo-Refined (questions keyed by ``qa_id``), whose id form has not been checked
against these: ids of another form are kept and pair with no bench_nb LoCoMo run. The files hold no question
text, gold answer, type, judge or answer model: those are not recorded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bench_nb.benchmarks.locomo import locomo_id_from_numbered
from bench_nb.errors import Problem
from bench_nb.runformat.format import Checkpoint, Question
from bench_nb.runformat.harnesses.common import (
    UNKNOWN,
    ImportInfo,
    completed,
    first_json_line,
    imported_phases,
    json_lines,
    repeated,
    unscored_mark,
)

HARNESS = "aml"
NOT_RECORDED = ("latency", "tokens", "retrieved context", "question text", "gold answer", "question type")
_LOCOMO = re.compile(r"^(?P<sample>conv-\d+)[-_]q(?P<index>\d+)$")
_LABELS = {"CORRECT": True, "WRONG": False}


def _is_jsonl(path: Path) -> bool:
    return path.is_file() and path.name.endswith((".jsonl", ".jsonl.gz"))


def is_judgments(path: Path) -> bool:
    """A JSON-lines file whose first line is an AML judgment: ``id``, ``is_correct`` and ``label``."""
    first = first_json_line(path) if _is_jsonl(path) else None
    return isinstance(first, dict) and {"id", "is_correct", "label"} <= first.keys()


def is_answers(path: Path) -> bool:
    """A JSON-lines file whose first line is an AML answer: ``id`` and ``generated_answer``, no verdict."""
    first = first_json_line(path) if _is_jsonl(path) else None
    return (
        isinstance(first, dict) and {"id", "generated_answer"} <= first.keys() and "is_correct" not in first
    )


def locate(path: Path) -> Path | None:
    """The judgments file: the file itself, or the one judgments file of a folder."""
    if path.is_dir():
        found = [p for p in sorted(path.iterdir()) if is_judgments(p)]
        return found[0] if len(found) == 1 else None
    return path if is_judgments(path) else None


def question_id(raw: str) -> str:
    """bench_nb's id of an AML id: LoCoMo's forms become ``<sample_id>-q<i>``; any other is kept."""
    if m := _LOCOMO.match(raw):
        return f"{m['sample']}-q{int(m['index'])}"
    return locomo_id_from_numbered(raw) or raw


def _rows(path: Path, problems: list[Problem]) -> list[tuple[int, dict[str, Any]]]:
    """The file's objects with their line numbers; a line that is not a JSON object or has no ``id`` string is a
    problem and skipped."""
    out: list[tuple[int, dict[str, Any]]] = []
    for n, entry in json_lines(path, problems):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
            problems.append(Problem(str(path), f"line {n}: no id string; skipped", field="id"))
            continue
        out.append((n, entry))
    return out


def _answers(path: Path, ids: set[str], problems: list[Problem]) -> tuple[Path | None, dict[str, str]]:
    """The answers beside the judgments file: the answers file sharing the most ids (none: a problem)."""
    best: tuple[int, Path | None, dict[str, str]] = (0, None, {})
    kept: list[Problem] = []
    for cand in sorted(path.parent.iterdir()):
        if cand == path or not is_answers(cand):
            continue
        own: list[Problem] = []
        answers: dict[str, str] = {}
        for n, entry in _rows(cand, own):
            value = entry.get("generated_answer")
            if not isinstance(value, str):
                own.append(
                    Problem(
                        str(cand),
                        f"line {n}: generated_answer is not text; read as {json.dumps(value)[:60]}",
                        field="generated_answer",
                        question_id=entry["id"],
                    )
                )
                value = json.dumps(value)
            answers.setdefault(entry["id"], value)
        shared = len(ids & answers.keys())
        if shared > best[0]:
            best = (shared, cand, answers)
            kept = own
    if best[1] is None:
        problems.append(
            Problem(str(path), "no AML answers file (id, generated_answer) beside it: no answers read")
        )
        return None, {}
    problems.extend(kept)
    return best[1], best[2]


def read(path: Path, problems: list[Problem]) -> tuple[Checkpoint, ImportInfo]:
    """The run of one judgments file and the answers beside it. A judgment whose ``is_correct`` is not
    true/false is read from ``label`` (CORRECT/WRONG), else unscored; ``is_correct`` and ``label`` that disagree
    are a problem (``is_correct`` is kept)."""
    rows = _rows(path, problems)
    answers_file, answers = _answers(path, {e["id"] for _, e in rows}, problems)
    questions: dict[str, Question] = {}
    verdicts: dict[str, list[bool | None]] = {}
    for n, entry in rows:
        raw = entry["id"]
        qid = question_id(raw)
        if repeated(qid, questions, problems, path, "id", f"line (line {n})"):
            continue
        flag, label = entry.get("is_correct"), entry.get("label")
        by_label = _LABELS.get(label.strip().upper()) if isinstance(label, str) else None
        verdict = flag if isinstance(flag, bool) else by_label
        if not isinstance(flag, bool):
            problems.append(
                Problem(
                    str(path),
                    f"line {n}: is_correct {flag!r} is not true/false: "
                    + ("read from label" if by_label is not None else "unscored"),
                    field="is_correct",
                    question_id=qid,
                )
            )
        elif by_label is not None and by_label != flag:
            problems.append(
                Problem(
                    str(path),
                    f"line {n}: label {label!r} disagrees with is_correct {flag}; is_correct kept",
                    field="label",
                    question_id=qid,
                )
            )
        response = entry.get("judge_response")
        explanation = response if isinstance(response, str) or response is None else json.dumps(response)
        questions[qid] = Question(
            questionId=qid,
            containerTag=qid.rsplit("-q", 1)[0] if qid != raw or _LOCOMO.match(raw) else "",
            question="",
            groundTruth="",
            questionType="",
            phases=imported_phases(verdict, hypothesis=answers.get(raw), explanation=explanation),
            benchNb=unscored_mark(verdict),
        )
        verdicts[qid] = [verdict]
    if answers_file is not None and (missing := [e["id"] for _, e in rows if e["id"] not in answers]):
        problems.append(
            Problem(
                str(answers_file),
                f"no answer for {len(missing)} judged question(s) ({', '.join(missing[:5])}"
                + (" ...)" if len(missing) > 5 else ")"),
                question_id=question_id(missing[0]),
            )
        )
    info = ImportInfo(harness=HARNESS, judge=UNKNOWN, not_recorded=NOT_RECORDED, verdicts=verdicts)
    locomo = bool(questions) and all(_LOCOMO.match(q) for q in questions)
    generic = path.stem.removesuffix(".jsonl") in ("judgments", "judged", "eval")
    run_id = path.parent.name if generic else path.name.removesuffix(".gz").removesuffix(".jsonl")
    checkpoint = completed(info, questions, run_id, UNKNOWN, "locomo" if locomo else UNKNOWN)
    return checkpoint, info
