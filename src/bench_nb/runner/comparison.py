"""Comparing providers like for like: one question set and one set of settings for all, and a check for it.

``run_comparison`` runs several providers on the same benchmark questions with the same k, answerer and judges,
and writes MemoryBench's compare manifest (``<runs_dir>/../compare/<compareId>/manifest.json``), which
``load_runs`` reads. ``check_like_for_like`` (``bench_nb.runformat.spec``, re-exported here) lists how
runs differ in what must be equal for their numbers to be compared.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench_nb.benchmarks.registry import load_benchmark, shared_benchmark
from bench_nb.errors import ComparisonError
from bench_nb.runformat.format import CompareManifest, CompareRun, now_iso, now_stamp
from bench_nb.runformat.journal import write_atomic
from bench_nb.runformat.load import Run, RunSet, Sources, check_like_for_like, load_runs
from bench_nb.runner.run import RunResult, run_benchmark
from bench_nb.runner.settings import split_provider_settings
from bench_nb.text import HtmlFields


def write_compare_manifest(
    runs: Sources | RunSet | Sequence[Run],
    *,
    compare_id: str,
    compare_dir: str | Path | None = None,
    allow_mismatch: bool = False,
) -> Path:
    """Write MemoryBench's compare manifest for ``runs``; refuse runs that are not like for like.

    Args:
        runs: the run directories (or loaded runs) to compare.
        compare_id: the comparison's id.
        compare_dir: where ``manifest.json`` goes; default ``<runs folder>/../compare/<compare_id>``.
        allow_mismatch: write it anyway, with a warning and the differences under ``benchNb.mismatches``.

    Raises:
        ComparisonError: the runs differ (see ``check_like_for_like``) and ``allow_mismatch`` is False.
    """
    loaded = list(runs) if isinstance(runs, RunSet) else list(load_runs(runs))  # type: ignore[arg-type]
    if not loaded:
        raise ComparisonError("no runs to compare")
    diffs = check_like_for_like(loaded)
    if diffs and not allow_mismatch:
        raise ComparisonError(
            "these runs are not like for like, so their numbers cannot be compared: "
            + "; ".join(diffs)
            + " (pass allow_mismatch / --allow-mismatch to compare them anyway, with a warning)"
        )
    if diffs:
        warnings.warn("NOT LIKE FOR LIKE: " + "; ".join(diffs), UserWarning, stacklevel=2)
    first = loaded[0]
    target = sorted({qid for run in loaded for qid in _question_ids(run)})
    if compare_dir is None:
        compare_dir = first.path.parent.parent / "compare" / compare_id
    path = Path(compare_dir) / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    created = now_iso()
    ck = first.checkpoint
    manifest = CompareManifest(
        compareId=compare_id,
        createdAt=created,
        updatedAt=created,
        benchmark=ck.benchmark if ck else str((first.report or {}).get("benchmark", "")),
        judge=ck.judge if ck else str((first.report or {}).get("judge", "")),
        answeringModel=ck.answeringModel if ck else str((first.report or {}).get("answeringModel", "")),
        sampling=ck.sampling if ck else None,
        targetQuestionIds=list(ck.targetQuestionIds) if ck and not diffs else target,
        runs=[CompareRun(provider=_provider(run), runId=run.run_id) for run in loaded],
    )
    body: dict[str, Any] = msgspec.to_builtins(manifest)
    if diffs:
        body["benchNb"] = {"mismatches": diffs}
    write_atomic(path, msgspec.json.format(msgspec.json.encode(body), indent=2) + b"\n")
    return path


def _question_ids(run: Run) -> list[str]:
    if run.view is not None:
        return run.view.targetQuestionIds or list(run.view.questions)
    return [str(e.get("questionId")) for e in (run.report or {}).get("evaluations", [])]


def _provider(run: Run) -> str:
    if run.view is not None:
        return run.view.provider
    return str((run.report or {}).get("provider", ""))


@dataclass(frozen=True)
class CompareResult(HtmlFields):
    """A comparison: its id, its manifest, one run per provider (in the order given), and how the runs are
    not like for like (``check_like_for_like``; empty when they are)."""

    compare_id: str
    manifest_path: Path
    runs: list[RunResult]
    mismatches: list[str] = field(default_factory=list)


_PROMPT_DIFFS = ("answer prompt ", "judge prompt ", "custom prompt:")


def run_comparison(
    providers: str | Sequence[str],
    benchmark: Any,
    *,
    compare_id: str | None = None,
    dataset: str | Path | None = None,
    runs_dir: str | Path = "data/runs",
    allow_mismatch: bool = False,
    allow_provider_prompts: bool | None = None,
    provider_settings: Mapping[str, Any] | None = None,
    **settings: Any,
) -> CompareResult:
    """Run every provider on the same questions with the same settings, then write the compare manifest.

    Args:
        providers: ``"sqlite,full-context"`` or a list of provider names.
        benchmark: a benchmark name or a loaded ``Benchmark`` (loaded once, shared by every run).
        compare_id: the comparison's id; its runs are ``<compare_id>-<provider>`` (rerunning resumes them).
        dataset: the benchmark file.
        runs_dir: where the runs go; the manifest goes to ``<runs_dir>/../compare/<compare_id>/``.
        allow_mismatch: see ``write_compare_manifest``.
        allow_provider_prompts: let each provider bring its own answer/judge prompt (see ``run_benchmark``;
            None: off for new runs, each run's own setting when rerunning resumes them).
            The runs that use one are then not like for like: the manifest is still written, with a warning
            and the differences under ``benchNb.mismatches`` (any other difference is still refused).
        provider_settings: provider options: ``KEY`` goes to every provider, ``PROVIDER.KEY`` only to that
            one (e.g. ``{"zep.scope": "episodes", "sqlite.x": 1}``); a ``PROVIDER`` not compared, or a
            setting that would carry a key or token, is refused before any run starts.
        **settings: every other ``run_benchmark`` option (k, answerer, judges, limit, concurrency, ...).
    """
    names = [p.strip() for p in providers.split(",")] if isinstance(providers, str) else list(providers)
    names = [n for n in names if n]
    if not names:
        raise ComparisonError("run_comparison needs at least one provider")
    if len(set(names)) != len(names):
        raise ComparisonError(f"each provider may appear once in a comparison, got {names}")
    per_provider = split_provider_settings(provider_settings, names)
    bench = load_benchmark(benchmark, dataset)
    if compare_id is None:
        compare_id = f"compare-{bench.name}-" + now_stamp()
    # A benchmark given by name is read once and shared, and each run records its name and file as a run of
    # its own would (so `bench-nb run -r` and `reanswer` need nothing else); a loaded one is passed as it is.
    named = isinstance(benchmark, str)
    with shared_benchmark(benchmark, dataset, bench) if named else contextlib.nullcontext():
        results = [
            run_benchmark(
                name,
                benchmark if named else bench,
                dataset=dataset if named else None,
                run_id=f"{compare_id}-{name.replace(':', '_').replace('.', '_')}",
                runs_dir=runs_dir,
                allow_provider_prompts=allow_provider_prompts,
                provider_settings=per_provider[name],
                **settings,
            )
            for name in names
        ]
    loaded = load_runs([r.run_dir for r in results])
    diffs = check_like_for_like(loaded)
    prompts_only = all(d.startswith(_PROMPT_DIFFS) for d in diffs)
    manifest = write_compare_manifest(
        loaded,
        compare_id=compare_id,
        compare_dir=Path(runs_dir).parent / "compare" / compare_id,
        allow_mismatch=allow_mismatch or bool(allow_provider_prompts and prompts_only),
    )
    return CompareResult(compare_id, manifest, results, diffs)
