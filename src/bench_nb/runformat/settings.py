"""What a run was run under, read from its directory once, compared one way, and fingerprinted.

``BenchNbRun`` is the run-level ``benchNb`` record typed (every field optional: MemoryBench's runs have none,
and older runs lack the newer ones); the raw dict stays in the checkpoint, so keys this version does not know
survive a rewrite. ``read_settings`` is the one reader of a run's settings (a checkpoint's ``benchNb`` or a
shared report.json's fields) and ``settings_differences`` the one differ: ``check_like_for_like``, the settings
table (``tables.settings``) and the paired tests (``metrics.paired``) all use them. ``settings_fingerprint``
is a short hash of everything a number depends on (docs/run-format.md, "Settings fingerprint").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from bench_nb.runformat.load import Run, RunSet, RunView, Sources, load_runs

_MISSING = "(not recorded)"
FINGERPRINT_CHARS = 12


def question_set_hash(question_ids: Sequence[str]) -> str:
    """sha256 of the sorted question ids, one a line: equal exactly when two runs ask the same questions."""
    return hashlib.sha256("\n".join(sorted(question_ids)).encode("utf-8")).hexdigest()


class Invocation(msgspec.Struct, kw_only=True, omit_defaults=True):
    """``benchNb.invocation``: the options a run was started with, so a resume needs none of them again."""

    provider: str | None = None
    benchmark: str | None = None
    dataset: str | None = None
    answerer: str | None = None
    judges: list[str] | None = None
    limit: int | None = None
    samplePerType: int | None = None
    allowProviderPrompts: bool | None = None
    providerSettings: dict[str, Any] | None = None
    judgeReplicates: int | None = None


class BenchNbRun(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The run-level ``benchNb`` record, typed (docs/runner.md lists its keys)."""

    version: int | None = None
    k: int | None = None
    answerer: str | None = None
    judges: list[str] | None = None
    primaryJudge: str | None = None
    isolatePerQuestion: bool | None = None
    benchmarkSha256: str | None = None
    questionSetHash: str | None = None
    promptHashes: dict[str, str] | None = None
    customPrompt: bool = False
    tokenizer: str | None = None
    evidenceLevel: str | None = None
    judgeReplicates: int | None = None
    invocation: Invocation | None = None


def bench_nb_run(raw: dict[str, Any] | None) -> BenchNbRun:
    """A checkpoint's run-level ``benchNb`` typed; keys this version does not know are left in ``raw``.

    Raises:
        msgspec.ValidationError: a known key holds a value of the wrong type.
    """
    return msgspec.convert(raw or {}, BenchNbRun, strict=False)


def with_bench_nb(raw: dict[str, Any] | None, record: BenchNbRun) -> dict[str, Any]:
    """``raw`` updated with ``record``'s fields: what a rewrite stores (unknown keys are kept)."""
    return {**(raw or {}), **msgspec.to_builtins(record)}


@dataclass(frozen=True)
class RecordedSettings:
    """What one run was run under, as recorded (``None``: the run does not record it).

    ``judge`` is the primary judge (whose verdict the checkpoint holds); ``judge_prompt`` its prompt hash;
    ``prompt_hashes`` every recorded hash (``answer``, ``judge:<name>`` and ``judge:<name>:<rubric>``).
    ``isolate_per_question``, ``judge_replicates`` and ``invocation`` (the names and options the run was
    started with) are what a resume reads besides (``runner.resume``); runs are not compared on them.
    """

    run_id: str
    provider: str
    benchmark: str | None
    question_ids: tuple[str, ...]
    question_set: str
    k: int | None = None
    answerer: str | None = None
    answer_prompt: str | None = None
    judge: str | None = None
    judge_prompt: str | None = None
    judges: tuple[str, ...] = ()
    benchmark_sha256: str | None = None
    custom_prompt: bool = False
    prompt_hashes: dict[str, str] = field(default_factory=dict, compare=False)
    provider_settings: dict[str, Any] | None = field(default=None, compare=False)
    written_by_bench_nb: bool = False
    isolate_per_question: bool | None = field(default=None, compare=False)
    judge_replicates: int | None = field(default=None, compare=False)
    invocation: Invocation | None = field(default=None, compare=False)

    @property
    def fingerprint(self) -> str:
        """``settings_fingerprint`` of these settings."""
        return settings_fingerprint(self)


def read_settings(run: Run | RunView) -> RecordedSettings:
    """The one reader of a run's settings: its checkpoint's ``benchNb``, or a shared report.json's fields."""
    ck = run.checkpoint
    if ck is None:
        rep = run.report or {}
        ids = tuple(str(e.get("questionId")) for e in rep.get("evaluations", []))
        return RecordedSettings(
            run_id=run.run_id,
            provider=str(rep.get("provider", "")),
            benchmark=rep.get("benchmark"),
            question_ids=ids,
            question_set=question_set_hash(ids),
            answerer=rep.get("answeringModel"),
            judge=rep.get("judge"),
        )
    extra = bench_nb_run(ck.benchNb)
    ids = tuple(ck.targetQuestionIds or ck.questions)
    hashes = dict(extra.promptHashes or {})
    judge = extra.primaryJudge or ck.judge
    invocation = extra.invocation
    return RecordedSettings(
        run_id=run.run_id,
        provider=ck.provider,
        benchmark=ck.benchmark,
        question_ids=ids,
        question_set=extra.questionSetHash or question_set_hash(ids),
        k=extra.k,
        answerer=extra.answerer or ck.answeringModel or None,
        answer_prompt=hashes.get("answer"),
        judge=judge,
        judge_prompt=_judge_prompt(hashes, judge),
        judges=tuple(extra.judges or ([judge] if judge else [])),
        benchmark_sha256=extra.benchmarkSha256,
        custom_prompt=extra.customPrompt,
        prompt_hashes=hashes,
        provider_settings=invocation.providerSettings if invocation is not None else None,
        written_by_bench_nb=run.is_bench_nb,
        isolate_per_question=extra.isolatePerQuestion,
        judge_replicates=extra.judgeReplicates or (invocation.judgeReplicates if invocation else None),
        invocation=invocation,
    )


def _judge_prompt(hashes: dict[str, str], judge: str | None) -> str | None:
    """The primary judge's prompt hash; a judge with one prompt per rubric: ``rubric=hash`` joined by ", "."""
    if not judge:
        return None
    if f"judge:{judge}" in hashes:
        return hashes[f"judge:{judge}"]
    prefix = f"judge:{judge}:"
    per_rubric = [f"{k.removeprefix(prefix)}={v}" for k, v in sorted(hashes.items()) if k.startswith(prefix)]
    return ", ".join(per_rubric) or None


def primary_judge(run: Run | RunView) -> str:
    """The judge whose verdict the checkpoint holds: ``benchNb.primaryJudge``, else the run's ``judge``."""
    return read_settings(run).judge or ""


def settings_fingerprint(settings: RecordedSettings) -> str:
    """A short hash of what a run's numbers depend on; equal fingerprints: runs made under the same settings.

    It covers the benchmark file's sha256, the question set, k, the answerer and its prompt hash, the judges
    (primary first) and every judge prompt hash, and the provider's recorded settings; the first
    ``FINGERPRINT_CHARS`` hex digits of the sha256 of their canonical JSON (sorted keys). A value the run does
    not record enters as null, so two MemoryBench runs on the same questions with the same judge and model
    share a fingerprint.
    """
    judge_prompts = {k: v for k, v in sorted(settings.prompt_hashes.items()) if k.startswith("judge:")}
    if settings.judge_prompt is not None and f"judge:{settings.judge}" not in judge_prompts:
        judge_prompts[f"judge:{settings.judge}"] = settings.judge_prompt
    facts = {
        "benchmarkSha256": settings.benchmark_sha256,
        "questionSet": settings.question_set,
        "k": settings.k,
        "answerer": settings.answerer,
        "answerPrompt": settings.answer_prompt,
        "judges": [settings.judge, *(j for j in settings.judges if j != settings.judge)],
        "judgePrompts": judge_prompts,
        "providerSettings": settings.provider_settings,
    }
    text = json.dumps(facts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:FINGERPRINT_CHARS]


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


def settings_differences(
    settings: Sequence[RecordedSettings],
    *,
    missing_differs: bool = True,
    skip: Sequence[str] = (),
) -> list[str]:
    """The one differ: a sentence per setting the runs differ in (empty: like for like).

    Each reads like ``"retrieval limit k differs: run-a=10, run-b=30"``. With ``missing_differs`` (the
    default), a value some runs record and others do not (a MemoryBench run has no k) is a difference: nothing
    shows the runs agree on it; without it, only recorded values are compared. A run answered or graded with
    a provider's own prompt is always listed, even when every run used one:
    ``"custom prompt: run-a used a provider's own prompt, not graded like the others"``. ``skip`` names
    attributes (of ``COMPARED``) left out.
    """
    if len(settings) < 2:
        return []
    out = []
    for attr, label in COMPARED:
        if attr in skip:
            continue
        values = [getattr(s, attr) for s in settings]
        known = [v for v in values if v is not None]
        if not known or len({repr(v) for v in (values if missing_differs else known)}) == 1:
            continue
        shown = ", ".join(
            f"{s.run_id}={_MISSING if v is None else v}" for s, v in zip(settings, values, strict=True)
        )
        out.append(f"{label} differs: {shown}")
    custom = [s.run_id for s in settings if s.custom_prompt]
    if custom:
        out.append(
            f"custom prompt: {', '.join(custom)} used a provider's own prompt, not graded like the others"
        )
    return out


# What a resume keeps: the run-level ``benchNb`` fields that must be equal between the run on disk and the
# run asked for, with how each reads in a sentence. (Compared runs are held to ``COMPARED`` instead.)
RESUME_KEPT: tuple[tuple[str, str], ...] = (
    ("k", "retrieval limit k"),
    ("answerer", "answerer"),
    ("judges", "judges"),
    ("questionSetHash", "question set"),
    ("benchmarkSha256", "benchmark file"),
    ("promptHashes", "prompts"),
    ("primaryJudge", "primary judge"),
    ("isolatePerQuestion", "isolate per question"),
)


def resume_differences(stored: dict[str, Any] | None, wanted: dict[str, Any] | None) -> list[str]:
    """How the ``benchNb`` record of a run on disk and of the run asked for differ on what a resume keeps
    (``RESUME_KEPT``; empty when they agree), e.g. ``"retrieval limit k: 4 in the run, 5 now"``. A field either
    side does not record is not compared, and judge replicates count 1 when not recorded."""
    a, b = bench_nb_run(stored), bench_nb_run(wanted)
    out = []
    for attr, label in RESUME_KEPT:
        x, y = getattr(a, attr), getattr(b, attr)
        if x is not None and y is not None and x != y:
            out.append(f"{label}: {x!r} in the run, {y!r} now")
    replicates = (a.judgeReplicates or 1, b.judgeReplicates or 1)
    if replicates[0] != replicates[1]:
        out.append(f"judge replicates: {replicates[0]!r} in the run, {replicates[1]!r} now")
    return out


def check_like_for_like(runs: Sources | RunSet | Sequence[Run]) -> list[str]:
    """How the runs differ in question set, k, answerer, judge, prompts or benchmark file (empty: like for like).

    ``settings_differences`` over each run's ``read_settings``; the prompts are compared by hash (the answer
    prompt and the primary judge's).
    """
    stored = getattr(runs, "recorded_settings", None)  # a run store (frames.store.StoredRuns)
    if callable(stored):
        return settings_differences(stored())
    if isinstance(runs, RunSet):
        loaded: list[Run] = list(runs)
    elif isinstance(runs, Sequence) and not isinstance(runs, str) and all(isinstance(r, Run) for r in runs):
        loaded = list(runs)  # type: ignore[arg-type]
    else:
        loaded = list(load_runs(runs))  # type: ignore[arg-type]
    return settings_differences([read_settings(run) for run in loaded])
