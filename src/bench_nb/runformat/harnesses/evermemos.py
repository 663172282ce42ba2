"""EverMemOS's evaluation pipeline's ``eval_results.json`` (also used by MemOS, MemU and the public LoCoMo audit): the
legacy format (``methods/EverCore/evaluation``, retired in June 2026 when EverMemOS became EverOS 1.0; EverOS 1.0's
LoCoMo reproduction is not read: docs/loading.md says why).

``{total_questions, correct, accuracy, detailed_results: {<conversation key>: [{question_id
"locomo_<conv>_qa<i>", question, golden_answer, generated_answer, llm_judgments: {judgment_1..N: bool},
category "1".."4"}]}, metadata?: {answer_model, judge_model, num_runs, answer_prompt, mean_accuracy, ...}}``.
Each question is judged N times by one judge: the verdicts are the judge's replicates, in ``judgment_<n>``
order; the checkpoint's verdict is their majority. ``locomo_<conv>_qa<i>`` is conversation ``conv`` (0-9,
file order of locomo10.json) and index ``i`` into its full ``qa`` list: canonical id ``<sample_id>-q<i>``.

The memory system is not named in the file (the audit's runs use none: full context): the provider is the
harness, ``evermemos``, and the run id is the file's folder (``gpt-4o-mini-cot``). ``metadata.total_prompt_tokens``
and ``total_completion_tokens`` are the answerer's tokens over the whole run: kept as run totals
(``ImportInfo.run_tokens``), never as per-question figures; the answer prompt there holds the whole context, with
no prompt built without it to subtract, so MemScore's context tokens cannot be derived from them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench_nb.errors import Problem
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.harnesses.common import (
    NOT_RECORDED,
    ImportInfo,
    Row,
    build_checkpoint,
    category_field,
    run_name,
    text,
    text_field,
)
from bench_nb.runformat.harnesses.locomo_ids import LocomoIndex

HARNESS = "evermemos"
FILENAME = "eval_results.json"
_QID = re.compile(r"^locomo_(\d+)_qa(\d+)$")
_JUDGMENT = re.compile(r"^judgment_(\d+)$")
_PUBLISHED = ("total_questions", "correct", "accuracy")
# metadata's run totals -> bench_nb's names (the answerer's tokens, summed over the run)
_RUN_TOKENS = {
    "total_prompt_tokens": "answer_input_tokens",
    "total_completion_tokens": "answer_output_tokens",
}


def looks_like(data: Any) -> bool:
    """Whether ``data`` is an EverMemOS ``eval_results.json``: an object with a ``detailed_results`` object."""
    return isinstance(data, dict) and isinstance(data.get("detailed_results"), dict)


def read(
    path: Path, index: LocomoIndex | None, problems: list[Problem], data: Any
) -> tuple[Checkpoint, ImportInfo]:
    """Read an EverMemOS ``eval_results.json`` as a checkpoint (each judgment a replicate) and its import
    record. ``data``: the decoded file, which ``looks_like``.
    """
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    published = {k: data[k] for k in _PUBLISHED if k in data}
    published.update({k: v for k, v in meta.items() if k not in ("base_url",)})
    run_tokens = _run_tokens(meta, path, problems)
    info = ImportInfo(
        harness=HARNESS,
        judge=text(meta.get("judge_model")) or "unknown",
        answer_prompt=text(meta.get("answer_prompt")) or None,
        published=published,
        not_recorded=("latency", "tokens per question", "retrieved context") if run_tokens else NOT_RECORDED,
        run_tokens=run_tokens,
    )
    rows: list[Row] = []
    for key, items in data["detailed_results"].items():
        if not isinstance(items, list):
            problems.append(
                Problem(str(path), "expected a list of questions; skipped", field=f"detailed_results.{key}")
            )
            continue
        for i, item in enumerate(items):
            where = f"detailed_results.{key}[{i}]"
            row = _row(item, where, path, problems)
            if row is not None:
                rows.append(row)
    checkpoint = build_checkpoint(
        path,
        rows,
        run_id=run_name(path, ("eval_results",)),
        provider=HARNESS,
        answering_model=text(meta.get("answer_model")),
        info=info,
        index=index,
        problems=problems,
    )
    return checkpoint, info


def _run_tokens(meta: dict[str, Any], path: Path, problems: list[Problem]) -> dict[str, int]:
    """The metadata's run token totals in bench_nb's names; a total that is not a whole number >= 0 is a
    problem naming its field and left out."""
    out: dict[str, int] = {}
    for key, name in _RUN_TOKENS.items():
        if key not in meta:
            continue
        value = meta[key]
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out[name] = value
        else:
            problems.append(
                Problem(str(path), f"{value!r} is not a token count; left out", field=f"metadata.{key}")
            )
    return out


def _row(item: Any, where: str, path: Path, problems: list[Problem]) -> Row | None:
    if not isinstance(item, dict) or not isinstance(item.get("question"), str):
        problems.append(
            Problem(str(path), "not a question object with a 'question' text; skipped", field=where)
        )
        return None
    raw_id = text(item.get("question_id")) or None
    m = _QID.match(raw_id or "")
    if m is None:
        problems.append(
            Problem(
                str(path),
                f"question_id {raw_id!r} is not locomo_<conversation>_qa<index>; paired with no other run",
                field=f"{where}.question_id",
                question_id=raw_id or where,
            )
        )
    judgments = item.get("llm_judgments")
    verdicts: list[bool | None] = []
    if isinstance(judgments, dict):
        numbered = sorted(
            (int(jm.group(1)), value) for name, value in judgments.items() if (jm := _JUDGMENT.match(name))
        )
        for n, value in numbered:
            if not isinstance(value, bool):
                problems.append(
                    Problem(
                        str(path),
                        f"judgment_{n} is {value!r}, not true/false: counted as missing",
                        field=f"{where}.llm_judgments.judgment_{n}",
                        question_id=raw_id,
                    )
                )
                value = None
            verdicts.append(value)
    else:
        problems.append(
            Problem(str(path), "no llm_judgments: the question is unscored", f"{where}.llm_judgments", raw_id)
        )
    at: dict[str, Any] = {"path": path, "problems": problems, "question_id": raw_id}
    return Row(
        where=where,
        conversation=int(m.group(1)) if m else None,
        index=int(m.group(2)) if m else None,
        question=item["question"],
        gold=text_field(item.get("golden_answer"), field=f"{where}.golden_answer", numbers=True, **at),
        answer=text_field(item["generated_answer"], field=f"{where}.generated_answer", **at)
        if "generated_answer" in item
        else None,
        category=category_field(item.get("category"), field=f"{where}.category", **at),
        verdicts=verdicts,
        raw_id=raw_id or where,
    )
