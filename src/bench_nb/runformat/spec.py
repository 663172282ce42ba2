"""A run's settings in two types: ``RunRequest``, what a run is asked to be, and ``RunSpec``, what it records.

- **asked** (``RunRequest``): what ``bench-nb run`` or ``run_benchmark`` was given, names only (a
  Provider, Benchmark, Answerer or Judge object is not a setting a run directory can hold); ``None`` is "not
  given": a new run takes the default, a resumed run its own value (``RunRequest.resumed``);
- **found** at run time (``RunSpec.found``, from the request): the answerer's and judges' names, the prompts'
  hashes, the benchmark file's sha256, the question set, the provider's evidence level;
- **recorded**: the run-level ``benchNb`` record of ``checkpoint.json`` (``RunSpec.bench_nb``; keys as they
  always were, docs/runner.md lists them), read back by ``read_spec`` with the checkpoint's own provider,
  benchmark and question ids (or from a shared report.json's fields).

It answers every question asked of a run's settings: ``differences`` (what compared runs must share,
``COMPARED``: ``check_like_for_like``, the settings table, the paired tests), ``RunSpec.resume_differences``
(what a resume keeps, ``RESUME_KEPT``) and ``RunSpec.fingerprint`` (a short hash of everything a number depends
on; docs/run-format.md, "Settings fingerprint"). Keys this version does not know stay in the checkpoint's raw
``benchNb`` (``RunSpec.written_over``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from bench_nb.errors import BenchNbError, ComparisonError
from bench_nb.records import Benchmark, Question
from bench_nb.runformat.format import Checkpoint, Concurrency, Sampling, SessionRef, judge_fields, now_iso
from bench_nb.runformat.format import Question as QuestionRecord

if TYPE_CHECKING:  # loading runs is imported where it is used: the command line builds a RunSpec without it
    from bench_nb.runformat.load import Run

_MISSING = "(not recorded)"
# The context format of a run that records none (made before formats had versions; models.prompt's
# LEGACY_CONTEXT_FORMAT, which this layer does not import): a resumed run keeps it.
UNVERSIONED_CONTEXT_FORMAT = 1
FINGERPRINT_CHARS = 12
# The version of the benchNb record a run writes (``RunSpec.version``); 2: it records its ``repeat`` above 1.
BENCH_NB_VERSION = 2
# The checkpoint's own fields a RunSpec carries besides its benchNb record (their names as encoded).
_TOP_LEVEL = ("runId", "provider", "benchmark", "questionIds", "writtenByBenchNb")


def question_set_hash(question_ids: Sequence[str]) -> str:
    """sha256 of the sorted question ids, one a line: equal exactly when two runs ask the same questions."""
    return hashlib.sha256("\n".join(sorted(question_ids)).encode("utf-8")).hexdigest()


# How to give again what a run made with an object needs to resume, in Python and on the command line (the
# error reaches both: ``run_benchmark(run_id=...)`` and ``bench-nb run -r``).
_GIVE_AGAIN = {
    "provider": "to resume it, give the provider again (provider=... to run_benchmark; "
    "-p NAME or -p module:attribute to bench-nb run -r)",
    "benchmark": "to resume it, give the benchmark again (benchmark=... to run_benchmark; "
    "-b NAME, with --dataset FILE if it was read from one, to bench-nb run -r)",
    "answerer": "to resume it, give the answerer again (answerer=... to run_benchmark; "
    "-m NAME or -m module:attribute to bench-nb run -r)",
    "judges": "to resume it, give them again (judges=... to run_benchmark; -j NAMES to bench-nb run -r)",
}


class Invocation(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """``benchNb.invocation``: the names and options a run was started with, so a resume needs none again.

    An object given instead of a name (a Provider, Benchmark, Answerer or Judge) is not recorded: a resume
    needs it again. ``limit``, ``sample_per_type`` (and the spec's ``question_ids``) are one choice;
    ``exclude_types`` is applied before it, and a run that excludes types records the questions it kept
    (``question_ids``) instead of its ``limit`` or ``sample_per_type``, so a resume asks exactly those.
    """

    provider: str | None = None
    benchmark: str | None = None
    dataset: str | None = None
    answerer: str | None = None
    judges: list[str] | None = None
    limit: int | None = None
    sample_per_type: int | None = None
    allow_provider_prompts: bool | None = None
    provider_settings: dict[str, Any] | None = None
    judge_replicates: int | None = None
    exclude_types: list[str] | None = None


@dataclass(frozen=True)
class RunRequest:
    """What a run is asked to be: what ``bench-nb run`` or ``run_benchmark`` was given, names only (a
    Provider, Benchmark, Answerer or Judge object is not a setting a run directory can hold); ``None`` is "not
    given": a new run takes the default, a resumed run its own value (``resumed``). ``sha256`` is a pin: a
    benchmark file with another hash is refused. ``context_format`` is never given: a resumed run's own
    (``RunSpec.context_format``), so its prompts do not change under it. The run records what it was made
    with as a ``RunSpec`` (``RunSpec.found``).

    Raises:
        BenchNbError: ``k`` or ``judge_replicates`` below 1.
    """

    provider: str | None = None
    benchmark: str | None = None
    dataset: str | None = None
    answerer: str | None = None
    judges: Sequence[str] | None = None
    k: int | None = None
    limit: int | None = None
    sample_per_type: int | None = None
    question_ids: Sequence[str] | None = None
    isolate_per_question: bool | None = None
    allow_provider_prompts: bool | None = None
    provider_settings: Mapping[str, Any] | None = None
    judge_replicates: int | None = None
    sha256: str | None = None
    exclude_types: Sequence[str] | None = None
    context_format: int | None = None

    def __post_init__(self) -> None:
        for name, value in (("k", self.k), ("judge_replicates", self.judge_replicates)):
            if value is not None and value < 1:
                raise BenchNbError(f"{name} must be at least 1, not {value}")

    def resumed(self, stored: RunSpec, *, objects: Collection[str] = (), where: str = "") -> RunRequest:
        """The run asked for when this request resumes the run ``stored`` read from its directory: every
        setting given is kept (a conflicting one is refused later, ``RunSpec.resume_differences``), every
        setting not given is the run's. ``objects`` names what was given as an object (``"provider"``,
        ``"benchmark"``, ``"answerer"``, ``"judges"``); ``where`` is the run directory, for messages. The
        selection (``limit``, ``sample_per_type``, ``question_ids``) is one choice: the caller's, or the
        run's. Concurrency, timeouts, retries and progress are not settings of a run
        (``runner.ExecutionOptions``): they may change on any resume.

        Raises:
            BenchNbError: the run was made with an object its directory cannot hold, and it was not given again.
        """
        inv = stored.invocation
        if inv is None:  # MemoryBench's, or an older bench_nb's: only the names the run records
            inv = Invocation(provider=stored.provider or None, benchmark=stored.benchmark)
            selection: dict[str, Any] = {"question_ids": stored.question_ids}
        else:
            stored._check_objects(inv, self, objects, where)
            selection = {"question_ids": stored.question_ids}
            if inv.limit is not None:
                selection = {"limit": inv.limit}
            elif inv.sample_per_type is not None:
                selection = {"sample_per_type": inv.sample_per_type}
        if self.limit is not None or self.sample_per_type is not None or self.question_ids is not None:
            selection = {"limit": self.limit, "sample_per_type": self.sample_per_type}
            selection["question_ids"] = self.question_ids
        other_benchmark = self.benchmark is not None and self.benchmark != inv.benchmark

        def pick(given: Any, own: Any) -> Any:
            return own if given is None else given

        return dataclasses.replace(
            self,
            provider=pick(self.provider, None if "provider" in objects else inv.provider),
            benchmark=pick(self.benchmark, None if "benchmark" in objects else inv.benchmark),
            dataset=self.dataset if other_benchmark else pick(self.dataset, inv.dataset),
            answerer=pick(self.answerer, None if "answerer" in objects else inv.answerer),
            judges=pick(self.judges, None if "judges" in objects else inv.judges),
            k=pick(self.k, stored.k),
            limit=selection.get("limit"),
            sample_per_type=selection.get("sample_per_type"),
            question_ids=selection.get("question_ids"),
            isolate_per_question=pick(self.isolate_per_question, stored.isolate_per_question),
            allow_provider_prompts=pick(self.allow_provider_prompts, inv.allow_provider_prompts),
            provider_settings=pick(self.provider_settings, inv.provider_settings),
            judge_replicates=pick(self.judge_replicates, stored.judge_replicates or inv.judge_replicates),
            context_format=pick(self.context_format, stored.context_format or UNVERSIONED_CONTEXT_FORMAT),
        )


class RunSpec(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """What a run is run under (``None``: not given, or not recorded). See the module's docstring.

    The first five fields are the checkpoint's own (``runId``, ``provider``, ``benchmark``, the target
    question ids) and whether bench_nb wrote the run; the others are the run-level ``benchNb`` record, in the
    order it is written. ``provider`` and ``benchmark`` are the names the run records (a Provider object's
    ``name``); ``invocation`` the names it was asked for (``"module:attr"`` plugins included).
    ``benchmark_sha256`` asked is a pin: a file with another hash is refused. ``context_format`` is how the
    answer prompt shows the hits (``models.prompt.CONTEXT_FORMATS``; its version is in the answer prompt's
    hash): not asked, it is the answerer's for a new run and the run's own on a resume (a run recording none
    has ``UNVERSIONED_CONTEXT_FORMAT``), so a resumed run's prompts do not change under it.
    """

    run_id: str = ""
    provider: str | None = None
    benchmark: str | None = None
    question_ids: tuple[str, ...] | None = None
    written_by_bench_nb: bool = False
    version: int | None = None
    synthetic: bool = False
    audit: dict[str, Any] | None = None
    k: int | None = None
    answerer: str | None = None
    judges: list[str] | None = None
    primary_judge: str | None = None
    isolate_per_question: bool | None = None
    benchmark_sha256: str | None = None
    question_set_hash: str | None = None
    judge_replicates: int | None = None
    repeat: int | None = None  # repeat i > 1 of its settings (runner.repeats: its own LLM response cache)
    prompt_hashes: dict[str, str] | None = None
    context_format: int | None = None
    custom_prompt: bool = False
    tokenizer: str | None = None
    evidence_level: str | None = None
    invocation: Invocation | None = None

    @property
    def asked_for(self) -> Invocation:
        """``invocation``, or an empty one."""
        return self.invocation or Invocation()

    def _check_objects(self, inv: Invocation, mine: RunRequest, objects: Collection[str], at: str) -> None:
        where = f"run {self.run_id} at {at}"
        given: dict[str, Any] = {
            "provider": mine.provider,
            "benchmark": mine.benchmark,
            "answerer": mine.answerer,
        }
        given["judges"] = mine.judges
        gone = {name for name in given if given[name] is None and name not in objects}
        if inv.provider is None and "provider" in gone:
            raise BenchNbError(
                f"{where} was made with a provider object ({self.provider!r}), which a run directory cannot "
                "hold: " + _GIVE_AGAIN["provider"]
            )
        if inv.benchmark is None and "benchmark" in gone:
            raise BenchNbError(
                f"{where} was made with a loaded Benchmark ({self.benchmark!r}), which a run directory "
                "cannot hold: " + _GIVE_AGAIN["benchmark"]
            )
        if inv.answerer is None and self.answerer not in (None, "extractive") and "answerer" in gone:
            raise BenchNbError(
                f"{where} was answered by an answerer object ({self.answerer!r}), which a run directory "
                "cannot hold: " + _GIVE_AGAIN["answerer"]
            )
        if len(inv.judges or ()) != len(self.judge_names) and "judges" in gone:
            raise BenchNbError(
                f"{where} was graded by judge objects ({', '.join(self.judge_names)}), which a run directory "
                "cannot hold: " + _GIVE_AGAIN["judges"]
            )

    # -- found at run time ------------------------------------------------------------------------------

    @classmethod
    def found(
        cls,
        request: RunRequest,
        *,
        run_id: str,
        provider: str,
        benchmark: str,
        question_ids: Sequence[str],
        k: int,
        answerer: str,
        answerer_spec: str | None,
        judges: Sequence[str],
        judge_specs: Sequence[str],
        benchmark_sha256: str | None,
        prompt_hashes: Mapping[str, str],
        context_format: int | None,
        custom_prompt: bool,
        tokenizer: str | None,
        evidence_level: str | None,
        provider_settings: Mapping[str, Any] | None,
        repeat: int = 1,
    ) -> RunSpec:
        """What a run asked as ``request`` is made with, once it is resolved: the components' names
        (``provider``, ``answerer``, ``judges``, primary first) and the names the answerer and judges were made
        from (``*_spec``: ``None`` for an object; the provider's and benchmark's are the asked ones), the
        question ids, the retrieval limit, the benchmark file's sha256, the prompts' hashes, the answer
        prompt's context format (``None``: an answerer that does not say), whether a provider's own prompt was
        used, the answerer's tokenizer, the provider's evidence level and which repeat the run is. What it
        records is ``bench_nb()``: judge replicates and the repeat only above 1, a custom prompt only when used,
        the provider settings with JSON values."""
        plain = (str, int, float, bool, type(None))
        replicates = request.judge_replicates if (request.judge_replicates or 1) > 1 else None
        excluded = list(request.exclude_types) if request.exclude_types else None
        return cls(
            run_id=run_id,
            provider=provider,
            benchmark=benchmark,
            question_ids=tuple(question_ids),
            version=BENCH_NB_VERSION,
            k=k,
            answerer=answerer,
            judges=list(judges),
            primary_judge=judges[0],
            isolate_per_question=bool(request.isolate_per_question),
            benchmark_sha256=benchmark_sha256,
            question_set_hash=question_set_hash(question_ids),
            judge_replicates=replicates,
            repeat=repeat if repeat > 1 else None,
            prompt_hashes=dict(prompt_hashes) or None,
            context_format=context_format,
            custom_prompt=custom_prompt,
            tokenizer=tokenizer,
            evidence_level=evidence_level,
            invocation=Invocation(
                provider=request.provider,
                benchmark=request.benchmark,
                dataset=request.dataset,
                answerer=answerer_spec,
                judges=list(judge_specs) or None,
                limit=None if excluded else request.limit,  # then the questions kept are the record
                sample_per_type=None if excluded else request.sample_per_type,
                allow_provider_prompts=True if request.allow_provider_prompts else None,
                provider_settings={k: v for k, v in (provider_settings or {}).items() if isinstance(v, plain)}
                or None,
                judge_replicates=replicates,
                exclude_types=excluded,
            ),
        )

    # -- recorded ---------------------------------------------------------------------------------------

    @classmethod
    def recorded(cls, bench_nb: Mapping[str, Any] | None, **checkpoint: Any) -> RunSpec:
        """A checkpoint's run-level ``benchNb`` record as it stands (no value taken from elsewhere), with
        ``checkpoint``'s fields (``provider=``, ``benchmark=``, ...) set; unknown keys are skipped.

        Raises:
            msgspec.ValidationError: a known key holds a value of the wrong type.
        """
        raw = {k: v for k, v in (bench_nb or {}).items() if k not in _TOP_LEVEL}
        return msgspec.structs.replace(msgspec.convert(raw, cls, strict=False), **checkpoint)

    def bench_nb(self) -> dict[str, Any]:
        """The run-level ``benchNb`` record a checkpoint stores (values not recorded left out)."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        for key in _TOP_LEVEL:
            out.pop(key, None)
        return out

    def written_over(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        """``raw`` (a checkpoint's ``benchNb``) updated with this record: what a rewrite stores (keys this
        version does not know, such as ``usage``, are kept)."""
        return {**(raw or {}), **self.bench_nb()}

    def with_primary_judge(self, new: str, prompt_hash: str | Mapping[str, str] | None) -> RunSpec:
        """This run's record once ``new`` is its primary judge (``rejudge``): ``primary_judge``, ``new``
        first in ``judges`` and in ``invocation.judges`` (the specs a resume makes judges from, so a resumed
        run grades its pending questions with it), and its prompt hash with the others."""
        names = list(self.judges or [])
        inv = self.invocation
        specs = list(inv.judges or []) if inv is not None else []
        if new in names and len(specs) == len(names):  # the specs the names were made from, in order
            i = names.index(new)
            specs = [specs[i], *specs[:i], *specs[i + 1 :]]
        elif new not in names:
            specs = [new, *specs] if specs else specs
        hashes = prompt_hash if isinstance(prompt_hash, Mapping) else {"": prompt_hash} if prompt_hash else {}
        prompts = self.prompt_hashes
        if hashes and prompts is not None:
            prompts = prompts | {f"judge:{new}" + (f":{k}" if k else ""): str(v) for k, v in hashes.items()}
        return msgspec.structs.replace(
            self,
            primary_judge=new,
            judges=[new, *[n for n in names if n != new]],
            prompt_hashes=prompts,
            invocation=msgspec.structs.replace(inv, judges=specs) if inv is not None and specs else inv,
        )

    # -- what the runs are compared on ------------------------------------------------------------------

    @property
    def question_set(self) -> str:
        """The question set's hash: as recorded, else of the question ids."""
        return self.question_set_hash or question_set_hash(self.question_ids or ())

    @property
    def judge(self) -> str | None:
        """The primary judge (whose verdict the checkpoint holds)."""
        return self.primary_judge

    @property
    def judge_names(self) -> tuple[str, ...]:
        """Every judge, primary first (the primary alone when the run records no list)."""
        return tuple(self.judges or ([self.primary_judge] if self.primary_judge else []))

    @property
    def answer_prompt(self) -> str | None:
        """The answer prompt's hash."""
        return (self.prompt_hashes or {}).get("answer")

    @property
    def judge_prompt(self) -> str | None:
        """The primary judge's prompt hash; a judge with one prompt per rubric: ``rubric=hash`` joined by ", "."""
        judge, hashes = self.primary_judge, self.prompt_hashes or {}
        if not judge:
            return None
        if f"judge:{judge}" in hashes:
            return hashes[f"judge:{judge}"]
        prefix = f"judge:{judge}:"
        per_rubric = [
            f"{k.removeprefix(prefix)}={v}" for k, v in sorted(hashes.items()) if k.startswith(prefix)
        ]
        return ", ".join(per_rubric) or None

    @property
    def provider_settings(self) -> dict[str, Any] | None:
        """The provider settings the run recorded (``invocation.providerSettings``)."""
        return self.invocation.provider_settings if self.invocation is not None else None

    @property
    def replicates(self) -> int:
        """How many times each model judge grades each answer (1 when not recorded)."""
        return self.judge_replicates or 1

    @property
    def fingerprint(self) -> str:
        """A short hash of what the run's numbers depend on; equal fingerprints: the same settings.

        It covers the benchmark file's sha256, the question set, k, the answerer and its prompt hash, the
        judges (primary first) and every judge prompt hash, and the provider's recorded settings; the first
        ``FINGERPRINT_CHARS`` hex digits of the sha256 of their canonical JSON (sorted keys). A value the run
        does not record enters as null, so two MemoryBench runs on the same questions with the same judge and
        model share a fingerprint.
        """
        judge_prompts = {
            k: v for k, v in sorted((self.prompt_hashes or {}).items()) if k.startswith("judge:")
        }
        if self.judge_prompt is not None and f"judge:{self.judge}" not in judge_prompts:
            judge_prompts[f"judge:{self.judge}"] = self.judge_prompt
        facts = {
            "benchmarkSha256": self.benchmark_sha256,
            "questionSet": self.question_set,
            "k": self.k,
            "answerer": self.answerer,
            "answerPrompt": self.answer_prompt,
            "judges": [self.judge, *(j for j in self.judge_names if j != self.judge)],
            "judgePrompts": judge_prompts,
            "providerSettings": self.provider_settings,
        }
        text = json.dumps(facts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:FINGERPRINT_CHARS]

    def resume_differences(self, wanted: RunSpec) -> list[str]:
        """How this run (on disk) and the run asked for (``wanted``, its settings found) differ on what a
        resume keeps (``RESUME_KEPT``; empty when they agree), e.g. ``"retrieval limit k: 4 in the run, 5
        now"``. A setting either side does not record is not compared, nor a prompt hash only one side
        records (a BEAM or LongMemEval-V2 model judge's, which older runs did not record); judge replicates
        count 1 when not recorded. Differing provider or benchmark names come first."""
        out = [
            f"{label}: {x!r} in the run, {y!r} now"
            for attr, label in (("benchmark", "benchmark"), ("provider", "provider"), *RESUME_KEPT)
            if (x := getattr(self, attr)) is not None and (y := getattr(wanted, attr)) is not None and x != y
        ]
        mine, now = self.prompt_hashes or {}, wanted.prompt_hashes or {}
        if any(
            mine[k] != now[k] for k in mine.keys() & now.keys()
        ):  # a hash one side lacks: not recorded then
            out.append(f"prompts: {mine!r} in the run, {now!r} now")
        if self.replicates != wanted.replicates:
            out.append(f"judge replicates: {self.replicates!r} in the run, {wanted.replicates!r} now")
        return out


def read_spec(run: Run) -> RunSpec:
    """The one reader of a run's settings: its checkpoint's ``benchNb`` (with the checkpoint's provider,
    benchmark and target question ids), or a shared report.json's fields.

    Raises:
        msgspec.ValidationError: a known ``benchNb`` key holds a value of the wrong type.
    """
    ck = run.view  # the run-level fields: no complete decode of a lenient load_runs's run
    if ck is None:
        rep = run.report or {}
        ids = tuple(str(e.get("questionId")) for e in rep.get("evaluations", []))
        return RunSpec(
            run_id=run.run_id,
            provider=str(rep.get("provider", "")),
            benchmark=rep.get("benchmark"),
            question_ids=ids,
            answerer=rep.get("answeringModel"),
            primary_judge=rep.get("judge"),
        )
    spec = RunSpec.recorded(ck.benchNb, provider=ck.provider, benchmark=ck.benchmark)
    return msgspec.structs.replace(
        spec,
        run_id=run.run_id,
        question_ids=tuple(ck.targetQuestionIds or ck.questions),
        written_by_bench_nb=run.is_bench_nb,
        answerer=spec.answerer or ck.answeringModel or None,
        primary_judge=spec.primary_judge or ck.judge,
    )


def check_resume(checkpoint: Checkpoint, wanted: RunSpec, where: str) -> None:
    """Refuse to resume ``checkpoint``'s run (at ``where``) as the run ``wanted`` (its settings found,
    ``RunSpec.found``) when a setting a resume keeps differs (``RunSpec.resume_differences``, over what the run
    records) or a question asked is not in the run: ``ComparisonError`` naming each (``"retrieval limit k: 4
    in the run, 5 now"``)."""
    stored = RunSpec.recorded(
        checkpoint.benchNb, provider=checkpoint.provider, benchmark=checkpoint.benchmark
    )
    problems = stored.resume_differences(wanted)
    missing = [qid for qid in wanted.question_ids or () if qid not in checkpoint.questions]
    if missing and not problems:
        problems.append(f"question set: {len(missing)} question(s) not in the run, e.g. {missing[0]}")
    if problems:
        raise ComparisonError(
            f"run {checkpoint.runId} at {where} was made with other settings, so it cannot be resumed with "
            "these: " + "; ".join(problems) + ". Use another run id (-r) for a new run."
        )


def new_checkpoint(
    spec: RunSpec,
    benchmark: Benchmark,
    targets: Sequence[Question],
    *,
    sampling: Sampling,
    concurrency: int,
    phase_concurrency: Mapping[str, int],
    tags: Mapping[str, str],
) -> Checkpoint:
    """A new run's checkpoint: every target question pending in its container (``tags``: question id ->
    container tag), the run's record (``spec``, ``RunSpec.found``) in ``benchNb``."""
    questions: dict[str, QuestionRecord] = {}
    for q in targets:
        extra: dict[str, Any] = {
            "normType": q.norm_type,
            "evidenceIds": list(q.evidence_ids),
            "haystackId": q.haystack_id,
        }
        if q.category is not None:
            extra["category"] = q.category
        extra.update(judge_fields(q.extra))  # BEAM's rubric, LongMemEval-V2's rule: re-judging needs them
        hay = benchmark.haystacks[q.haystack_id]
        questions[q.question_id] = QuestionRecord(
            questionId=q.question_id,
            containerTag=tags[q.question_id],
            question=q.question,
            groundTruth=q.answer,
            questionType=q.question_type,
            questionDate=q.question_date,
            sessions=[SessionRef(s.session_id, s.date, len(s.messages)) for s in hay.sessions],
            benchNb=extra,
        )
    created = now_iso()
    return Checkpoint(
        runId=spec.run_id,
        dataSourceRunId=spec.run_id,
        status="running",
        provider=spec.provider or "",
        benchmark=benchmark.name,
        judge=spec.primary_judge or "",
        answeringModel=spec.answerer or "",
        createdAt=created,
        updatedAt=created,
        limit=spec.asked_for.limit,
        sampling=sampling,
        targetQuestionIds=[q.question_id for q in targets],
        concurrency=Concurrency(default=concurrency, **{p: int(n) for p, n in phase_concurrency.items()}),
        questions=questions,
        benchNb=spec.bench_nb(),
    )


def primary_judge(run: Run) -> str:
    """The judge whose verdict the checkpoint holds: ``benchNb.primaryJudge``, else the run's ``judge``."""
    return read_spec(run).judge or ""


# What must be equal across compared runs, with how each reads in a sentence.
COMPARED: tuple[tuple[str, str], ...] = (
    ("benchmark", "benchmark"),
    ("question_set", "question set"),
    ("k", "retrieval limit k"),
    ("answerer", "answerer"),
    ("judge", "judge"),
    ("answer_prompt", "answer prompt"),
    ("judge_prompt", "judge prompt"),
    ("benchmark_sha256", "benchmark file sha256"),
)

# What a resume keeps: what must be equal between the run on disk and the run asked for, with how each reads
# in a sentence (besides the provider, the benchmark, the prompts and judge replicates). Compared runs: ``COMPARED``.
RESUME_KEPT: tuple[tuple[str, str], ...] = (
    ("k", "retrieval limit k"),
    ("answerer", "answerer"),
    ("judges", "judges"),
    ("question_set_hash", "question set"),
    ("benchmark_sha256", "benchmark file"),
    ("primary_judge", "primary judge"),
    ("isolate_per_question", "isolate per question"),
)


def differences(
    specs: Sequence[RunSpec], *, missing_differs: bool = True, skip: Sequence[str] = ()
) -> list[str]:
    """The one differ of compared runs: a sentence per setting they differ in (empty: like for like).

    Each reads like ``"retrieval limit k differs: run-a=10, run-b=30"``. With ``missing_differs`` (the
    default), a value some runs record and others do not (a MemoryBench run has no k) is a difference: nothing
    shows the runs agree on it; without it, only recorded values are compared. A run answered or graded with
    a provider's own prompt is always listed, even when every run used one:
    ``"custom prompt: run-a used a provider's own prompt, not graded like the others"``. ``skip`` names
    attributes (of ``COMPARED``) left out.
    """
    if len(specs) < 2:
        return []
    out = []
    for attr, label in COMPARED:
        if attr in skip:
            continue
        values = [getattr(s, attr) for s in specs]
        known = [v for v in values if v is not None]
        if not known or len({repr(v) for v in (values if missing_differs else known)}) == 1:
            continue
        shown = ", ".join(
            f"{s.run_id}={_MISSING if v is None else v}" for s, v in zip(specs, values, strict=True)
        )
        out.append(f"{label} differs: {shown}")
    custom = [s.run_id for s in specs if s.custom_prompt]
    if custom:
        out.append(
            f"custom prompt: {', '.join(custom)} used a provider's own prompt, not graded like the others"
        )
    return out
