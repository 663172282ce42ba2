"""Answer a run's wrong answers again from the gold evidence alone (``bench-nb reanswer RUN --from gold-evidence``).

For each question the run's primary judge scored below full marks, the run's answerer (the one it recorded,
``benchNb.answerer``; or another given) answers again with the benchmark's gold evidence as its only context:
the messages the question's evidence ids name (a session id names every message of that session), rendered as
the sqlite provider renders a hit (``[date] speaker: text``), in haystack order. The run's primary judge grades
the new answer. Each result is a line of ``reanswer.jsonl`` beside the run (``runformat.reanswer``), appended as
it comes under the run's lock (the run and the file are read under it too); the checkpoint, journal and
judgments are not touched. A question already re-answered is skipped unless ``force``. Model calls go through
the LLM client like every other (its response cache included: a second call costs nothing).

``bn.failure_reasons`` reads the file: a reader error whose re-answer is still wrong is ``reader_error_confirmed``.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_nb.benchmarks.gold import gold_hits
from bench_nb.errors import BenchNbError, RunFormatError
from bench_nb.models.aliases import check_credentials
from bench_nb.models.base import Answerer
from bench_nb.models.prompt import in_context_format
from bench_nb.records import Benchmark
from bench_nb.runformat.format import now_iso
from bench_nb.runformat.jsonl import repair_tail
from bench_nb.runformat.load import read_run
from bench_nb.runformat.lock import lock_run
from bench_nb.runformat.reanswer import REANSWER_FILE, Reanswer, read_reanswers
from bench_nb.runformat.spec import UNVERSIONED_CONTEXT_FORMAT, primary_judge, read_spec
from bench_nb.runner.components import component_options, make_answerer
from bench_nb.runner.rejudge import resolve_judge
from bench_nb.runner.repeats import repeat_number, run_client

SOURCES = ("gold-evidence",)


@dataclass(frozen=True)
class ReanswerResult:
    """What a ``reanswer`` call did."""

    run_dir: Path
    answerer: str
    judge: str
    answered: int  # re-answered now
    skipped: int  # already re-answered (not forced)
    no_evidence: int  # wrong answers whose question names no gold evidence found in the haystack
    still_wrong: int  # of those answered now, how many the judge still scored below 1

    def __str__(self) -> str:
        return (
            f"{self.run_dir}: {self.answered} wrong answer(s) answered again from the gold evidence by "
            f"{self.answerer} (graded by {self.judge}): {self.still_wrong} still wrong; {self.skipped} already "
            f"done, {self.no_evidence} without gold evidence. Written to {REANSWER_FILE}."
        )


def reanswer(
    run_dir: str | os.PathLike[str],
    *,
    source: str = "gold-evidence",
    answerer: str | Answerer | None = None,
    answerer_options: dict[str, Any] | None = None,
    benchmark: str | Benchmark | None = None,
    dataset: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> ReanswerResult:
    """Answer the run's wrong answers again from the gold evidence; see the module docstring.

    Args:
        run_dir: the run directory (one bench_nb wrote: its checkpoint names answerer, benchmark and judge).
        source: where the context comes from; only ``"gold-evidence"``.
        answerer: the answerer to use (default: the run's own, by the name it recorded).
        answerer_options: its keyword options.
        benchmark, dataset: the benchmark (a name or a loaded one) and its file (default: the run's own).
        force: answer again questions already in ``reanswer.jsonl``.

    Raises:
        BenchNbError: an unknown source, a run without a checkpoint, or an answerer or benchmark the run does
            not name (made with an object): give it.
        ModelError: the answerer's or the judge's API key is not in the environment (every missing one named),
            before the first question is answered.
    """
    if source not in SOURCES:
        raise BenchNbError(f"reanswer: unknown source {source!r}; known: {', '.join(SOURCES)}")
    path = Path(run_dir)
    # one writer per run (runformat.lock.lock_run, which refuses a folder that is no run, leaving it as it was); the
    # run and reanswer.jsonl read under its lock, as they stand once no other writer can change them
    with lock_run(path, "bench-nb reanswer"):
        return _reanswer(path, source, answerer, answerer_options, benchmark, dataset, force)


def _reanswer(
    path: Path,
    source: str,
    answerer: str | Answerer | None,
    answerer_options: dict[str, Any] | None,
    benchmark: str | Benchmark | None,
    dataset: str | os.PathLike[str] | None,
    force: bool,
) -> ReanswerResult:
    run = read_run(path)
    if run.checkpoint is None:
        raise RunFormatError(
            str(path), "reanswer needs the run's checkpoint.json (its questions and answerer)"
        )
    spec = read_spec(run)
    invocation = spec.invocation
    answerer_name = answerer if answerer is not None else (invocation.answerer if invocation else None)
    if answerer_name is None:
        answerer_name = spec.answerer
    if answerer_name is None:
        raise BenchNbError(f"{path}: the run does not record its answerer by name; give one (answerer=...)")
    client = run_client(repeat_number(path, spec))  # the run's own response cache (a repeat's)
    options, _ = component_options(answerer_name, [], answerer_options, None, client=client)
    # The run's own context format, so the re-answer sees its hits as the run's answers did.
    context_format = spec.context_format or UNVERSIONED_CONTEXT_FORMAT
    reader = in_context_format(make_answerer(answerer_name, options), context_format, str(path))
    judge_name = primary_judge(run) or run.checkpoint.judge
    judge = resolve_judge(judge_name, client)
    bench = benchmark or (invocation.benchmark if invocation else None) or run.checkpoint.benchmark
    if not bench:
        raise BenchNbError(f"{path}: the run does not name its benchmark; give it (benchmark=...)")
    if not isinstance(bench, Benchmark):
        from bench_nb.benchmarks.registry import load_benchmark

        data = dataset if dataset is not None else (invocation.dataset if invocation else None)
        bench = load_benchmark(bench, None if data is None else os.fspath(data), progress=False)
    by_id = {q.question_id: q for q in bench.questions}
    done, _ = read_reanswers(path)
    answered = skipped = no_evidence = still_wrong = 0
    with contextlib.closing(client):  # no file left open after
        out = (path / REANSWER_FILE).open("ab+")
        try:
            repair_tail(out)  # a torn last line (a killed reanswer) is closed or cut, never appended after
            for qid, q in run.checkpoint.questions.items():
                ev = q.phases.evaluate
                if ev.status != "completed" or ev.score is None or ev.score >= 1:
                    continue
                if qid in done and not force:
                    skipped += 1
                    continue
                question = by_id.get(qid)
                hits = gold_hits(question, bench.haystacks.get(question.haystack_id)) if question else []
                if question is None or not hits:
                    no_evidence += 1
                    continue
                if not answered:  # before the first call: every missing key named, nothing half done
                    check_credentials(reader, [judge])
                answer = reader.answer(question, hits)
                verdict = judge.judge(question, answer.hypothesis)
                record = Reanswer(
                    question_id=qid,
                    hypothesis=answer.hypothesis,
                    score=verdict.score,
                    judge=judge.name,
                    answerer=reader.name,
                    evidence_ids=tuple(question.evidence_ids),
                    source=source,
                    created_at=now_iso(),
                )
                out.write(record.line())
                out.flush()
                answered += 1
                still_wrong += verdict.score is not None and verdict.score < 1
        finally:
            out.close()
    return ReanswerResult(path, reader.name, judge.name, answered, skipped, no_evidence, still_wrong)
