"""Resume: the run a resumed run is asked to be, and the check that a resume keeps the run's own settings.

``run_benchmark(run_id=...)`` in a notebook and ``bench-nb run -r RUN`` resume alike: both pass only what the
caller gave (``None``: not given) as a ``RunRequest``, and ``resume_spec`` fills in the rest
from the run directory (``RunRequest.resumed``), through the run format's one settings reader
(``runformat.spec.read_spec``, over the checkpoint's run level only: the questions are decoded once, by
``resume_checkpoint`` under the run's lock): provider, benchmark and its file, answerer, judges, k, the
question selection, isolation, provider prompts, provider settings and judge replicates. A value the caller
gives that differs from the run's is refused by ``resume_checkpoint`` (``RunSpec.resume_differences``), naming
the setting. What may change on a resume (concurrency, timeouts, retries, fail-fast, progress bars:
``runner.settings.ExecutionOptions``; and the provider settings, e.g. a moved ``base_url``) is not compared.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from bench_nb.errors import ComparisonError
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.journal import CHECKPOINT, apply_journal
from bench_nb.runformat.load import Run, read_checkpoint, read_checkpoint_shell
from bench_nb.runformat.spec import RunRequest, RunSpec, read_spec


def resume_spec(given: RunRequest, run_dir: Path, *, objects: Collection[str] = ()) -> RunRequest:
    """``given`` with every setting it leaves out read from the run at ``run_dir`` (as it is when no run is
    there yet). ``objects`` names what the caller gave as objects (see ``RunRequest.resumed``); a setting the run
    cannot give back (made with an object a run directory does not hold) must be given again:
    ``BenchNbError`` says which."""
    path = run_dir / CHECKPOINT
    if not path.is_file():
        return given
    # Before the run's lock, the run level only: the questions are decoded once, under the lock
    # (resume_checkpoint), where what is read is also what is resumed.
    stored = read_spec(Run(run_dir, read_checkpoint_shell(path)))
    return given.resumed(stored, objects=objects, where=str(run_dir))


def resume_checkpoint(run_dir: Path, wanted: RunSpec) -> Checkpoint:
    """The run's checkpoint with its journal replayed, if it was made with the settings ``wanted`` found
    (``RunSpec.found``); else ``ComparisonError`` listing each setting that differs (``"retrieval limit k: 4
    in the run, 5 now"``)."""
    checkpoint, _ = read_checkpoint(run_dir / CHECKPOINT, strict=True)
    checkpoint = apply_journal(checkpoint, run_dir)
    stored = RunSpec.recorded(
        checkpoint.benchNb, provider=checkpoint.provider, benchmark=checkpoint.benchmark
    )
    problems = stored.resume_differences(wanted)
    missing = [qid for qid in wanted.question_ids or () if qid not in checkpoint.questions]
    if missing and not problems:
        problems.append(f"question set: {len(missing)} question(s) not in the run, e.g. {missing[0]}")
    if problems:
        raise ComparisonError(
            f"run {checkpoint.runId} at {run_dir} was made with other settings, so it cannot be resumed with "
            "these: " + "; ".join(problems) + ". Use another run id (-r) for a new run."
        )
    return checkpoint
