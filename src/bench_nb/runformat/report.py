"""The report.json MemoryBench writes for a run: same values, same key order, same bytes.

``build_memorybench_report`` follows docs/memorybench-format.md to the letter (only evaluated questions
count; JavaScript rounding; upper median; ``floor(q*n)`` percentiles; question text, type and ground truth
from the dataset with MemoryBench's labels). ``write_memorybench_report`` writes it as
``JSON.stringify(report, null, 2)`` (``runformat.jsjson``), one evaluation at a time.

The report needs a small part of the checkpoint: ``ReportCheckpoint`` decodes just that (phase statuses and
durations, answer and verdict fields, the search results and retrieval metrics kept as undecoded JSON), so a
100,000-question run is read at a fraction of a full decode; the search results are decoded only on their way
out, straight into values the encoder writes as JavaScript would (``jsjson.decode_js_floats``; the encoder
checks each batch for what is left), the retrieval metrics of all questions in one call (BENCHMARKS.md
measures it against MemoryBench itself).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from functools import cached_property, partial
from operator import add, attrgetter
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from bench_nb.errors import DatasetError, RunFormatError
from bench_nb.gc_pause import gc_paused
from bench_nb.runformat.dataset import DatasetQuestion, MemoryBenchDataset, read_memorybench_dataset
from bench_nb.runformat.forked import ForkedWrite, cpu_to_spare, fork_is_safe
from bench_nb.runformat.format import (
    DECODE_COUNTS,
    PHASES,
    Checkpoint,
    PhaseStatus,
    RetrievalMetrics,
    absent,
    now_iso,
)
from bench_nb.runformat.jsjson import (
    decode_js_floats,
    js_float,
    js_list_items,
    js_object_closing,
    js_object_opening,
    to_js,
)
from bench_nb.runformat.latency import memorybench_stats
from bench_nb.runformat.lock import REPORT_PART_TEMP, REPORT_TEMP, lock_run, run_containing
from bench_nb.runformat.rounding import js_round, js_sum

_MAX_SAFE = 2**53
_RETRIEVAL_KEYS = ("hitAtK", "precisionAtK", "recallAtK", "f1AtK", "mrr", "ndcg")


# --- what the report reads of a checkpoint -----------------------------------------------------------------


class _Part(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    pass


class ReportPhase(_Part):
    """A phase as the report reads it: its status and duration."""

    status: PhaseStatus = "pending"
    durationMs: int | float | None = None  # an integer stays one (written back without a float's rounding)


class ReportSearch(ReportPhase):
    """The search phase as the report reads it: the results array kept undecoded."""

    # The whole array as one undecoded slice (empty when absent: msgspec takes no Raw in a union), decoded in
    # one call on its way out.
    results: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


class ReportAnswer(ReportPhase):
    """The answer phase as the report reads it: the answer and its token counts."""

    hypothesis: str | None = None
    promptTokens: int | None = None
    basePromptTokens: int | None = None
    contextTokens: int | None = None


class ReportEvaluate(ReportPhase):
    """The evaluate phase as the report reads it: score, label, explanation and the raw retrieval metrics."""

    score: int | float | None = None
    label: str | None = None
    explanation: str | None = None
    # Written back as the checkpoint holds it (its keys, its order): kept undecoded (empty when absent;
    # msgspec takes no Raw in a union).
    retrievalMetrics: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


class ReportPhases(_Part):
    """A question's phases as the report reads them."""

    ingest: ReportPhase = msgspec.field(default_factory=absent(ReportPhase))
    indexing: ReportPhase = msgspec.field(default_factory=absent(ReportPhase))
    search: ReportSearch = msgspec.field(default_factory=absent(ReportSearch))
    answer: ReportAnswer = msgspec.field(default_factory=absent(ReportAnswer))
    evaluate: ReportEvaluate = msgspec.field(default_factory=absent(ReportEvaluate))


class ReportQuestion(_Part, kw_only=True):
    """A question as the report reads it: id, text, ground truth, type and phases."""

    questionId: str
    question: str = ""
    groundTruth: str
    questionType: str = ""
    phases: ReportPhases = msgspec.field(default_factory=ReportPhases)

    def __post_init__(self) -> None:
        DECODE_COUNTS.questions += 1


class ReportCheckpoint(_Part, kw_only=True):
    """The part of a checkpoint the report reads: the run's identity, its target questions and each question."""

    runId: str
    dataSourceRunId: str | None = None
    provider: str = ""
    benchmark: str = ""
    judge: str = ""
    answeringModel: str = ""
    targetQuestionIds: list[str] = msgspec.field(default_factory=list)
    questions: dict[str, ReportQuestion] = msgspec.field(default_factory=dict)


def read_report_checkpoint(run_dir: str | Path) -> ReportCheckpoint | Checkpoint:
    """The part of ``run_dir``'s checkpoint the report needs.

    Anything unusual (a decoding error, a question id twice, a missing phase record, a journal to replay) is
    handed to ``read_run(strict=True)``, which raises the error naming the file and field at fault, or returns
    the full checkpoint. The report reads checkpoint.json only, as MemoryBench does (not ``results/``).
    """
    run = Path(run_dir)
    path = run / "checkpoint.json"
    if (run / "journal.jsonl").is_file() or not path.is_file():
        return _full_checkpoint(run)
    try:
        data = path.read_bytes()
    except OSError:
        return _full_checkpoint(run)
    DECODE_COUNTS.reset()
    try:
        with gc_paused():
            ck = msgspec.json.decode(data, type=ReportCheckpoint)
    except msgspec.DecodeError:
        return _full_checkpoint(run)
    targets = ck.targetQuestionIds
    questions = ck.questions
    if (
        DECODE_COUNTS.questions != len(questions)
        or DECODE_COUNTS.absent_phases
        or len(set(targets)) != len(targets)
        or len({q.questionId or k for k, q in questions.items()}) != len(questions)
        or any(t not in questions for t in targets)
    ):
        return _full_checkpoint(run)
    return ck


def _full_checkpoint(run_dir: Path) -> Checkpoint:
    from bench_nb.runformat.load import read_run  # the loaders' imports only when needed

    checkpoint = read_run(run_dir, strict=True).checkpoint
    if checkpoint is None:
        raise RunFormatError(run_dir / "checkpoint.json", "a checkpoint is needed to rebuild report.json")
    return checkpoint


# --- the numbers ---------------------------------------------------------------------------------------------


def _num(x: float | None) -> int | float:
    if x is None:
        return 0
    return int(x) if float(x).is_integer() else x


def _metrics(q: Any) -> RetrievalMetrics | None:
    """One question's retrieval metrics, decoded alone: an error names the question."""
    try:
        text = _metrics_text(q.phases.evaluate.retrievalMetrics)
        return msgspec.json.decode(text, type=RetrievalMetrics | None)
    except msgspec.ValidationError as err:
        raise RunFormatError(
            "checkpoint.json",
            f"question {q.questionId}: {str(err).split(' - at `')[0]}",
            f"questions.{q.questionId}.phases.evaluate.retrievalMetrics",
        ) from None


def _all_metrics(questions: list[Any]) -> list[RetrievalMetrics | None]:
    """Each question's retrieval metrics, decoded in one call (question by question if one is at fault, for
    an error naming it)."""
    texts = [_metrics_text(q.phases.evaluate.retrievalMetrics) for q in questions]
    try:
        return msgspec.json.decode(b"[" + b",".join(texts) + b"]", type=list[RetrievalMetrics | None])
    except msgspec.ValidationError:
        return [_metrics(q) for q in questions]


def _retrieval(metrics: list[RetrievalMetrics | None]) -> dict[str, Any] | None:
    present = [m for m in metrics if m is not None]
    if not present:
        return None
    out: dict[str, Any] = {
        key: js_sum(map(attrgetter(key), present)) / len(present) for key in _RETRIEVAL_KEYS
    }
    out["k"] = present[-1].k
    return out


def format_memscore(quality: int | None, latency_ms: int | None, context_tokens: int | None) -> str:
    """MemScore's display string, as MemoryBench writes it in report.json, e.g. ``86% / 145ms / 1823tok`` (``n/a`` for a missing part)."""
    q = "n/a" if quality is None else f"{quality}%"
    lat = "n/a" if latency_ms is None else f"{latency_ms}ms"
    tok = "n/a" if context_tokens is None else f"{context_tokens}tok"
    return f"{q} / {lat} / {tok}"


class _Report:
    """One report: the summary parts (``head``, computed when first asked for) and the evaluations, built on
    demand in benchmark order."""

    def __init__(
        self, checkpoint: Checkpoint | ReportCheckpoint, dataset: MemoryBenchDataset, timestamp: str | None
    ) -> None:
        self.checkpoint, self.dataset, self.timestamp = checkpoint, dataset, timestamp
        self.by_id = dataset.by_id()
        self.evaluated: list[Any] = [
            q for q in checkpoint.questions.values() if q.phases.evaluate.status == "completed"
        ]
        phases = [q.phases for q in self.evaluated]
        # Each phase's durations, one list per phase in question order (None where absent).
        self.durations = {name: list(map(attrgetter(f"{name}.durationMs"), phases)) for name in PHASES}
        self.scores = [p.evaluate.score for p in phases]
        totals = [0.0] * len(phases)
        for name in PHASES:  # summed left to right, as MemoryBench's reduce adds them
            totals = list(map(add, totals, [d or 0 for d in self.durations[name]]))
        self.totals: list[int | float] = [int(t) if t.is_integer() else t for t in totals]

    def qtype(self, q: Any) -> str:
        dq = self.by_id.get(q.questionId)
        return dq.question_type if dq else str(q.questionType)

    @cached_property
    def metrics(self) -> list[RetrievalMetrics | None]:
        return _all_metrics(self.evaluated)

    @cached_property
    def head(self) -> dict[str, Any]:
        """Everything in report.json but the evaluations, in its order."""
        checkpoint, dataset, timestamp = self.checkpoint, self.dataset, self.timestamp
        evaluated = self.evaluated
        correct = self.scores.count(1)
        total = len(evaluated)
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
            "latency": {
                **{name: memorybench_stats(self.durations[name]) for name in PHASES},
                "total": memorybench_stats(self.totals),
            },
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
                report["memscoreComponents"] = {
                    "quality": quality,
                    "latencyMs": latency_ms,
                    "contextTokens": ctx,
                }
        retrieval = _retrieval(self.metrics)
        if retrieval is not None:
            report["retrieval"] = retrieval

        groups: dict[str, list[int]] = {}
        for i, q in enumerate(evaluated):
            groups.setdefault(self.qtype(q), []).append(i)
        by_type: dict[str, Any] = {}
        search, answer, scores = self.durations["search"], self.durations["answer"], self.scores
        for name, idx in groups.items():
            n_correct = sum(1 for i in idx if scores[i] == 1)
            entry: dict[str, Any] = {
                "total": len(idx),
                "correct": n_correct,
                "accuracy": n_correct / len(idx),
                "latency": {
                    "search": memorybench_stats([search[i] for i in idx]),
                    "answer": memorybench_stats([answer[i] for i in idx]),
                    "total": memorybench_stats([self.totals[i] for i in idx]),
                },
            }
            r = _retrieval([self.metrics[i] for i in idx])
            if r is not None:
                entry["retrieval"] = r
            by_type[name] = entry
        report["byQuestionType"] = by_type
        report["questionTypeRegistry"] = dataset.type_registry
        return report

    def evaluations(self, *, js: bool, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        """Each evaluated question's entry (those from ``start`` to ``stop``); with ``js``, as values
        ``runformat.jsjson`` writes directly."""
        evaluated, totals = self.evaluated[start:stop], self.totals[start:stop]
        decode = decode_js_floats if js else msgspec.json.decode  # js_list_items checks what it encodes
        metrics = _js_metrics(evaluated) if js else None
        duration = _js_duration if js else _num
        by_id = self.by_id
        for n, (q, total) in enumerate(zip(evaluated, totals, strict=True)):
            dq: DatasetQuestion | None = by_id.get(q.questionId)
            phases = q.phases
            ev = phases.evaluate
            if dq is not None:
                qtype, text, truth = dq.question_type, dq.question, dq.ground_truth
            else:
                qtype, text, truth = q.questionType, q.question, q.groundTruth
            item: dict[str, Any] = {
                "questionId": q.questionId,
                "questionType": qtype,
                "question": text,
                "score": _js_score(ev.score) if js else ev.score,
                "label": ev.label,
                "explanation": ev.explanation,
                "hypothesis": phases.answer.hypothesis,
                "groundTruth": truth,
                "searchResults": decode(_results_text(phases.search.results)),
                "searchDurationMs": duration(phases.search.durationMs),
                "answerDurationMs": duration(phases.answer.durationMs),
                "totalDurationMs": js_float(float(total)) if js else total,
            }
            m = metrics[n] if metrics is not None else decode(_metrics_text(ev.retrievalMetrics))
            if m is not None:
                item["retrievalMetrics"] = m
            if None in item.values():  # JSON.stringify drops keys whose value is undefined
                item = {k: v for k, v in item.items() if v is not None}
            yield item


def _js_metrics(questions: list[Any]) -> list[Any]:
    """Each question's retrieval metrics as ``decode_js_floats`` values (``js_list_items`` checks what it
    encodes), keys in the checkpoint's order, decoded in one call."""
    texts = [_metrics_text(q.phases.evaluate.retrievalMetrics) for q in questions]
    metrics: list[Any] = decode_js_floats(b"[" + b",".join(texts) + b"]")
    return metrics


def _results_text(raw: msgspec.Raw | list[msgspec.Raw] | None) -> bytes | msgspec.Raw:
    """A question's search results as one JSON array text (``[]`` when absent)."""
    if isinstance(raw, list):  # a full Checkpoint's: one slice per result
        return b"[" + b",".join(raw) + b"]"
    if not raw or (len(raw) == 4 and bytes(raw) == b"null"):
        return b"[]"
    return raw


def _metrics_text(m: msgspec.Raw | RetrievalMetrics | None) -> bytes | msgspec.Raw:
    """A question's retrieval metrics as JSON text (``null`` when absent), keys in the checkpoint's order."""
    if m is None:
        return b"null"
    if isinstance(m, msgspec.Raw):
        return m if m else b"null"
    return msgspec.json.encode(m)  # a full Checkpoint's struct: its fields in order


def _js_duration(x: float | None) -> int | float | msgspec.Raw | None:
    """``to_js(_num(x))`` for a duration (``0`` when absent)."""
    return 0 if x is None else _js_score(x)


def _js_score(x: float | None) -> int | float | msgspec.Raw | None:
    """``to_js(x)`` for a score (None when absent)."""
    if type(x) is int and -_MAX_SAFE <= x <= _MAX_SAFE:  # the commonest case first
        return x
    return js_float(x) if type(x) is float else to_js(x)


def build_memorybench_report(
    checkpoint: Checkpoint | ReportCheckpoint, dataset: MemoryBenchDataset, *, timestamp: str | None = None
) -> dict[str, Any]:
    """The report.json dict MemoryBench would write for ``checkpoint`` on ``dataset``."""
    with gc_paused():
        report = _Report(checkpoint, dataset, timestamp)
        return {**report.head, "evaluations": list(report.evaluations(js=False))}


def memorybench_report(
    run_dir: str | Path, dataset: str | Path, *, timestamp: str | None = None
) -> dict[str, Any]:
    """Read a run directory and a dataset file, and build MemoryBench's report.json for them."""
    checkpoint = read_report_checkpoint(run_dir)
    with gc_paused():
        report = _Report(checkpoint, read_memorybench_dataset(dataset), timestamp)
        _check_run_on(report, dataset)
        return {**report.head, "evaluations": list(report.evaluations(js=False))}


def _check_run_on(report: _Report, dataset: str | Path) -> None:
    """Refuse another benchmark's dataset file: one that holds none of the run's evaluated questions, for a run
    whose recorded benchmark is not the file's (its labels and type registry would go into the report with the
    run's numbers). A run on the file's benchmark is reported whatever its ids (each question not in the file
    as its checkpoint has it)."""
    by_id = report.by_id
    if not report.evaluated or any(q.questionId in by_id for q in report.evaluated):
        return  # in a run made on this file the first question is found: no pass over them all
    benchmark = report.checkpoint.benchmark
    if benchmark.lower().replace("_", "-").split("-")[0] == report.dataset.benchmark:
        return
    raise DatasetError(
        f"{dataset}: none of the run's {len(report.evaluated)} evaluated questions is in this "
        f"{report.dataset.benchmark} file (e.g. {report.evaluated[0].questionId}); the run is on "
        f"{benchmark or 'another benchmark'}: give --dataset the file the run was made on"
    )


def write_memorybench_report(
    run_dir: str | Path,
    dataset: str | Path,
    output: str | Path,
    *,
    timestamp: str | None = None,
    parallel: bool | None = None,
) -> dict[str, Any]:
    """Write MemoryBench's report.json for ``run_dir`` to ``output`` (atomically); returns its summary parts.

    Written into the run directory (the default), anywhere inside it, or into another run's folder
    (``lock.run_containing``), it is written under that run's lock (``lock.lock_run``,
    ``RunLockedError`` while bench-nb runs, rejudges or reanswers it): a writer taking the lock deletes the
    temporary files bench-nb's writers make there (``lock.RUN_TEMP_FILES``, this one's among them).

    ``parallel``: encode the second half of the evaluations in a forked child process (``runformat.forked``)
    while this one encodes the first; the bytes are the same. None (the default): where a fork is safe and
    worth it (POSIX, a second CPU and an idle one, no other thread) and the report has at least
    ``_PARALLEL_BATCHES`` batches of evaluations to encode. True forces it wherever ``os.fork`` exists; False never forks.
    """
    out = Path(output)
    # anywhere inside the run (its results/ too), or in another run's folder: under that run's lock, where
    # another writer taking it cannot delete this one's temporary files
    run = run_containing(out, run_dir)
    with lock_run(run, "bench-nb memorybench-report") if run else contextlib.nullcontext():
        # read first: a folder that is no run is refused before an output folder is made in it
        checkpoint = read_report_checkpoint(run_dir)
        out.parent.mkdir(parents=True, exist_ok=True)
        # Inside a run, the temporary files take the names the next writer deletes if this one is killed
        # (lock.RUN_TEMP_FILES), in the run's folder, whatever the output is called and wherever in the run it
        # goes; elsewhere they sit beside the output.
        tmp = run / REPORT_TEMP if run else out.with_name(out.name + ".tmp")
        part = run / REPORT_PART_TEMP if run else out.with_name(out.name + ".part.tmp")
        try:
            with gc_paused():
                report = _Report(checkpoint, read_memorybench_dataset(dataset), timestamp)
                _check_run_on(report, dataset)
                with open(tmp, "wb") as f:
                    _write_report(report, f, part, parallel)
        except BaseException:
            tmp.unlink(missing_ok=True)  # an earlier report.json stays as it was
            raise
        tmp.replace(out)
    return report.head


_CHUNK = 256  # evaluations encoded and laid out per msgspec call
_PARALLEL_BATCHES = 8  # below this many batches a fork is not worth it
# The parent's share of the batches when forked: it also computes the summary statistics (``head``) while the
# child encodes, about a sixth as long as encoding all the evaluations on a 100,000-question run.
_PARENT_SHARE = 0.42


def _write_report(report: _Report, f: BinaryIO, part: Path, parallel: bool | None) -> None:
    n = len(report.evaluated)
    batches = -(-n // _CHUNK)
    if parallel is None:
        parallel = batches >= _PARALLEL_BATCHES and fork_is_safe() and cpu_to_spare()
    parallel = parallel and hasattr(os, "fork") and batches >= 2
    if not parallel:
        f.write(js_object_opening(to_js(report.head), "evaluations"))
        _write_items(f, report.evaluations(js=True), first=True)
    else:
        split = max(1, round(batches * _PARENT_SHARE)) * _CHUNK  # the child encodes from here on
        rest = partial(_write_items, items=report.evaluations(js=True, start=split), first=False)
        # Forked before the summary statistics are computed: the parent computes them while the child encodes.
        with ForkedWrite(part, rest) as child:
            f.write(js_object_opening(to_js(report.head), "evaluations"))
            _write_items(f, report.evaluations(js=True, stop=split), first=True)
            if child.join():
                child.copy_into(f)
            else:  # the child failed: its part written here (an error in it is raised here)
                rest(f)
    f.write(js_object_closing(empty=n == 0))


def _write_items(f: BinaryIO, items: Iterator[dict[str, Any]], first: bool) -> None:
    """The evaluations' text (``jsjson.js_list_items``), written to ``f``."""
    f.writelines(js_list_items(items, chunk=_CHUNK, first=first))
