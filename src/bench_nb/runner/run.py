"""``run_benchmark``: one provider on one benchmark, into a MemoryBench-format run directory that resumes.

A new run id creates ``<runs_dir>/<run_id>/`` with a checkpoint listing every target question as pending;
the same run id again resumes it (the settings must match): the checkpoint and journal are replayed, every
completed phase is skipped, and only what is not done runs. See docs/runner.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import logging
import re
import secrets
import shutil
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench_nb.benchmarks.registry import benchmark_traits
from bench_nb.errors import BenchNbError, RunFormatError
from bench_nb.judges.base import Judge
from bench_nb.models.base import Answerer
from bench_nb.providers.base import Provider
from bench_nb.records import Benchmark, Question
from bench_nb.runformat.format import PHASES, Checkpoint, SessionRef, now_iso, now_stamp
from bench_nb.runformat.format import Question as QuestionRecord
from bench_nb.runformat.journal import CHECKPOINT, JOURNAL, JournalWriter, write_checkpoint
from bench_nb.runformat.spec import RunSpec
from bench_nb.runner.components import (
    check_credentials,
    component_options,
    in_context_format,
    make_answerer,
    make_judges,
    make_provider,
    split_specs,
)
from bench_nb.runner.engine import Container, Engine, restore_results_files
from bench_nb.runner.estimate import RunSizeWarning, start_warnings
from bench_nb.runner.lock import lock_run, remove_temporary_files
from bench_nb.runner.plan import ProviderTraits
from bench_nb.runner.progress import PhaseBars, progress_enabled
from bench_nb.runner.repeats import repeat_client
from bench_nb.runner.report import REPORT, write_report
from bench_nb.runner.resume import resume_checkpoint, resume_spec
from bench_nb.runner.retry import RetryPolicy
from bench_nb.runner.selection import NO_QUESTIONS, benchmark_sha256, load_benchmark_spec, select_questions
from bench_nb.runner.selection import exclude_types as without_types
from bench_nb.runner.settings import (
    BENCH_NB_VERSION,
    DEFAULT_ANSWERER,
    DEFAULT_CONCURRENCY,
    DEFAULT_INDEXING_TIMEOUT_S,
    DEFAULT_K,
    DEFAULT_QUESTION_TIMEOUT_S,
    ExecutionOptions,
    recorded_settings,
    split_provider_settings,
)
from bench_nb.text import HtmlFields

log = logging.getLogger(__name__)

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")


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


# The benchmark a comparison loaded once for all its runs: (name, dataset, Benchmark); see ``shared_benchmark``.
_SHARED: contextvars.ContextVar[tuple[str, str | None, Benchmark] | None] = contextvars.ContextVar(
    "bench_nb_shared_benchmark", default=None
)


@contextlib.contextmanager
def shared_benchmark(name: str, dataset: str | Path | None, loaded: Benchmark) -> Iterator[None]:
    """Within it, a run asked for benchmark ``name`` from ``dataset`` takes ``loaded`` instead of reading the
    file again (a comparison reads it once for all its runs), while recording the name and the file as a run of
    its own does, so ``bench-nb run -r`` and ``bench-nb reanswer`` find them again."""
    token = _SHARED.set((name, None if dataset is None else str(dataset), loaded))
    try:
        yield
    finally:
        _SHARED.reset(token)


def _loaded(benchmark: str | Benchmark, dataset: str | None) -> str | Benchmark:
    """``benchmark``, or the shared copy of it (``shared_benchmark``)."""
    shared = _SHARED.get()
    if shared is not None and isinstance(benchmark, str) and shared[:2] == (benchmark, dataset):
        return shared[2]
    return benchmark


def _prompt_hashes(answerer: Answerer, judges: Sequence[Judge]) -> dict[str, str]:
    """The hashes of the exact prompts, when the answerer and judges expose them (``prompt_hash``)."""
    out: dict[str, str] = {}
    for role, obj in (("answer", answerer), *((f"judge:{j.name}", j) for j in judges)):
        value = getattr(obj, "prompt_hash", None)
        if isinstance(value, str):
            out[role] = value
        elif isinstance(value, Mapping):
            out.update({f"{role}:{k}": str(v) for k, v in value.items()})
    return out


def _context_format(answerer: Answerer) -> int | None:
    """The answerer's context format (``models.prompt.CONTEXT_FORMATS``), None when it does not say."""
    value = getattr(answerer, "context_format", None)
    return value if isinstance(value, int) else None


def _new_checkpoint(
    run_id: str,
    provider: Provider,
    benchmark: Benchmark,
    targets: list[Question],
    sampling: Any,
    options: ExecutionOptions,
    containers: list[Container],
    spec: RunSpec,
    judges: Sequence[Judge],
    answerer: Answerer,
) -> Checkpoint:
    tag_of = {qid: c.tag for c in containers for qid in c.question_ids}
    questions: dict[str, QuestionRecord] = {}
    for q in targets:
        extra: dict[str, Any] = {
            "normType": q.norm_type,
            "evidenceIds": list(q.evidence_ids),
            "haystackId": q.haystack_id,
        }
        if q.category is not None:
            extra["category"] = q.category
        if isinstance(q.extra.get("rubric"), list):  # BEAM: re-judging needs the rubric
            extra["rubric"] = list(q.extra["rubric"])
        if isinstance(q.extra.get("eval_function"), str):  # LongMemEval-V2: re-judging needs each rule
            extra["evalFunction"] = q.extra["eval_function"]
        hay = benchmark.haystacks[q.haystack_id]
        questions[q.question_id] = QuestionRecord(
            questionId=q.question_id,
            containerTag=tag_of[q.question_id],
            question=q.question,
            groundTruth=q.answer,
            questionType=q.question_type,
            questionDate=q.question_date,
            sessions=[SessionRef(s.session_id, s.date, len(s.messages)) for s in hay.sessions],
            benchNb=extra,
        )
    created = now_iso()
    return Checkpoint(
        runId=run_id,
        dataSourceRunId=run_id,
        status="running",
        provider=provider.name,
        benchmark=benchmark.name,
        judge=judges[0].name,
        answeringModel=answerer.name,
        createdAt=created,
        updatedAt=created,
        limit=spec.asked_for.limit,
        sampling=sampling,
        targetQuestionIds=[q.question_id for q in targets],
        concurrency=options.concurrency_record(),
        questions=questions,
        benchNb=spec.bench_nb(),
    )


def _containers(run_id: str, benchmark: Benchmark, targets: list[Question], isolate: bool) -> list[Container]:
    """The run's containers, each named ``<run id>-<16 random hex digits>``: nothing of the benchmark (question
    id, haystack id, order) reaches the provider in a name. A resumed run keeps its recorded names
    (``_recorded_names``)."""
    for q in targets:
        if q.haystack_id not in benchmark.haystacks:
            raise RunFormatError(
                benchmark.name, f"question {q.question_id} asks about missing haystack {q.haystack_id!r}"
            )
    groups: dict[str, list[str]] = {}
    for q in targets:
        groups.setdefault(q.question_id if isolate else q.haystack_id, []).append(q.question_id)
    haystack_of = {q.question_id: q.haystack_id for q in targets}
    return [
        Container(f"{run_id}-{secrets.token_hex(8)}", benchmark.haystacks[haystack_of[qids[0]]], tuple(qids))
        for qids in groups.values()
    ]


def _recorded_names(containers: list[Container], checkpoint: Checkpoint) -> list[Container]:
    """``containers`` under the names ``checkpoint`` recorded for their questions (a run written before the
    names became opaque used ``<haystack or question id>-<run id>``)."""
    out = []
    for c in containers:
        recorded = (
            checkpoint.questions[c.question_ids[0]].containerTag
            if c.question_ids[0] in checkpoint.questions
            else ""
        )
        out.append(dataclasses.replace(c, tag=recorded) if recorded else c)
    return out


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
    loc200`` does: every setting not given (``None``) is read from the run directory (``runner.resume``):
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
    spec = RunSpec.asked(
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
    components = Components(objects, answerer_options, judge_options)
    return run_spec(spec, options, run_id=run_id, runs_dir=runs_dir, components=components)


@dataclass(frozen=True)
class Components:
    """What ``run_spec`` is given besides names: Provider, Benchmark, Answerer and Judge objects
    (``objects``: ``"provider"``, ``"benchmark"``, ``"answerer"``, ``"judges"``, the last a list that may mix
    names and objects), and the answerer's and judges' keyword options (never written to the run)."""

    objects: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    answerer_options: Mapping[str, Any] | None = None
    judge_options: Mapping[str, Mapping[str, Any]] | None = None


def run_spec(
    spec: RunSpec,
    options: ExecutionOptions | None = None,
    *,
    run_id: str | None = None,
    runs_dir: str | Path = "data/runs",
    components: Components | None = None,
) -> RunResult:
    """Run what ``spec`` asks for (``RunSpec.asked``; a resumed run's own settings fill in what it leaves
    out), executed as ``options`` say: what ``run_benchmark`` and ``bench-nb run`` do. See ``run_benchmark``."""
    options = options or ExecutionOptions()
    components = components or Components()
    objects = components.objects
    if run_id is not None and not _RUN_ID.match(run_id):
        raise RunFormatError(run_id, "a run id may hold letters, digits, '.', '_' and '-' only")
    if run_id is not None:
        spec = resume_spec(spec, Path(runs_dir) / run_id, objects=objects)
    inv = spec.asked_for
    provider = objects.get("provider") or inv.provider
    benchmark = objects.get("benchmark") or inv.benchmark
    if provider is None or benchmark is None:
        raise BenchNbError(
            "give a provider and a benchmark (-p and -b), or the run id of a run to resume (-r)"
            if run_id is None
            else f"give a provider and a benchmark (-p and -b): there is no run {run_id!r} in {runs_dir} to resume"
        )
    bench = load_benchmark_spec(_loaded(benchmark, inv.dataset), inv.dataset, spec.benchmark_sha256)
    selectable = without_types(bench, inv.exclude_types) if inv.exclude_types else bench
    targets, sampling = select_questions(
        selectable, limit=inv.limit, per_type=inv.sample_per_type, question_ids=spec.question_ids
    )
    if not targets:
        raise RunFormatError(bench.name, NO_QUESTIONS)
    provider_name = provider if isinstance(provider, str) else provider.name
    own = split_provider_settings(inv.provider_settings, [provider_name])[provider_name]
    if run_id is None:
        run_id = f"{provider_name.replace(':', '_').replace('.', '_')}-{bench.name}-{now_stamp()}"
    spec = msgspec.structs.replace(spec, k=DEFAULT_K if spec.k is None else spec.k)
    run_dir = Path(runs_dir) / run_id
    containers = _containers(run_id, bench, targets, bool(spec.isolate_per_question))
    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    with lock_run(run_dir) as lock:  # one writer per run: a second process is refused here, at once
        if lock.stale:
            log.warning(
                "%s: took over the lock of process %s (started %s), which is gone",
                run_dir,
                lock.stale.get("pid"),
                lock.stale.get("startedAt"),
            )
        remove_temporary_files(run_dir)  # what a killed writer left: no live writer owns them now
        (run_dir / "results").mkdir(exist_ok=True)
        provider_obj: Provider | None = None
        try:
            provider_obj = make_provider(provider, run_dir=run_dir, settings=own)
            traits = ProviderTraits.of(provider_obj, prompts=bool(inv.allow_provider_prompts))
            answerer_obj, judge_objs, spec = _found(
                run_dir, spec, components, traits, bench, targets, own, options.repeat
            )
            resumed = (run_dir / CHECKPOINT).is_file()
            if resumed:  # refused if made with other settings
                checkpoint = resume_checkpoint(run_dir, spec)
                containers = _recorded_names(containers, checkpoint)
            else:
                checkpoint = _new_checkpoint(
                    run_id,
                    provider_obj,
                    bench,
                    targets,
                    sampling,
                    options,
                    containers,
                    spec,
                    judge_objs,
                    answerer_obj,
                )
        except BaseException:
            if provider_obj is not None:
                _close(provider_obj)
            if created and not (run_dir / CHECKPOINT).exists():  # leave no empty run directory behind
                shutil.rmtree(run_dir, ignore_errors=True)
            raise
        if resumed:
            restored = restore_results_files(run_dir, checkpoint)
            if restored:
                log.warning(
                    "%s: rewrote %d missing results file(s) from the checkpoint", run_dir, len(restored)
                )
            if _finished(run_dir, checkpoint):  # nothing to do: write nothing, rebuild nothing
                _close(provider_obj)
                return _result(run_id, run_dir, "completed", checkpoint, run_dir / REPORT)
            checkpoint.status = "running"
        for warning in start_warnings(provider_obj.name, bench, targets, spec.k or DEFAULT_K, own):
            warnings.warn(warning, RunSizeWarning, stacklevel=2)
        write_checkpoint(run_dir, checkpoint)
        engine = Engine(
            run_dir=run_dir,
            checkpoint=checkpoint,
            questions={q.question_id: q for q in targets},
            containers=containers,
            provider=provider_obj,
            traits=traits,
            answerer=answerer_obj,
            judges=judge_objs,
            spec=spec,
            options=options,
            resumed=resumed,
        )
        status = _execute(
            run_dir, engine, checkpoint, options, f"{provider_obj.name}/{bench.name}", len(targets)
        )
        report_path = write_report(run_dir, checkpoint, bench)[0] if status == "completed" else None
        return _result(run_id, run_dir, status, checkpoint, report_path)


def _found(
    run_dir: Path,
    spec: RunSpec,
    components: Components,
    traits: ProviderTraits,
    bench: Benchmark,
    targets: list[Question],
    own_settings: dict[str, Any],
    repeat: int = 1,
) -> tuple[Answerer, list[Judge], RunSpec]:
    """The answerer and judges made (those that call a model, made by name, with repeat ``repeat``'s LLM client:
    ``runner.repeats``), and the run's settings with what they tell (``RunSpec.found``)."""
    inv, objects = spec.asked_for, components.objects
    answerer = objects.get("answerer") or inv.answerer or DEFAULT_ANSWERER
    bench_traits = benchmark_traits(bench.name)
    judges = objects.get("judges") or inv.judges or list(bench_traits.default_judges)
    answerer_options, judge_options = component_options(
        answerer,
        split_specs(judges),
        components.answerer_options,
        components.judge_options,
        prompts=traits.prompts,
        client=repeat_client(repeat),
    )
    # A resumed run's answerer shows the hits as the run's first answers saw them (RunSpec.context_format).
    answerer_obj = in_context_format(
        make_answerer(answerer, answerer_options), spec.context_format, str(run_dir)
    )
    judge_objs = make_judges(judges, judge_options)
    check_credentials(answerer_obj, judge_objs)  # before ingest: nothing paid for a run that fails
    if bench_traits.graded and getattr(judge_objs[0], "graded", False) is not True:
        graded = bench_traits.default_judges[0]
        raise BenchNbError(
            f"{bench.name} is scored by its rubric: the first judge must be {graded!r} (offline) or "
            f"'{graded}:<model>', not {judge_objs[0].name!r} (-j {graded} or -j {graded}:gpt-4o)"
        )
    tokenizer = getattr(answerer_obj, "tokenizer", None)
    spec = spec.found(
        run_id=run_dir.name,
        provider=traits.name,
        provider_spec=inv.provider,
        benchmark=bench.name,
        benchmark_spec=inv.benchmark,
        question_ids=[q.question_id for q in targets],
        answerer=answerer_obj.name,
        answerer_spec=answerer if isinstance(answerer, str) else None,
        judges=[j.name for j in judge_objs],
        judge_specs=[s for s in split_specs(judges) if isinstance(s, str)],
        k=spec.k or DEFAULT_K,
        version=BENCH_NB_VERSION,
        benchmark_sha256=bench.sha256 or (benchmark_sha256(inv.dataset) if inv.dataset is not None else None),
        prompt_hashes=_prompt_hashes(answerer_obj, judge_objs),
        context_format=_context_format(answerer_obj),
        custom_prompt=any(getattr(x, "custom_prompt", False) is True for x in (answerer_obj, *judge_objs)),
        tokenizer=tokenizer if isinstance(tokenizer, str) else None,
        evidence_level=traits.evidence_level,
        provider_settings=recorded_settings(own_settings),
    )
    return answerer_obj, judge_objs, spec


def _execute(
    run_dir: Path, engine: Engine, checkpoint: Checkpoint, options: ExecutionOptions, label: str, n: int
) -> str:
    """Run the engine over the checkpoint, journal and progress bars; its final status."""
    journal = JournalWriter(run_dir)
    journal.rotate()  # the checkpoint just written holds everything the journal had
    done = {
        p: sum(1 for q in checkpoint.questions.values() if getattr(q.phases, p).status == "completed")
        for p in PHASES
    }
    bars = PhaseBars(n, done, progress_enabled(options.progress), label)
    status = "failed"
    try:
        engine.run(journal, bars)
        status = "failed" if engine.stopped else "completed"
    finally:
        bars.close()
        engine.compact(status)
        journal.close()
        with contextlib.suppress(OSError):
            (run_dir / JOURNAL).unlink()
        _close(engine.provider)
    return status


def _result(
    run_id: str, run_dir: Path, status: str, checkpoint: Checkpoint, report: Path | None
) -> RunResult:
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
        run_id=run_id,
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


def _close(provider: Provider) -> None:
    close = getattr(provider, "close", None)
    if callable(close):
        close()
