"""mem0's memory-benchmarks unified results (mem0ai/memory-benchmarks, ``benchmarks/locomo/run.py``).

Read from a fork that keeps the runner as upstream wrote it (smaramwbc/statewave-memory-benchmarks); the upstream
schema module (``benchmarks/common/schema.py``) was not readable. ``locomo_results_<timestamp>.json``:
``{metadata: {benchmark, project_name, run_id, answerer_model, judge_model, top_k, top_k_cutoffs, ...},
metrics_by_cutoff: {"top_<k>": {overall, by_category}}, evaluations: [{question_id "conv<c>_q<i>", conversation_idx,
category, category_name, question, ground_truth_answer, evidence, retrieval: {search_latency_ms, total_results,
...}, cutoff_results: {"top_<k>": {judgment, score, generated_answer, memories_evaluated, reason}}}]}``: each
question answered and judged at every cutoff. One run per cutoff (``<project>-<label>``): ``top_<N>`` is a
retrieval depth (``benchNb.retrievalDepth``), ``max_tokens_<N>`` a context token budget (``benchNb.contextTokenBudget``,
with the metadata's ``top_k`` as the depth), as a derived harness writes it; never a depth of 2^30. ``i``
enumerates the conversation's full ``qa`` list (categories are filtered after numbering), so ``conv<c>_q<i>`` is
bench_nb's ``<sample_id>-q<i>``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench_nb.benchmarks.locomo import LOCOMO_SAMPLE_IDS
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
from bench_nb.runformat.harnesses.locomo_ids import canonical_id

HARNESS = "mem0-benchmarks"
_ID = re.compile(r"^conv(\d+)_q(\d+)$")


def looks_like(data: Any) -> bool:
    """Whether ``data`` is mem0's memory-benchmarks results: metadata, metrics per cutoff and evaluations."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("metadata"), dict)
        and isinstance(data.get("metrics_by_cutoff"), dict)
        and isinstance(data.get("evaluations"), list)
    )


_CUTOFF = re.compile(r"^(top|max_tokens)_(\d+)$")


def cutoff_settings(label: str, top_k: Any = None) -> dict[str, int]:
    """The run-level settings of a cutoff label: ``top_<N>`` a retrieval depth of N (``retrievalDepth``),
    ``max_tokens_<N>`` a context budget of N tokens (``contextTokenBudget``, over the ``top_k`` memories the
    runner retrieved: ``retrievalDepth`` when the metadata gives it); an unknown label: none."""
    m = _CUTOFF.match(label)
    if m is None:
        return {}
    if m.group(1) == "top":
        return {"retrievalDepth": int(m.group(2))}
    depth = {"retrievalDepth": top_k} if isinstance(top_k, int) and not isinstance(top_k, bool) else {}
    return {"contextTokenBudget": int(m.group(2)), **depth}


def _order(label: str) -> tuple[int, int, str]:
    m = _CUTOFF.match(label)
    return (0 if m.group(1) == "top" else 1, int(m.group(2)), label) if m else (2, 0, label)


def question_id(benchmark: str, raw: str) -> str:
    """bench_nb's id of a question: LoCoMo's ``conv<c>_q<i>`` as the canonical ``<sample_id>-q<i>``, others as
    written."""
    m = _ID.match(raw) if benchmark_traits(benchmark).locomo_questions else None
    if m and int(m.group(1)) < len(LOCOMO_SAMPLE_IDS):
        return canonical_id(int(m.group(1)), int(m.group(2)))
    return raw


def read_all(path: Path, problems: list[Problem], data: Any) -> list[tuple[Checkpoint, ImportInfo]]:
    """One run per retrieval depth. A bad evaluation is a problem naming file, field and question."""
    meta = data["metadata"]
    benchmark = text(meta.get("benchmark")).lower() or UNKNOWN
    judge = text(meta.get("judge_model")) or UNKNOWN
    answerer = text(meta.get("answerer_model"))
    listed = meta.get("top_k_cutoffs") or meta.get("cutoffs")  # the fork's key, upstream's
    labels = [text(x) for x in listed or [] if text(x)] or list(data["metrics_by_cutoff"])
    labels = sorted(dict.fromkeys(labels), key=_order)
    for label in labels:
        if not _CUTOFF.match(label):
            problems.append(
                Problem(
                    str(path),
                    f"cutoff {label!r} is neither top_<N> (a depth) nor max_tokens_<N> (a token budget): its run "
                    "records neither",
                    field="metadata.top_k_cutoffs",
                )
            )
    project = text(meta.get("project_name")) or text(meta.get("run_id")) or path.stem
    out: list[tuple[Checkpoint, ImportInfo]] = []
    for label in labels:
        info = ImportInfo(
            harness=HARNESS,
            judge=judge,
            not_recorded=("tokens", "retrieved context"),
            published=dict(data["metrics_by_cutoff"].get(label) or {}),
        )
        questions: dict[str, Question] = {}
        for pos, item in enumerate(data["evaluations"]):
            where = f"evaluations[{pos}]"
            raw = item.get("question_id") if isinstance(item, dict) else None
            if not isinstance(raw, str) or not raw:
                if label == labels[0]:
                    problems.append(
                        Problem(str(path), "no question_id string; skipped", field=f"{where}.question_id")
                    )
                continue
            qid = question_id(benchmark, raw)
            if repeated(qid, questions, problems if label == labels[0] else [], path, where, "evaluation"):
                continue
            cuts = item.get("cutoff_results")
            cut = cuts.get(label) if isinstance(cuts, dict) else None
            if not isinstance(cut, dict):
                problems.append(
                    Problem(
                        str(path),
                        f"no result at {label}: left out of that run",
                        field=f"{where}.cutoff_results.{label}",
                        question_id=qid,
                    )
                )
                continue
            score = cut.get("score")
            if score is None and cut.get("judgment") in ("PASS", "FAIL"):  # the verdict as upstream words it
                score = 1 if cut["judgment"] == "PASS" else 0
            field = f"{where}.cutoff_results.{label}.score"
            verdict = verdict_field(
                score, path=path, field=field, problems=problems, question_id=qid, zero_one=True
            )
            # said once per evaluation, not once per depth
            at: dict[str, Any] = {
                "path": path,
                "problems": problems if label == labels[0] else [],
                "question_id": qid,
            }
            retrieval = item.get("retrieval")
            if not isinstance(retrieval, dict):
                if retrieval is not None:
                    at["problems"].append(
                        Problem(
                            str(path),
                            "retrieval is not an object: search latency not recorded",
                            field=f"{where}.retrieval",
                            question_id=qid,
                        )
                    )
                retrieval = {}
            questions[qid] = Question(
                questionId=qid,
                containerTag=qid.rsplit("-q", 1)[0] if qid != raw else "",
                question=text_field(item.get("question"), field=f"{where}.question", **at),
                groundTruth=text_field(
                    item.get("ground_truth_answer"), field=f"{where}.ground_truth_answer", numbers=True, **at
                ),
                questionType=text_field(item.get("category_name"), field=f"{where}.category_name", **at),
                phases=imported_phases(
                    verdict,
                    hypothesis=text_field(
                        cut.get("generated_answer"),
                        field=f"{where}.cutoff_results.{label}.generated_answer",
                        **{**at, "problems": problems},  # this depth's own
                    ),
                    explanation=text_field(
                        cut.get("reason"),
                        field=f"{where}.cutoff_results.{label}.reason",
                        **{**at, "problems": problems},
                    )
                    or None,
                    search_ms=measure(
                        retrieval.get("search_latency_ms"),
                        "ms",
                        field=f"{where}.retrieval.search_latency_ms",
                        **at,
                    ),
                ),
                benchNb=unscored_mark(verdict),
            )
            info.verdicts[qid] = [verdict]
        more = cutoff_settings(label, meta.get("top_k"))
        checkpoint = completed(info, questions, f"{project}-{label}", "mem0", benchmark, answerer, more)
        out.append((checkpoint, info))
    return out
