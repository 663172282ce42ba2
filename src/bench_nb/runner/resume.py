"""Resume: the settings a run is made or resumed with, and the check that a resume keeps the run's own.

``run_benchmark(run_id=...)`` in a notebook and ``bench-nb run -r RUN`` resume alike: both pass only what the
caller gave (``None``: not given) as a ``RunRequest``, and ``resume_request`` fills in the rest from the run
directory, through the run format's one settings reader (``runformat.settings.read_settings``, over the
checkpoint's run level only: the questions are decoded once, by ``resume_checkpoint`` under the run's lock):
provider, benchmark and its file, answerer, judges, k, the question selection, isolation, provider prompts,
provider settings and judge replicates. A value the caller gives that differs from the run's is refused by
``resume_checkpoint``, naming the setting. What may change on a resume (concurrency, timeouts, retries,
fail-fast, progress bars, and the provider settings, e.g. a moved ``base_url``) is not part of a request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_nb.errors import BenchNbError, ComparisonError
from bench_nb.judges.base import Judge
from bench_nb.models.base import Answerer
from bench_nb.providers.base import Provider
from bench_nb.records import Benchmark
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.journal import CHECKPOINT, apply_journal
from bench_nb.runformat.load import Run, read_checkpoint, read_checkpoint_shell
from bench_nb.runformat.settings import RecordedSettings, read_settings, resume_differences
from bench_nb.runner.settings import DEFAULT_ANSWERER


@dataclass(frozen=True)
class RunRequest:
    """What a run is asked to be made with; ``None`` is "not given": a new run takes the default, a resumed
    run its own value. ``limit``, ``sample_per_type`` and ``question_ids`` are one choice (the selection)."""

    provider: str | Provider | None = None
    benchmark: str | Benchmark | None = None
    dataset: str | Path | None = None
    answerer: str | Answerer | None = None
    judges: str | Judge | Sequence[str | Judge] | None = None
    k: int | None = None
    limit: int | None = None
    sample_per_type: int | None = None
    question_ids: Sequence[str] | None = None
    isolate_per_question: bool | None = None
    allow_provider_prompts: bool | None = None
    provider_settings: Mapping[str, Any] | None = None
    judge_replicates: int | None = None


_SELECTION = ("limit", "sample_per_type", "question_ids")


def resume_request(given: RunRequest, run_dir: Path) -> RunRequest:
    """``given`` with every setting it leaves out read from the run at ``run_dir`` (as it is when no run is
    there yet). A setting the run cannot give back (it was made with a Provider, Benchmark, Answerer or Judge
    object, which a run directory does not hold) must be given again: ``BenchNbError`` says which."""
    path = run_dir / CHECKPOINT
    if not path.is_file():
        return given
    # Before the run's lock, the run level only: the questions are decoded once, under the lock
    # (resume_checkpoint), where what is read is also what is resumed.
    stored = _stored_request(read_settings(Run(run_dir, read_checkpoint_shell(path))), run_dir, given)
    values = {
        f.name: getattr(stored, f.name) if getattr(given, f.name) is None else getattr(given, f.name)
        for f in dataclasses.fields(given)
    }
    if any(getattr(given, name) is not None for name in _SELECTION):  # one choice: the caller's, or the run's
        values.update({name: getattr(given, name) for name in _SELECTION})
    if given.benchmark is not None and given.benchmark != stored.benchmark:
        values["dataset"] = given.dataset  # another benchmark (refused later, by name): not the run's file
    return RunRequest(**values)


def _stored_request(recorded: RecordedSettings, run_dir: Path, given: RunRequest) -> RunRequest:
    """The request the run at ``run_dir`` was made with, as far as its directory records it."""
    inv = recorded.invocation
    where = f"run {recorded.run_id} at {run_dir}"
    if inv is None:  # not made by this runner's version (MemoryBench's, or older): only the names it records
        return RunRequest(
            provider=recorded.provider or None,
            benchmark=recorded.benchmark,
            k=recorded.k,
            question_ids=recorded.question_ids,
            isolate_per_question=recorded.isolate_per_question,
        )
    if inv.provider is None and given.provider is None:
        raise BenchNbError(
            f"{where} was made with a provider object ({recorded.provider!r}), which a run directory cannot "
            "hold: pass it again (provider=...) to resume"
        )
    if inv.benchmark is None and given.benchmark is None:
        raise BenchNbError(
            f"{where} was made with a loaded Benchmark ({recorded.benchmark!r}), which a run directory "
            "cannot hold: pass it again (benchmark=...) to resume"
        )
    if inv.answerer is None and recorded.answerer not in (None, DEFAULT_ANSWERER) and given.answerer is None:
        raise BenchNbError(
            f"{where} was answered by an answerer object ({recorded.answerer!r}), which a run directory "
            "cannot hold: pass it again (answerer=...) to resume"
        )
    if len(inv.judges or ()) != len(recorded.judges) and given.judges is None:
        raise BenchNbError(
            f"{where} was graded by judge objects ({', '.join(recorded.judges)}), which a run directory "
            "cannot hold: pass them again (judges=...) to resume"
        )
    selection: dict[str, Any] = {"question_ids": recorded.question_ids}
    if inv.limit is not None:
        selection = {"limit": inv.limit}
    elif inv.samplePerType is not None:
        selection = {"sample_per_type": inv.samplePerType}
    return RunRequest(
        provider=inv.provider,
        benchmark=inv.benchmark,
        dataset=inv.dataset,
        answerer=inv.answerer,
        judges=inv.judges,
        k=recorded.k,
        isolate_per_question=recorded.isolate_per_question,
        allow_provider_prompts=inv.allowProviderPrompts,
        provider_settings=inv.providerSettings,
        judge_replicates=recorded.judge_replicates,
        **selection,
    )


def resume_checkpoint(
    run_dir: Path, provider: str, benchmark: str, question_ids: list[str], bench_nb: dict[str, Any]
) -> Checkpoint:
    """The run's checkpoint with its journal replayed, if it was made with the same settings; else
    ``ComparisonError`` listing each setting that differs (``"retrieval limit k: 4 in the run, 5 now"``)."""
    checkpoint, _ = read_checkpoint(run_dir / CHECKPOINT, strict=True)
    checkpoint = apply_journal(checkpoint, run_dir)
    stored = checkpoint.benchNb or {}
    problems = resume_differences(stored, bench_nb)
    if checkpoint.provider != provider:
        problems.insert(0, f"provider: {checkpoint.provider!r} in the run, {provider!r} now")
    if checkpoint.benchmark != benchmark:
        problems.insert(0, f"benchmark: {checkpoint.benchmark!r} in the run, {benchmark!r} now")
    missing = [qid for qid in question_ids if qid not in checkpoint.questions]
    if missing and not problems:
        problems.append(f"question set: {len(missing)} question(s) not in the run, e.g. {missing[0]}")
    if problems:
        raise ComparisonError(
            f"run {checkpoint.runId} at {run_dir} was made with other settings, so it cannot be resumed with "
            "these: " + "; ".join(problems) + ". Use another run id (-r) for a new run."
        )
    return checkpoint
