"""AMB's outputs (vectorize-io/agent-memory-benchmark, ``src/memory_bench/runner.py`` and ``models.py``).

``outputs/<dataset>/<run name>/<mode>/<split>.json``: one ``EvalSummary`` as JSON: ``{dataset, split, category,
memory_provider, run_name, mode, oracle, total_queries, correct, accuracy, ingestion_time_ms, ingested_docs,
description, answer_llm, judge_llm, avg_retrieve_time_ms, avg_context_tokens, results: [QueryResult]}``, each
result ``{query_id, query, answer, reasoning, context, context_tokens, retrieve_time_ms, gold_answers, correct,
judge_reason, meta, raw_response, category_axes}``. AMB's LoCoMo query ids are ``<sample_id>_q<i>`` (``i`` the
index into the conversation's full ``qa`` list), read as bench_nb's ``<sample_id>-q<i>``; LongMemEval's are its
own ``question_id``; other datasets keep AMB's ids.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench_nb.benchmarks.registry import benchmark_traits
from bench_nb.errors import Problem
from bench_nb.runformat.format import Checkpoint, Question
from bench_nb.runformat.harnesses.common import (
    UNKNOWN,
    ImportInfo,
    completed,
    imported_phases,
    measure,
    repeated,
    text,
    text_field,
    unscored_mark,
    verdict_field,
)
from bench_nb.runformat.harnesses.locomo_ids import LocomoIndex

HARNESS = "amb"
_LOCOMO_ID = re.compile(r"^(conv-\d+)_q(\d+)$")
_KEYS = ("dataset", "memory_provider", "mode", "results")


def looks_like(data: Any) -> bool:
    """Whether ``data`` is an AMB ``EvalSummary``: its keys present and a list of query results."""
    return (
        isinstance(data, dict)
        and all(k in data for k in _KEYS)
        and isinstance(data["results"], list)
        and (
            not data["results"] or (isinstance(data["results"][0], dict) and "query_id" in data["results"][0])
        )
    )


def question_id(dataset: str, query_id: str) -> str:
    """bench_nb's id of an AMB query: LoCoMo's ``conv-26_q3`` is ``conv-26-q3``; the rest as AMB wrote them."""
    m = _LOCOMO_ID.match(query_id) if benchmark_traits(dataset).locomo_questions else None
    return f"{m.group(1)}-q{m.group(2)}" if m else query_id


def read(
    path: Path, index: LocomoIndex | None, problems: list[Problem], data: Any
) -> tuple[Checkpoint, ImportInfo]:
    """Read an AMB output file as a checkpoint and what the import could and could not recover. ``data``: the decoded file, which ``looks_like``."""
    dataset = text(data.get("dataset"))
    judge = text(data.get("judge_llm")) or UNKNOWN
    answerer = text(data.get("answer_llm"))
    info = ImportInfo(
        harness=HARNESS,
        judge=judge,
        not_recorded=("tokens", "retrieved context"),
        published={
            k: data.get(k) for k in ("total_queries", "correct", "accuracy", "split", "mode") if k in data
        },
    )
    questions: dict[str, Question] = {}
    for pos, item in enumerate(data["results"]):
        where = f"results[{pos}]"
        raw_id = item.get("query_id") if isinstance(item, dict) else None
        if not isinstance(raw_id, str) or not raw_id:
            problems.append(Problem(str(path), "no query_id string; skipped", field=f"{where}.query_id"))
            continue
        qid = question_id(dataset, raw_id)
        if repeated(qid, questions, problems, path, where, "result"):
            continue
        at: dict[str, Any] = {"path": path, "problems": problems, "question_id": qid}
        correct = verdict_field(item.get("correct"), field=f"{where}.correct", **at)
        gold = item.get("gold_answers")
        golds = [
            text_field(g, field=f"{where}.gold_answers", numbers=True, **at)
            for g in (gold if isinstance(gold, list) else [] if gold is None else [gold])
        ]
        axes = item.get("category_axes")
        qtype = ""
        if isinstance(axes, dict):
            values = axes.get("question_type") or axes.get("Question Type") or []
            first = values[0] if isinstance(values, list) and values else None
            qtype = text_field(first, field=f"{where}.category_axes.question_type[0]", **at)
        questions[qid] = Question(
            questionId=qid,
            containerTag=qid.rsplit("-q", 1)[0] if qid != raw_id else "",
            question=text_field(item.get("query"), field=f"{where}.query", **at),
            groundTruth=" | ".join(golds),
            questionType=qtype,
            phases=imported_phases(
                correct,
                hypothesis=text_field(item.get("answer"), field=f"{where}.answer", **at),
                explanation=text_field(item.get("judge_reason"), field=f"{where}.judge_reason", **at) or None,
                search_ms=measure(
                    item.get("retrieve_time_ms"), "ms", field=f"{where}.retrieve_time_ms", **at
                ),
                context_tokens=measure(
                    item.get("context_tokens"), "tokens", field=f"{where}.context_tokens", **at
                ),
            ),
            benchNb=unscored_mark(correct),
        )
        info.verdicts[qid] = [correct]
    run_id = text(data.get("run_name")) or text(data.get("memory_provider")) or path.parent.parent.name
    split = text(data.get("split"))
    provider = text(data.get("memory_provider")) or UNKNOWN
    run_id = f"{run_id}-{split}" if split else run_id
    checkpoint = completed(info, questions, run_id, provider, dataset or UNKNOWN, answerer)
    return checkpoint, info
