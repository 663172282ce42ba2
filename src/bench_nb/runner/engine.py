"""The scheduler: runs the five phases of every target question, records each outcome, and keeps going.

Work units: a *container* goes through ingest and indexing once (all the questions that share its haystack
wait for it), then each of its questions goes through search, answer and evaluate. Every phase has its own
sliding-window pool (``runner.pool``), so phases overlap: a conversation's questions are being answered while
the next conversation is still being ingested.

One thread (the caller's) owns the run's state: workers only call the provider, answerer and judges (with
retries) and hand back an ``_Outcome``; the scheduler records it in memory and in the journal, and starts what
comes next. A question whose phase still fails after its retries keeps its error in that phase and goes no
further; the others go on (``fail_fast`` stops starting new work instead).
"""

from __future__ import annotations

import contextlib
import json
import queue
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from bench_nb.errors import HoldBoardLost, RunFormatError
from bench_nb.judges.base import majority_verdict
from bench_nb.models.deadline import deadline
from bench_nb.providers.usage import metered
from bench_nb.records import Haystack, IngestResult, Message, SearchHit, Session, Verdict
from bench_nb.redaction import error_text
from bench_nb.runformat.format import (
    PHASES,
    AnswerPhase,
    Checkpoint,
    EvaluatePhase,
    IndexingPhase,
    IngestPhase,
    Phase,
    SearchPhase,
    now_iso,
    result_file_name,
)
from bench_nb.runformat.format import IngestResult as IngestRecord
from bench_nb.runformat.format import Question as QuestionRecord
from bench_nb.runformat.journal import (
    JOURNAL,
    PHASE_TYPES,
    JournalWriter,
    make_record,
    merge_bench_nb,
    write_atomic,
    write_checkpoint,
)
from bench_nb.runformat.jsonl import GroupAppender
from bench_nb.runformat.verdicts import FILENAME as VERDICTS
from bench_nb.runformat.verdicts import verdict_lines
from bench_nb.runner.hits import decode_hits, encode_results, hit_to_result
from bench_nb.runner.plan import Container, RunPlan
from bench_nb.runner.pool import Done, WindowPool
from bench_nb.runner.progress import PhaseBars, progress_enabled
from bench_nb.runner.retrieval import EvidenceIndex, RetrievalOutcome, score_retrieval
from bench_nb.runner.retry import Attempts, call_with_retries, is_retryable
from bench_nb.runner.settings import DEFAULT_K
from bench_nb.runner.usage import answer_usage, judge_replicates_with_usage, memory_usage, run_usage


def results_file_bytes(
    qid: str, question: QuestionRecord, results: list[Any], duration_ms: float | None, at: str | None
) -> bytes:
    """The content of ``results/<questionId>.json`` as MemoryBench writes it."""
    body = {
        "questionId": qid,
        "question": question.question,
        "questionType": question.questionType,
        "groundTruth": question.groundTruth,
        "containerTag": question.containerTag,
        "timestamp": at,
        "durationMs": duration_ms,
        "results": results,
    }
    return json.dumps(body, ensure_ascii=False, indent=2).encode("utf-8")


def restore_results_files(run_dir: Path, checkpoint: Checkpoint) -> list[str]:
    """Write every ``results/<questionId>.json`` missing for a search the checkpoint records complete.

    The runner writes those files without waiting for them, so a kill can lose some whose search is
    recorded; the checkpoint holds the same results. Returns the question ids whose file was rewritten.
    """
    folder = run_dir / "results"
    folder.mkdir(exist_ok=True)
    present = {p.name for p in folder.iterdir()}
    restored = []
    for qid, question in checkpoint.questions.items():
        search = question.phases.search
        if search.status != "completed":
            continue
        recorded = (search.resultFile or "").replace("\\", "/").rsplit("/", 1)[-1]
        if recorded in present:  # an older run's name is kept
            continue
        name = result_file_name(qid)
        if name not in present:
            results = [msgspec.json.decode(r) for r in search.results or ()]
            data = results_file_bytes(qid, question, results, search.durationMs, search.completedAt)
            write_atomic(folder / name, data, durable=False)
            restored.append(qid)
        if search.resultFile:  # the name this release gives it (the recorded one was lost, or too long)
            search.resultFile = str(folder / name)
    return restored


def blinded(haystack: Haystack) -> tuple[tuple[Session, ...], dict[str, str]]:
    """What a provider is given of ``haystack``, and the way back to the dataset's ids.

    Nothing that tells the question, its answer, its type or its evidence: sessions are renamed ``s1``,
    ``s2``... in the haystack's order and their messages ``s1:1``, ``s1:2``... (LongMemEval names evidence
    sessions ``answer_...``, BEAM's carry the haystack id), evidence marks (``has_answer``) are cleared and the
    datasets' extra fields left out; roles, texts, dates and timestamps are kept. The map takes each opaque
    session and message id back to the dataset's, so hits are recorded (and scored) in the dataset's ids.
    """
    sessions, back = [], {}
    for i, s in enumerate(haystack.sessions, start=1):
        sid = f"s{i}"
        back[sid] = s.session_id
        messages = []
        for j, m in enumerate(s.messages, start=1):
            mid = f"{sid}:{j}"
            if m.message_id:
                back[mid] = m.message_id
            messages.append(Message(role=m.role, content=m.content, timestamp=m.timestamp, message_id=mid))
        sessions.append(Session(session_id=sid, date=s.date, messages=tuple(messages)))
    return tuple(sessions), back


def unblinded(hits: Sequence[SearchHit], back: dict[str, str]) -> list[SearchHit]:
    """``hits`` with the opaque session and message ids of ``blinded`` turned back into the dataset's."""
    return [
        replace(
            h,
            session_id=back.get(h.session_id, h.session_id) if h.session_id else h.session_id,
            hit_id=back.get(h.hit_id, h.hit_id) if h.hit_id else h.hit_id,
        )
        for h in hits
    ]


@dataclass(frozen=True)
class _Outcome:
    value: Any
    error: BaseException | None
    started_at: str
    completed_at: str
    duration_ms: float
    attempts: int


class Engine:
    """Runs a plan (``runner.plan.RunPlan``): the phases of its containers' questions, recorded into its
    checkpoint (see the module docstring)."""

    def __init__(self, plan: RunPlan) -> None:
        self.run_dir = plan.run_dir
        self.ck = plan.checkpoint
        self.questions = {q.question_id: q for q in plan.questions}
        self.containers = {c.tag: c for c in plan.containers}
        self.provider, self.traits = plan.provider, plan.traits
        self._evidence = {c.haystack.haystack_id: EvidenceIndex.of(c.haystack) for c in plan.containers}
        self._blind = {c.haystack.haystack_id: blinded(c.haystack) for c in plan.containers}
        self.answerer, self.cpu_bound = plan.answerer, plan.component_traits.cpu_bound
        self.judges = list(plan.judges)
        self.settings = plan.options
        self.k = plan.spec.k or DEFAULT_K
        self.judge_replicates = plan.spec.replicates
        self.resumed = plan.resumed
        self.stopped = False
        self._results: queue.SimpleQueue[Done] = queue.SimpleQueue()
        self._pools = {p: WindowPool(p, self.settings.limit(p), self._results) for p in PHASES}
        self._files = WindowPool("files", 2, self._results)
        self._outstanding = 0
        self._verdicts = GroupAppender(self.run_dir / VERDICTS)
        self._dirty = False
        self._journal: JournalWriter | None = None
        self._bars: PhaseBars | None = None
        self._next_compaction = 0.0

    # -- the loop ---------------------------------------------------------------------------------------

    def run(self) -> str:
        """Run everything not yet done, each outcome journaled and the journal compacted into the checkpoint
        (written just before), with progress bars; returns the run's status: ``"completed"``, or ``"failed"``
        when fail-fast stopped it or it raised."""
        completed = {
            p: sum(1 for q in self.ck.questions.values() if getattr(q.phases, p).status == "completed")
            for p in PHASES
        }
        label = f"{self.traits.name}/{self.ck.benchmark}"
        self._bars = PhaseBars(
            len(self.questions), completed, progress_enabled(self.settings.progress), label
        )
        self._journal = JournalWriter(self.run_dir)  # emptied: the checkpoint just written holds what it had
        status = "failed"
        try:  # from the warm-up on: a run interrupted there ends as anywhere else (failed, journal compacted)
            self.warm_up()
            self._next_compaction = time.monotonic() + self.settings.checkpoint_every_s
            for container in self.containers.values():
                self._start_container(container)
            while self._outstanding:
                timeout = max(0.0, self._next_compaction - time.monotonic()) if self._dirty else None
                try:
                    done = self._results.get(timeout=timeout)
                except queue.Empty:
                    self.compact()
                    continue
                self._outstanding -= 1
                self._handle(done)
                if self._dirty and time.monotonic() >= self._next_compaction:
                    self.compact()
            status = "failed" if self.stopped else "completed"
        finally:
            for pool in (*self._pools.values(), self._files):
                pool.shutdown(wait=not self._outstanding)
            self._bars.close()
            self.compact(status)
            self._journal.close()
            with contextlib.suppress(OSError):
                (self.run_dir / JOURNAL).unlink()
        return status

    def warm_up(self) -> None:
        """Call ``warm_up()`` on the provider, answerer and judges that define one, once, before any timed
        call: what their first call would load (a tokenizer's tables: 1-2 s) is otherwise in the latency of
        as many calls as run at once. A warm-up that fails is left to the calls themselves."""
        for obj in (self.provider, self.answerer, *self.judges):
            warm = getattr(obj, "warm_up", None)
            if callable(warm):
                try:
                    warm()
                except Exception:
                    continue  # the first real call meets the same error and records it

    def compact(self, status: str | None = None) -> None:
        """Write the whole state to checkpoint.json atomically, then empty the journal it now holds."""
        assert self._journal is not None
        if status is not None:
            self.ck.status = status  # type: ignore[assignment]
        self.ck.updatedAt = now_iso()
        start = time.monotonic()
        self._sum_usage()
        write_checkpoint(self.run_dir, self.ck)
        self._journal.rotate()
        cost = time.monotonic() - start
        self._dirty = False
        # Never spend more than ~5% of the time compacting, however large the run.
        self._next_compaction = time.monotonic() + max(self.settings.checkpoint_every_s, 20 * cost)

    def _sum_usage(self) -> None:
        """Run-level ``benchNb.usage``: the questions' usage summed (``runner.usage``)."""
        questions = self.ck.questions.values()
        usage = run_usage((q.benchNb for q in questions), (q.containerTag for q in questions))
        extra = {k: v for k, v in (self.ck.benchNb or {}).items() if k != "usage"}
        self.ck.benchNb = extra | ({"usage": usage} if usage else {})

    # -- scheduling -------------------------------------------------------------------------------------

    def _submit(self, phase: str, key: str, fn: Callable[[Attempts], Any]) -> None:
        if self.stopped:
            return
        self._outstanding += 1
        self._pools[phase].submit(key, lambda: self._timed(fn))

    @staticmethod
    def _timed(fn: Callable[[Attempts], Any]) -> _Outcome:
        attempts = Attempts()
        started_at, start = now_iso(), time.perf_counter()
        try:
            value, error = fn(attempts), None
        except Exception as err:  # recorded in the question's phase
            value, error = None, err
        duration = round((time.perf_counter() - start) * 1000, 3)
        return _Outcome(value, error, started_at, now_iso(), duration, attempts.count)

    def _phase(self, qid: str, phase: str) -> Phase:
        return getattr(self.ck.questions[qid].phases, phase)  # type: ignore[no-any-return,unused-ignore]

    def _start_container(self, c: Container) -> None:
        ingested = all(self._phase(q, "ingest").status == "completed" for q in c.question_ids)
        needs_data = any(self._phase(q, "search").status != "completed" for q in c.question_ids)
        # A provider that keeps its memories in process memory lost them when the run died: ingest again.
        lost = self.resumed and ingested and needs_data and not self.traits.persistent
        if not ingested or lost:
            self._submit_ingest(c, clear_first=self.resumed)
        elif any(self._phase(q, "indexing").status != "completed" for q in c.question_ids):
            self._submit_indexing(c)
        else:
            for qid in c.question_ids:
                self._advance(qid)

    def _advance(self, qid: str) -> None:
        for phase, submit in (
            ("search", self._submit_search),
            ("answer", self._submit_answer),
            ("evaluate", self._submit_evaluate),
        ):
            if self._phase(qid, phase).status != "completed":
                submit(qid)
                return

    def _call(self, attempts: Attempts, fn: Callable[[], Any]) -> Any:
        return call_with_retries(fn, self.settings.retry, attempts)

    def _submit_question(self, phase: str, qid: str, fn: Callable[[Attempts], Any]) -> None:
        """A question's search, answer or evaluation: under the question deadline (``models.deadline``)."""
        seconds = self.settings.question_timeout_s

        def work(attempts: Attempts) -> Any:
            with deadline(seconds):
                return fn(attempts)

        self._submit(phase, qid, work)

    def _submit_ingest(self, c: Container, *, clear_first: bool) -> None:
        provider, sessions = self.provider, self._blind[c.haystack.haystack_id][0]
        reports = self.traits.reports_usage

        def work(attempts: Attempts) -> tuple[IngestResult, dict[str, Any] | None]:
            if clear_first:  # an ingest not recorded complete may have stored part of the haystack
                self._call(Attempts(), lambda: provider.clear(c.tag))
            # each attempt metered on its own: only the kept attempt's model calls are recorded
            return self._call(attempts, lambda: metered(reports, lambda: provider.ingest(c.tag, sessions)))  # type: ignore[no-any-return,unused-ignore]

        self._submit("ingest", c.tag, work)

    def _submit_indexing(self, c: Container) -> None:
        rec = self.ck.questions[c.question_ids[0]].phases.ingest.ingestResult or IngestRecord()
        ingested = IngestResult(tuple(rec.documentIds), tuple(rec.taskIds or ()))
        timeout = self.settings.indexing_timeout_s
        self._submit(
            "indexing",
            c.tag,
            lambda attempts: self._call(
                attempts, lambda: self.provider.await_indexing(c.tag, ingested, timeout)
            ),
        )

    def _submit_search(self, qid: str) -> None:
        q = self.questions[qid]
        tag = self.ck.questions[qid].containerTag
        back = self._blind[q.haystack_id][1]

        def work(attempts: Attempts) -> tuple[list[Any], list[SearchHit], float, dict[str, Any] | None]:
            start = time.perf_counter()
            hits, used = self._call(
                attempts,
                lambda: metered(
                    self.traits.reports_usage, lambda: self.provider.search(tag, q.question, self.k)
                ),
            )
            duration = round((time.perf_counter() - start) * 1000, 3)
            hits = unblinded(hits, back)
            return encode_results(hits), hits, duration, used

        self._submit_question("search", qid, work)

    def _write_results_file(self, qid: str, hits: list[SearchHit], duration_ms: float, at: str) -> None:
        """MemoryBench's ``results/<questionId>.json`` (a copy of what the checkpoint holds), written off the
        search pool so a slow disk never holds a search slot; atomic, not fsync'd (a resume rewrites a file
        that a kill lost: ``restore_results_files``)."""
        results = [hit_to_result(h) for h in hits]
        data = results_file_bytes(qid, self.ck.questions[qid], results, duration_ms, at)
        path = self.run_dir / "results" / result_file_name(qid)
        self._outstanding += 1
        self._files.submit(qid, lambda: write_atomic(path, data, durable=False))

    def _submit_answer(self, qid: str) -> None:
        q, raw = self.questions[qid], self.ck.questions[qid].phases.search.results

        def answer(attempts: Attempts) -> tuple[Any, float | None]:
            start = time.thread_time()
            value = self._call(attempts, lambda: self.answerer.answer(q, decode_hits(raw)))
            return value, round((time.thread_time() - start) * 1000, 3) if self.cpu_bound else None

        self._submit_question("answer", qid, answer)

    def _submit_evaluate(self, qid: str) -> None:
        q = self.questions[qid]
        hypothesis = self.ck.questions[qid].phases.answer.hypothesis or ""
        raw = self.ck.questions[qid].phases.search.results

        n = self.judge_replicates

        def work(attempts: Attempts) -> tuple[list[Verdict], RetrievalOutcome, dict[str, Any]]:
            verdicts, usage = [], {}
            by_replicate: dict[int, list[tuple[str, Verdict]]] = {}
            for judge in self.judges:
                reps, used = self._call(
                    attempts, partial(judge_replicates_with_usage, judge, q, hypothesis, n)
                )
                reps = [v if v.judge else replace(v, judge=judge.name) for v in reps]
                for r, v in enumerate(reps, start=1):
                    by_replicate.setdefault(r, []).append((qid, v))
                verdicts.append(majority_verdict(reps))  # one replicate: that verdict
                if used is not None:
                    usage[judge.name] = used
            # on disk before the evaluation is recorded done; the workers' appends share fsyncs
            self._verdicts.append(
                [
                    line
                    for r, pairs in sorted(by_replicate.items())
                    for line in verdict_lines(pairs, replicate=r)
                ]
            )
            retrieval = score_retrieval(
                decode_hits(raw),
                q.evidence_ids,
                self._evidence[q.haystack_id],
                k=self.k,
                provider=self.traits.name,
                provider_level=self.traits.evidence_level,
            )
            return verdicts, retrieval, usage

        self._submit_question("evaluate", qid, work)

    # -- recording --------------------------------------------------------------------------------------

    def _record(self, qids: Sequence[str], phase: str, rec: Phase, bench_nb: dict[str, Any]) -> None:
        for qid in qids:
            question = self.ck.questions[qid]
            setattr(question.phases, phase, rec)
            question.benchNb = merge_bench_nb(question.benchNb, bench_nb)
        assert self._journal is not None
        self._journal.append(make_record(list(qids), phase, rec, bench_nb))
        self._dirty = True

    def _handle(self, done: Done) -> None:
        if done.pool == "files":
            if done.error is not None:  # a disk that cannot take a results file will not take the journal
                raise RunFormatError(self.run_dir / "results", f"cannot write a results file: {done.error}")
            return
        if done.error is not None:  # the wrapper itself failed: a bug, not a provider error
            raise done.error
        out: _Outcome = done.result
        if isinstance(out.error, HoldBoardLost):  # the sweep's shared board is gone: the run stops, the
            raise out.error  # question is not blamed (it resumes when the sweep is run again)
        phase, key = done.pool, str(done.key)
        qids = self.containers[key].question_ids if phase in ("ingest", "indexing") else (key,)
        timing: dict[str, Any] = {
            "startedAt": out.started_at,
            "completedAt": out.completed_at,
            "durationMs": out.duration_ms,
        }
        bench_nb: dict[str, Any] = {"attempts": {phase: out.attempts}}
        assert self._bars is not None
        self._bars.update(phase, len(qids), failed=out.error is not None)
        if out.error is None:
            bench_nb["errors"] = {phase: None}
            getattr(self, f"_completed_{phase}")(key, qids, out, timing, bench_nb)
            return
        retryable, message = is_retryable(out.error), error_text(out.error)
        bench_nb["errors"] = {
            phase: {
                "type": type(out.error).__name__,
                "message": message,
                "attempts": out.attempts,
                "retryable": retryable,
            }
        }
        self._record(qids, phase, PHASE_TYPES[phase](status="failed", error=message, **timing), bench_nb)
        if self.settings.fail_fast:
            self._stop()

    def _completed_ingest(
        self, key: str, qids: Sequence[str], out: _Outcome, timing: dict[str, Any], bn: dict[str, Any]
    ) -> None:
        c = self.containers[key]
        value, used = out.value
        result: IngestResult = value or IngestResult()
        rec = IngestPhase(
            status="completed",
            completedSessions=[s.session_id for s in c.haystack.sessions],
            ingestResult=IngestRecord(
                documentIds=list(result.document_ids), taskIds=list(result.task_ids) or None
            ),
            **timing,
        )
        if len(qids) > 1:
            bn["sharedContainer"] = len(qids)
        memory = memory_usage("ingest", used, len(qids))
        if memory is not None:
            bn["usage"] = memory
        self._record(qids, "ingest", rec, bn)
        self._submit_indexing(c)

    def _completed_indexing(
        self, key: str, qids: Sequence[str], out: _Outcome, timing: dict[str, Any], bn: dict[str, Any]
    ) -> None:
        ingest = self.ck.questions[qids[0]].phases.ingest.ingestResult
        rec = IndexingPhase(
            status="completed",
            completedIds=list(ingest.documentIds) if ingest else [],
            failedIds=[],
            **timing,
        )
        self._record(qids, "indexing", rec, bn)
        for qid in qids:
            self._advance(qid)

    def _completed_search(
        self, key: str, qids: Sequence[str], out: _Outcome, timing: dict[str, Any], bn: dict[str, Any]
    ) -> None:
        results, hits, search_ms, used = out.value
        timing["durationMs"] = search_ms  # the provider call alone
        memory = memory_usage("search", used)
        if memory is not None:
            bn["usage"] = memory
        path = self.run_dir / "results" / result_file_name(key)
        rec = SearchPhase(status="completed", resultFile=str(path), results=results, **timing)
        self._record(qids, "search", rec, bn)
        self._write_results_file(key, hits, search_ms, out.completed_at)
        self._submit_answer(key)

    def _completed_answer(
        self, key: str, qids: Sequence[str], out: _Outcome, timing: dict[str, Any], bn: dict[str, Any]
    ) -> None:
        a, cpu_ms = out.value
        if cpu_ms is not None:  # an in-process answerer: its thread's CPU time, not the waits for the GIL
            timing = {**timing, "durationMs": cpu_ms}
        rec = AnswerPhase(
            status="completed",
            hypothesis=a.hypothesis,
            promptTokens=a.prompt_tokens,
            basePromptTokens=a.base_prompt_tokens,
            contextTokens=a.context_tokens,
            **timing,
        )
        for name, value in (
            ("tokenizer", a.tokenizer),
            ("model", a.model),
            ("inputTokens", a.input_tokens),
            ("outputTokens", a.output_tokens),
            ("costUsd", a.cost_usd),
        ):
            if value is not None:
                bn[name] = value
        used = answer_usage(a)
        if used is not None:
            bn["usage"] = {"answer": used}
        self._record(qids, "answer", rec, bn)
        self._submit_evaluate(key)

    def _completed_evaluate(
        self, key: str, qids: Sequence[str], out: _Outcome, timing: dict[str, Any], bn: dict[str, Any]
    ) -> None:
        verdicts, retrieval, usage = out.value
        primary: Verdict = verdicts[0]
        rec = EvaluatePhase(
            status="completed",
            score=primary.score,
            label=primary.label,
            explanation=primary.explanation,
            retrievalMetrics=retrieval.metrics,
            **timing,
        )
        bn["unscored"] = True if primary.label == "unscored" else None
        if primary.graded:  # a fractional score (BEAM): its items and the official code's reading
            bn["graded"] = True
            bn["publishedScore"] = primary.published_score
            bn["rubricScores"] = list(primary.items) or None
        bn.update(retrieval.bench_nb())
        if usage:
            bn["usage"] = {"judges": usage}
        self._record(qids, "evaluate", rec, bn)

    def _stop(self) -> None:
        """Fail fast: start nothing new; what is running finishes and is recorded."""
        self.stopped = True
        for pool in self._pools.values():
            self._outstanding -= pool.cancel_pending()
