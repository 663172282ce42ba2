"""``run_benchmark``: one provider on one benchmark, into a MemoryBench-format run directory that resumes.

A new run id creates ``<runs_dir>/<run_id>/`` with a checkpoint listing every target question as pending;
the same run id again resumes it (the settings must match): the checkpoint and journal are replayed, every
completed phase is skipped, and only what is not done runs. See docs/runner.md.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_nb.judges.base import Judge
from bench_nb.models.base import Answerer
from bench_nb.providers.base import Provider
from bench_nb.records import Benchmark
from bench_nb.runformat.format import PHASES, Checkpoint
from bench_nb.runformat.journal import CHECKPOINT, JOURNAL, write_checkpoint
from bench_nb.runformat.spec import RunRequest
from bench_nb.runner.components import split_specs
from bench_nb.runner.engine import Engine, restore_results_files
from bench_nb.runner.estimate import RunSizeWarning, start_warnings
from bench_nb.runner.plan import RunOrder, resolve
from bench_nb.runner.report import REPORT, write_report
from bench_nb.runner.retry import RetryPolicy
from bench_nb.runner.settings import (
    DEFAULT_CONCURRENCY,
    DEFAULT_INDEXING_TIMEOUT_S,
    DEFAULT_K,
    DEFAULT_QUESTION_TIMEOUT_S,
    ExecutionOptions,
)
from bench_nb.text import HtmlFields

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunResult(HtmlFields):
    """What a run ended with. ``run_dir`` is the run directory (``load_runs`` and ``questions_df`` read it);
    ``benchmark`` the benchmark's name (a resumed run's is read from its directory)."""

    run_id: str
    run_dir: Path
    status: str
    target: int
    evaluated: int
    failed: int
    not_finished: int
    report_path: Path | None
    scored: int = 0
    correct: int = 0
    unscored: int = 0
    benchmark: str = ""

    @property
    def accuracy(self) -> float | None:
        """bench_nb's accuracy: correct / scored (unscored answers left out); None when none was scored."""
        return self.correct / self.scored if self.scored else None

    def __fspath__(self) -> str:
        return str(self.run_dir)


def run_benchmark(
    provider: str | Provider | None = None,
    benchmark: str | Benchmark | None = None,
    *,
    dataset: str | Path | None = None,
    answerer: str | Answerer | None = None,
    judges: str | Judge | Sequence[str | Judge] | None = None,
    k: int | None = None,
    run_id: str | None = None,
    runs_dir: str | Path = "data/runs",
    limit: int | None = None,
    sample_per_type: int | None = None,
    question_ids: Sequence[str] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    phase_concurrency: Mapping[str, int] | None = None,
    isolate_per_question: bool | None = None,
    fail_fast: bool = False,
    retry: RetryPolicy | None = None,
    indexing_timeout_s: float = DEFAULT_INDEXING_TIMEOUT_S,
    question_timeout_s: float | None = DEFAULT_QUESTION_TIMEOUT_S,
    checkpoint_every_s: float = 5.0,
    progress: bool | None = None,
    repeat: int = 1,
    provider_settings: Mapping[str, Any] | None = None,
    answerer_options: Mapping[str, Any] | None = None,
    judge_options: Mapping[str, Mapping[str, Any]] | None = None,
    allow_provider_prompts: bool | None = None,
    sha256: str | None = None,
    judge_replicates: int | None = None,
    exclude_types: str | Sequence[str] | None = None,
) -> RunResult:
    """Run ``provider`` on ``benchmark``: ingest, indexing, search, answer, evaluate, then report.json.

    Resume: ``run_benchmark(run_id="loc200", runs_dir=...)`` alone resumes that run, as ``bench-nb run -r
    loc200`` does: every setting not given (``None``) is read from the run directory (``runner.plan``):
    provider, benchmark and dataset, answerer, judges, k, the question selection, isolation, provider
    prompts, provider settings and judge replicates. A setting given that differs from the run's is refused
    (``ComparisonError``, naming it: ``"retrieval limit k: 4 in the run, 5 now"``). Concurrency, retries,
    timeouts, fail-fast, progress, provider settings and answerer/judge options may change on a resume.
    A finished run is left as it is. A run made with Provider, Benchmark, Answerer or Judge objects needs
    those objects again (``BenchNbError`` says which).

    Args:
        provider: a registry name (``"sqlite"``), a plugin ``"module:attr"``, or a Provider object; needed
            (with ``benchmark``) unless ``run_id`` names a run to resume.
        benchmark: a registry name (``"locomo"``, ``"sample"``, ...) or a loaded ``Benchmark``.
        dataset: the benchmark file to read instead of the cached download.
        answerer: ``"extractive"`` (offline, the default), an LLM alias, a plugin, or an Answerer object.
        judges: ``"f1,contains"``, a list of names/plugins/Judge objects; the first is the primary judge
            (``phases.evaluate``), every verdict goes to ``judgments.jsonl``. Default: ``contains,f1``, and
            ``rubric`` for BEAM, whose primary judge must be a graded one (``rubric`` or ``rubric:<model>``).
        k: the retrieval limit, the same for every provider (default 10).
        run_id: the run's id; an existing run with this id is resumed. Default: provider-benchmark-time.
        runs_dir: where run directories live.
        limit: ask only the first ``limit`` questions; ``sample_per_type``: the first N of each type;
            ``question_ids``: exactly these.
        concurrency: tasks per phase at once (sliding window); ``phase_concurrency`` overrides per phase.
        isolate_per_question: one container per question (MemoryBench's behaviour; default off).
        fail_fast: stop at the first question that fails after its retries.
        retry: the retry policy for retryable errors (default ``RetryPolicy()``).
        progress: progress bars; None decides from the environment (``BENCH_NB_QUIET=1`` hides them).
        repeat: which repeat of the same settings this run is: repeat i > 1 reads and writes its own LLM response
            cache (``llm.repeat-<i>.sqlite``), through an LLM client of its own (``runner.repeats``).
        indexing_timeout_s: how long a container's indexing may take before its questions fail.
        question_timeout_s: the longest a question's search, answer or evaluation may take, every retry
            included (model calls get at most what is left); then the phase fails. None: no deadline.
        checkpoint_every_s: the least time between two compactions of the run's journal into
            checkpoint.json (default 5 s); progress between two is in journal.jsonl, which reading a run
            replays (docs/runner.md).
        provider_settings: the provider's keyword options; ``PROVIDER.KEY`` keys are accepted for this
            run's provider (as ``compare`` passes them). Recorded in ``benchNb.invocation.providerSettings``
            so a resume can reuse them; a setting that would carry a key or token is refused
            (``ProviderError``): keys come from the environment.
        answerer_options, judge_options: keyword options for the answerer and judges (never written to
            the run: put keys in the environment).
        allow_provider_prompts: let the provider bring its own answer and judge prompts (its
            ``answer_prompt``/``judge_prompt``) for LLM answerers and judges named by alias. A run that used
            one records ``benchNb.customPrompt = true`` and is marked in every table as not graded like
            the others. Off by default: every provider gets the same prompts.
        sha256: the benchmark file's expected sha256: a file with another hash is refused (``DatasetError``)
            before anything runs.
        judge_replicates: grade each answer this many times with each model judge (deterministic judges
            grade once): every replicate goes to ``judgments.jsonl`` (``replicate``), each replicate's reply
            is cached on its own, and the checkpoint holds the primary judge's majority verdict
            (``bench_nb.replicate_summary`` reads the spread). Default 1.
        exclude_types: question types left out before the selection (``limit``, ``sample_per_type``), by
            raw or normalised type: ``"adversarial"`` scores LoCoMo's 1,540 questions of categories 1-4, as
            the literature does. The run records the questions it kept (a resume asks exactly those).

    Returns:
        A ``RunResult`` (its ``run_dir`` loads with ``questions_df``).
    """
    judge_list = None if judges is None else split_specs(judges)
    objects: dict[str, Any] = {
        name: value
        for name, value in (("provider", provider), ("benchmark", benchmark), ("answerer", answerer))
        if value is not None and not isinstance(value, str)
    }
    if judge_list is not None and not all(isinstance(j, str) for j in judge_list):
        objects["judges"] = judge_list
    request = RunRequest(
        provider=provider if isinstance(provider, str) else None,
        benchmark=benchmark if isinstance(benchmark, str) else None,
        dataset=str(dataset) if dataset is not None else None,
        answerer=answerer if isinstance(answerer, str) else None,
        judges=None if judge_list is None else [j for j in judge_list if isinstance(j, str)],
        k=k,
        limit=limit,
        sample_per_type=sample_per_type,
        question_ids=question_ids,
        isolate_per_question=isolate_per_question,
        allow_provider_prompts=allow_provider_prompts,
        provider_settings=provider_settings,
        judge_replicates=judge_replicates,
        sha256=sha256,
        exclude_types=None if exclude_types is None else [str(t) for t in split_specs(exclude_types)],
    )
    options = ExecutionOptions(
        concurrency=concurrency,
        phase_concurrency=dict(phase_concurrency or {}),
        fail_fast=fail_fast,
        retry=retry or RetryPolicy(),
        indexing_timeout_s=indexing_timeout_s,
        question_timeout_s=question_timeout_s,
        checkpoint_every_s=checkpoint_every_s,
        progress=progress,
        repeat=repeat,
    )
    return run_spec(
        request,
        options,
        run_id=run_id,
        runs_dir=runs_dir,
        objects=objects,
        answerer_options=answerer_options,
        judge_options=judge_options,
    )


def run_spec(
    request: RunRequest,
    options: ExecutionOptions | None = None,
    *,
    run_id: str | None = None,
    runs_dir: str | Path = "data/runs",
    objects: Mapping[str, Any] | None = None,
    answerer_options: Mapping[str, Any] | None = None,
    judge_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> RunResult:
    """Run what ``request`` asks for (a resumed run's own settings fill in what it leaves out), executed as
    ``options`` say: what ``run_benchmark`` and ``bench-nb run`` do. See ``run_benchmark``; ``objects`` and the
    options are ``runner.plan.RunOrder``'s."""
    options = options or ExecutionOptions()
    order = RunOrder(request, options, run_id, Path(runs_dir), objects or {}, answerer_options, judge_options)
    with resolve(order) as plan:
        run_dir, checkpoint = plan.run_dir, plan.checkpoint
        if plan.resumed:
            restored = restore_results_files(run_dir, checkpoint)
            if restored:
                log.warning(
                    "%s: rewrote %d missing results file(s) from the checkpoint", run_dir, len(restored)
                )
            if _finished(run_dir, checkpoint):  # nothing to do: write nothing, rebuild nothing
                return _result(run_dir, "completed", checkpoint, run_dir / REPORT)
            checkpoint.status = "running"
        k = plan.spec.k or DEFAULT_K
        for warning in start_warnings(plan.traits.name, plan.benchmark, plan.questions, k, plan.settings):
            warnings.warn(warning, RunSizeWarning, stacklevel=2)
        write_checkpoint(run_dir, checkpoint)
        status = Engine(plan).run()
        report_path = write_report(run_dir, checkpoint, plan.benchmark)[0] if status == "completed" else None
        return _result(run_dir, status, checkpoint, report_path)


def _result(run_dir: Path, status: str, checkpoint: Checkpoint, report: Path | None) -> RunResult:
    phases = [q.phases for q in checkpoint.questions.values()]
    evaluated = sum(1 for p in phases if p.evaluate.status == "completed")
    failed = sum(1 for p in phases if any(getattr(p, name).status == "failed" for name in PHASES))
    scores = [  # as questions_df reads them: no score, or benchNb.unscored, is unscored
        q.phases.evaluate.score
        for q in checkpoint.questions.values()
        if q.phases.evaluate.status == "completed" and not (q.benchNb or {}).get("unscored")
    ]
    scored = [s for s in scores if s is not None]
    return RunResult(
        run_id=run_dir.name,
        run_dir=run_dir,
        status=status,
        target=len(checkpoint.targetQuestionIds or checkpoint.questions),
        evaluated=evaluated,
        failed=failed,
        not_finished=len(checkpoint.questions) - evaluated - failed,
        report_path=report,
        scored=len(scored),
        correct=sum(1 for s in scored if s == 1),
        unscored=evaluated - len(scored),
        benchmark=checkpoint.benchmark,
    )


def _finished(run_dir: Path, checkpoint: Checkpoint) -> bool:
    """A completed run with every question evaluated, nothing in its journal, and a report.json written after
    its last checkpoint: resuming it has nothing to do."""
    if checkpoint.status != "completed":
        return False
    if any(q.phases.evaluate.status != "completed" for q in checkpoint.questions.values()):
        return False
    try:
        journal = (run_dir / JOURNAL).stat().st_size
    except FileNotFoundError:
        journal = 0
    try:
        fresh = (run_dir / REPORT).stat().st_mtime_ns >= (run_dir / CHECKPOINT).stat().st_mtime_ns
    except FileNotFoundError:
        return False
    return journal == 0 and fresh
