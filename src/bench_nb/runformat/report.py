"""The report.json MemoryBench writes for a run: same values, same key order, same number formatting.

``build_memorybench_report`` follows docs/memorybench-format.md to the letter (only evaluated questions
count; JavaScript rounding; upper median; ``floor(q*n)`` percentiles; question text, type and ground truth
from the dataset with MemoryBench's labels). ``dumps_js`` prints it as ``JSON.stringify(report, null, 2)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_nb.errors import RunFormatError
from bench_nb.runformat.dataset import MemoryBenchDataset, js_number, read_memorybench_dataset
from bench_nb.runformat.format import PHASES, Checkpoint, Question, decode_results, now_iso
from bench_nb.runformat.latency import memorybench_stats
from bench_nb.runformat.load import read_run
from bench_nb.runformat.rounding import js_round, js_sum

_RETRIEVAL_KEYS = ("hitAtK", "precisionAtK", "recallAtK", "f1AtK", "mrr", "ndcg")


def _num(x: float | None) -> int | float:
    if x is None:
        return 0
    return int(x) if float(x).is_integer() else x


def _total_ms(q: Question) -> int | float:
    return _num(js_sum(getattr(q.phases, p).durationMs or 0 for p in PHASES))


def _retrieval(questions: list[Question]) -> dict[str, Any] | None:
    metrics = [q.phases.evaluate.retrievalMetrics for q in questions]
    present = [m for m in metrics if m is not None]
    if not present:
        return None
    out: dict[str, Any] = {
        key: js_sum(getattr(m, key) for m in present) / len(present) for key in _RETRIEVAL_KEYS
    }
    out["k"] = present[-1].k
    return out


def _latency(questions: list[Question], phases: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for phase in phases:
        if phase == "total":
            values: list[float | None] = [float(_total_ms(q)) for q in questions]
        else:
            values = [getattr(q.phases, phase).durationMs for q in questions]
        out[phase] = memorybench_stats(values)
    return out


def format_memscore(quality: int | None, latency_ms: int | None, context_tokens: int | None) -> str:
    """MemScore's display string, as MemoryBench writes it in report.json, e.g. ``86% / 145ms / 1823tok`` (``n/a`` for a missing part)."""
    q = "n/a" if quality is None else f"{quality}%"
    lat = "n/a" if latency_ms is None else f"{latency_ms}ms"
    tok = "n/a" if context_tokens is None else f"{context_tokens}tok"
    return f"{q} / {lat} / {tok}"


def build_memorybench_report(
    checkpoint: Checkpoint, dataset: MemoryBenchDataset, *, timestamp: str | None = None
) -> dict[str, Any]:
    """The report.json dict MemoryBench would write for ``checkpoint`` on ``dataset``."""
    by_id = dataset.by_id()
    evaluated = [q for q in checkpoint.questions.values() if q.phases.evaluate.status == "completed"]
    correct = sum(1 for q in evaluated if q.phases.evaluate.score == 1)
    total = len(evaluated)

    def qtype(q: Question) -> str:
        dq = by_id.get(q.questionId)
        return dq.question_type if dq else q.questionType

    report: dict[str, Any] = {
        "provider": checkpoint.provider,
        "benchmark": checkpoint.benchmark,
        "runId": checkpoint.runId,
        "dataSourceRunId": checkpoint.dataSourceRunId or checkpoint.runId,
        "judge": checkpoint.judge,
        "answeringModel": checkpoint.answeringModel,
        "timestamp": timestamp or now_iso(),
        "summary": {
            "totalQuestions": total,
            "correctCount": correct,
            "accuracy": correct / total if total else 0,
        },
        "latency": _latency(evaluated, (*PHASES, "total")),
    }
    answers = [q.phases.answer for q in evaluated]
    prompt = [a.promptTokens for a in answers if a.promptTokens is not None]
    base = [a.basePromptTokens for a in answers if a.basePromptTokens is not None]
    context = [a.contextTokens for a in answers if a.contextTokens is not None]
    if prompt:
        report["tokens"] = {
            "totalTokens": sum(prompt),
            "basePromptTokens": sum(base),
            "contextTokens": sum(context),
            "avgTokensPerQuestion": js_round(sum(prompt) / len(prompt)),
            "avgBasePromptTokens": js_round(sum(base) / len(base)) if base else 0,
            "avgContextTokens": js_round(sum(context) / len(context)) if context else 0,
        }
        if len(prompt) == total:
            quality = js_round(report["summary"]["accuracy"] * 100)
            latency_ms = report["latency"]["search"]["mean"]
            ctx = report["tokens"]["avgContextTokens"]
            report["memscore"] = format_memscore(quality, latency_ms, ctx)
            report["memscoreComponents"] = {"quality": quality, "latencyMs": latency_ms, "contextTokens": ctx}
    retrieval = _retrieval(evaluated)
    if retrieval is not None:
        report["retrieval"] = retrieval

    groups: dict[str, list[Question]] = {}
    for q in evaluated:
        groups.setdefault(qtype(q), []).append(q)
    by_type: dict[str, Any] = {}
    for name, qs in groups.items():
        n_correct = sum(1 for q in qs if q.phases.evaluate.score == 1)
        entry: dict[str, Any] = {
            "total": len(qs),
            "correct": n_correct,
            "accuracy": n_correct / len(qs),
            "latency": _latency(qs, ("search", "answer", "total")),
        }
        r = _retrieval(qs)
        if r is not None:
            entry["retrieval"] = r
        by_type[name] = entry
    report["byQuestionType"] = by_type
    report["questionTypeRegistry"] = dataset.type_registry

    evaluations = []
    for q in evaluated:
        dq = by_id.get(q.questionId)
        ev = q.phases.evaluate
        item: dict[str, Any] = {
            "questionId": q.questionId,
            "questionType": qtype(q),
            "question": dq.question if dq else q.question,
            "score": ev.score,
            "label": ev.label,
            "explanation": ev.explanation,
            "hypothesis": q.phases.answer.hypothesis,
            "groundTruth": dq.ground_truth if dq else q.groundTruth,
            "searchResults": decode_results(q.phases.search.results),
            "searchDurationMs": _num(q.phases.search.durationMs),
            "answerDurationMs": _num(q.phases.answer.durationMs),
            "totalDurationMs": _total_ms(q),
        }
        if ev.retrievalMetrics is not None:
            import msgspec

            item["retrievalMetrics"] = msgspec.to_builtins(ev.retrievalMetrics)
        # JSON.stringify drops keys whose value is undefined.
        evaluations.append({k: v for k, v in item.items() if v is not None})
    report["evaluations"] = evaluations
    return report


def memorybench_report(
    run_dir: str | Path, dataset: str | Path, *, timestamp: str | None = None
) -> dict[str, Any]:
    """Read a run directory and a dataset file, and build MemoryBench's report.json for them."""
    run = read_run(run_dir, strict=True)
    if run.checkpoint is None:
        raise RunFormatError(
            Path(run_dir) / "checkpoint.json", "a checkpoint is needed to rebuild report.json"
        )
    return build_memorybench_report(run.checkpoint, read_memorybench_dataset(dataset), timestamp=timestamp)


def dumps_js(value: Any, indent: int = 2) -> str:
    """``JSON.stringify(value, null, indent)``: JavaScript's number formatting and layout."""
    return _dump(value, indent, 0)


def _dump(v: Any, indent: int, level: int) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return js_number(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    pad = " " * (indent * (level + 1))
    end = " " * (indent * level)
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = [
            f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {_dump(x, indent, level + 1)}"
            for k, x in v.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        return "[\n" + ",\n".join(pad + _dump(x, indent, level + 1) for x in v) + "\n" + end + "]"
    raise TypeError(f"cannot serialise {type(v).__name__} as JSON")
