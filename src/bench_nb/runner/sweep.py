"""Sweeps: a grid of configurations run as ordinary resumable runs, plus compare manifests.

A sweep file (TOML) names the grid: providers x benchmarks x k x answerers x judges x repeats. Every grid
point is one ``run_benchmark`` run whose id is made from the point alone (``<sweep>-<provider>-<benchmark>-
k<k>-<answerer>-<judges>-r<repeat>``), so running the sweep again resumes its runs: a finished run is left as
it is (the runner writes nothing for it), a run cut short goes on from its checkpoint. The runs go on a local
process pool (``workers`` processes) or, with ``ray=``, one Ray task per run; either way the runs share
each API key's Retry-After holds (a ``HoldTable`` in a manager process, or in a Ray actor). When they are
done the sweep writes MemoryBench's compare manifest over all its runs (``<runs_dir>/../compare/<sweep
id>/``, differences under ``benchNb.mismatches``) and one per like-for-like group (same benchmark, k,
answerer and judges). See docs/runner.md, "Sweeps".
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import threading
import time
import tomllib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from multiprocessing import get_context
from multiprocessing.managers import BaseManager
from pathlib import Path
from typing import Any, cast

from bench_nb.errors import BenchNbError, HoldBoardLost, Problem
from bench_nb.retry_after import HoldBoard, HoldTable, set_hold_board
from bench_nb.text import HtmlFields

# run_benchmark options a sweep file may set under [settings], with their types
_SETTINGS: dict[str, type | tuple[type, ...]] = {
    "limit": int,
    "sample_per_type": int,
    "concurrency": int,
    "phase_concurrency": dict,
    "isolate_per_question": bool,
    "fail_fast": bool,
    "indexing_timeout_s": (int, float),
    "question_timeout_s": (int, float),
    "allow_provider_prompts": bool,
    "judge_replicates": int,
    "retries": int,
}
_TOP = {
    "id",
    "providers",
    "benchmarks",
    "k",
    "answerers",
    "judges",
    "repeats",
    "workers",
    "runs_dir",
    "datasets",
    "settings",
    "provider_settings",
}
DEFAULT_WORKERS = 2


class SweepError(BenchNbError):
    """A sweep file that cannot be run: names the file and the field at fault."""

    def __init__(self, path: Path | str, message: str, field: str | None = None) -> None:
        self.problem = Problem(str(path), message, field=field)
        super().__init__(f"{path}: {f'{field}: ' if field else ''}{message}")


@dataclass(frozen=True)
class SweepPoint:
    """One run of a sweep: a point of the grid and its deterministic run id."""

    run_id: str
    provider: str
    benchmark: str
    k: int
    answerer: str
    judges: str | None  # None: the benchmark's default judges
    repeat: int
    dataset: str | None = None


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep file. ``settings`` are the other ``run_benchmark`` options, the same for every run."""

    sweep_id: str
    points: list[SweepPoint]
    runs_dir: Path
    workers: int = DEFAULT_WORKERS
    settings: dict[str, Any] = field(default_factory=dict)
    provider_settings: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class SweepRun(HtmlFields):
    """What one run of a sweep ended with: the runner's ``RunResult``, or the error that stopped it."""

    point: SweepPoint
    result: Any = None  # bench_nb.runner.run.RunResult
    error: str | None = None

    @property
    def status(self) -> str:
        """The run's status (``completed``, ``failed``, ...), or ``error`` when it raised before finishing."""
        return "error" if self.result is None else str(self.result.status)


@dataclass(frozen=True)
class SweepResult(HtmlFields):
    """A finished sweep: its runs in grid order and its manifests (the whole sweep's first)."""

    sweep_id: str
    runs: list[SweepRun]
    manifests: list[Path]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "_"


def _strings(raw: Mapping[str, Any], key: str, path: Path, default: list[Any] | None = None) -> list[Any]:
    value = raw.get(key, default)
    if value is None:
        raise SweepError(path, "is required (a list of names)", key)
    items = value if isinstance(value, list) else [value]
    if not items:
        raise SweepError(path, "is empty", key)
    return items


def _judges(value: Any, path: Path) -> str | None:
    if value is None or value == "default":
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise SweepError(
        path, f"each entry is a judge list like 'contains,f1' or ['contains', 'f1'], not {value!r}", "judges"
    )


def parse_sweep(raw: Mapping[str, Any], path: str | Path = "<sweep>", *, base: Path | None = None) -> Sweep:
    """Read a sweep from its TOML table; every error names the file and field. ``base``: where relative
    dataset paths are read from (the sweep file's folder)."""
    path = Path(path)
    base = base if base is not None else path.parent
    unknown = sorted(set(raw) - _TOP)
    if unknown:
        raise SweepError(path, f"unknown key(s) {unknown}; known: {sorted(_TOP)}", unknown[0])
    sweep_id = raw.get("id", path.stem)
    if not isinstance(sweep_id, str) or _slug(sweep_id) != sweep_id:
        raise SweepError(path, f"must be letters, digits, '_', '.' or '-', not {sweep_id!r}", "id")
    providers = _strings(raw, "providers", path)
    benchmarks = _strings(raw, "benchmarks", path)
    answerers = _strings(raw, "answerers", path, ["extractive"])
    for key, items in (("providers", providers), ("benchmarks", benchmarks), ("answerers", answerers)):
        if not all(isinstance(v, str) and v.strip() for v in items) or len(set(items)) != len(items):
            raise SweepError(path, f"must be distinct non-empty names, got {items!r}", key)
    ks = _strings(raw, "k", path, [10])
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in ks) or len(set(ks)) != len(
        ks
    ):
        raise SweepError(path, f"must be distinct positive integers, got {ks!r}", "k")
    judges = [_judges(v, path) for v in _strings(raw, "judges", path, [None])]
    if len(set(judges)) != len(judges):
        raise SweepError(path, f"lists the same judges twice: {judges!r}", "judges")
    repeats = raw.get("repeats", 1)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
        raise SweepError(path, f"must be a positive integer, not {repeats!r}", "repeats")
    workers = raw.get("workers", DEFAULT_WORKERS)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise SweepError(path, f"must be a positive integer, not {workers!r}", "workers")
    datasets = raw.get("datasets", {})
    if not isinstance(datasets, dict) or not all(isinstance(v, str) for v in datasets.values()):
        raise SweepError(path, 'must be a table of benchmark = "file"', "datasets")
    for name in datasets:
        if name not in benchmarks:
            raise SweepError(path, f"names {name!r}, which is not among benchmarks {benchmarks}", "datasets")
    settings = dict(raw.get("settings", {}))
    for key, value in settings.items():
        kind = _SETTINGS.get(key)
        if kind is None:
            raise SweepError(path, f"unknown setting {key!r}; known: {sorted(_SETTINGS)}", f"settings.{key}")
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise SweepError(path, f"has the wrong type ({type(value).__name__})", f"settings.{key}")
    from bench_nb.runner.settings import split_provider_settings

    try:
        own = split_provider_settings(dict(raw.get("provider_settings", {})), providers)
    except BenchNbError as err:
        raise SweepError(path, str(err), "provider_settings") from None
    paths = {name: str(base / dataset) for name, dataset in datasets.items()}
    points: dict[str, SweepPoint] = {}
    for provider, bench, k, answerer, judge, repeat in itertools.product(
        providers, benchmarks, ks, answerers, judges, range(1, repeats + 1)
    ):
        parts = [sweep_id, provider, bench, f"k{k}", answerer, (judge or "default").replace(",", "_")]
        run_id = "-".join(_slug(p) for p in parts) + f"-r{repeat}"
        if run_id in points:
            raise SweepError(path, f"two grid points get the same run id {run_id!r}: rename one", "providers")
        points[run_id] = SweepPoint(run_id, provider, bench, k, answerer, judge, repeat, paths.get(bench))
    runs_dir = Path(raw.get("runs_dir", "data/runs"))
    return Sweep(sweep_id, list(points.values()), runs_dir, workers, settings, own)


def load_sweep(path: str | Path) -> Sweep:
    """Read a sweep file (TOML, see docs/runner.md "Sweeps")."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SweepError(path, "no such file") from None
    except tomllib.TOMLDecodeError as err:
        raise SweepError(path, f"not valid TOML: {err}") from None
    return parse_sweep(raw, path)


# --- running one point (in a worker process or a Ray task) ----------------------------------------------------


def _run_kwargs(sweep: Sweep, point: SweepPoint) -> dict[str, Any]:
    from bench_nb.runner.retry import RetryPolicy

    settings = dict(sweep.settings)
    retries = settings.pop("retries", None)
    if retries is not None:
        settings["retry"] = RetryPolicy(max_attempts=int(retries) + 1)
    return {
        "dataset": point.dataset,
        "answerer": point.answerer,
        "judges": point.judges,
        "k": point.k,
        "run_id": point.run_id,
        "runs_dir": str(sweep.runs_dir),
        "progress": False,
        "provider_settings": sweep.provider_settings.get(point.provider, {}),
        **settings,
    }


def run_point(point: SweepPoint, kwargs: dict[str, Any]) -> SweepRun:
    """Run one grid point through ``run_benchmark``. Repeat i > 1 reads and writes its own LLM response cache
    (``llm.repeat-<i>.sqlite`` beside the usual one), as ``bench-nb run --repeat`` does."""
    from bench_nb.runner.run import run_benchmark

    try:
        result = run_benchmark(point.provider, point.benchmark, repeat=point.repeat, **kwargs)
        return SweepRun(point, result)
    except HoldBoardLost:  # not this run's failure: the sweep's (``_on_pool``, ``_outcome``)
        raise
    except Exception as err:  # one run's failure does not stop the sweep; it is reported and exits 1
        return SweepRun(point, None, f"{type(err).__name__}: {err}")


class RayHoldBoard:
    """A ``HoldBoard`` backed by the sweep's Ray actor (a ``HoldTable``): a Retry-After met by any task holds
    back every task's calls with the same API key, on any node."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def not_before(self, key: str) -> float:
        """When calls with API key ``key`` may start again (a time as ``time.time()``), as the actor holds it."""
        return float(self._get(self.actor.not_before.remote(key)))

    def hold(self, key: str, until: float) -> None:
        """Hold calls with API key ``key`` back until ``until``, for every task of the sweep."""
        self._get(self.actor.hold.remote(key, until))

    @staticmethod
    def _get(ref: Any) -> Any:
        import ray

        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError as err:
            raise HoldBoardLost(
                f"the sweep's Ray hold actor (which shares Retry-After holds between its tasks) is gone ({err}); "
                "the sweep stops: run it again to resume its runs"
            ) from err


def run_point_on_ray(point: SweepPoint, kwargs: dict[str, Any], budget: Any) -> SweepRun:
    """``run_point`` in a Ray task, its Retry-After holds shared through the sweep's actor ``budget``."""
    previous = set_hold_board(RayHoldBoard(budget))
    try:
        return run_point(point, kwargs)
    finally:
        set_hold_board(previous)


def _watch_parent() -> None:
    """Pool workers end when the sweep process dies (even by SIGKILL), so a re-run never finds a run still
    locked by an orphan."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="bench-nb-sweep-watch").start()


class _HoldManager(BaseManager):
    """The process that keeps a local pool's ``HoldTable`` (``local_pool``)."""


_HoldManager.register("HoldTable", HoldTable)


class ManagedHoldBoard:
    """The local pool's ``HoldBoard``: the manager process's ``HoldTable`` (a proxy), whose loss is
    ``HoldBoardLost`` naming the manager, not a connection error the caller would blame on its model."""

    def __init__(self, table: Any, pid: int | None) -> None:
        self.table = table
        self.pid = pid

    def not_before(self, key: str) -> float:
        """When calls with API key ``key`` may start again, as the manager's table holds it."""
        return float(self._call(lambda: self.table.not_before(key)))

    def hold(self, key: str, until: float) -> None:
        """Hold calls with API key ``key`` back until ``until``, for every worker of the pool."""
        self._call(lambda: self.table.hold(key, until))

    def holds(self) -> dict[str, float]:
        """Every hold the board keeps (``HoldTable.holds``)."""
        return dict(self._call(lambda: self.table.holds()))

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except (OSError, EOFError) as err:  # refused, reset, broken pipe: the manager is gone
            raise HoldBoardLost(
                f"the sweep's hold manager process (pid {self.pid}, which shares Retry-After holds between the "
                f"sweep's workers) is gone ({type(err).__name__}: {err}); the sweep stops: run it again to "
                "resume its runs"
            ) from err


def _pool_worker(board: HoldBoard) -> None:
    """A pool worker's start: it ends with the sweep process, and shares its holds through ``board``."""
    _watch_parent()
    set_hold_board(board)


@contextlib.contextmanager
def local_pool(workers: int) -> Iterator[tuple[ProcessPoolExecutor, ManagedHoldBoard]]:
    """A pool of ``workers`` spawned processes whose Retry-After holds are shared, and its board: a
    ``HoldTable`` kept by a manager process (which, like the workers, ends when this process dies), set in
    each worker by the pool's initializer. A 429 one worker meets holds back every worker's calls with that
    API key, as the Ray actor does for a Ray sweep."""
    context = get_context("spawn")
    manager = _HoldManager(ctx=context)
    manager.start(initializer=_watch_parent)
    try:
        process = getattr(manager, "_process", None)
        board = ManagedHoldBoard(manager.HoldTable(), getattr(process, "pid", None))  # type: ignore[attr-defined]
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_pool_worker, initargs=(board,)
        ) as pool:
            yield pool, board
    finally:
        manager.shutdown()


def _on_pool(jobs: list[tuple[SweepPoint, dict[str, Any]]], workers: int) -> Iterator[SweepRun]:
    """The runs on a local pool, as they finish. The hold manager is looked at twice a second: when it is
    gone, runs not started are cancelled and the sweep raises ``HoldBoardLost`` naming it."""
    with local_pool(min(workers, len(jobs))) as (pool, board):
        points: dict[Future[SweepRun], SweepPoint] = {pool.submit(run_point, p, kw): p for p, kw in jobs}
        pending = set(points)
        try:
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for f in done:
                    yield _outcome(points[f], f.result)
                if pending:
                    board.not_before("")  # raises HoldBoardLost when the manager is gone
        except HoldBoardLost:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _outcome(point: SweepPoint, get: Callable[[], SweepRun]) -> SweepRun:
    """A run's outcome; a worker that died (killed, out of memory: the pool then ends the runs still waiting
    too) is this run's error, not the sweep's end. A rerun of the sweep resumes them."""
    try:
        return get()
    except HoldBoardLost:
        raise
    except Exception as err:
        return SweepRun(point, None, f"its worker died: {type(err).__name__}: {err}")


def _on_ray(jobs: list[tuple[SweepPoint, dict[str, Any]]], address: str) -> Iterator[SweepRun]:
    try:
        import ray
    except ImportError:
        raise BenchNbError(
            "--ray needs Ray: pip install 'bench_nb[ray]' (or run without --ray on a local process pool)"
        ) from None
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)
    budget = ray.remote(num_cpus=0)(HoldTable).remote()  # one per sweep: every API key's holds
    task = ray.remote(num_cpus=1, max_retries=0)(run_point_on_ray)
    points = {task.remote(p, kw, budget): p for p, kw in jobs}
    pending = list(points)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:  # a run_point_on_ray's result: ray.get gives its SweepRun, which ray's types lose
            yield _outcome(points[ref], cast("Callable[[], SweepRun]", functools.partial(ray.get, ref)))


def run_sweep(
    sweep: Sweep | str | Path,
    *,
    workers: int | None = None,
    ray: str | None = None,
    runs_dir: str | Path | None = None,
    on_run: Callable[[SweepRun], None] | None = None,
) -> SweepResult:
    """Run every point of a sweep (resuming those already started), then write its compare manifests.

    Args:
        sweep: a sweep file or a parsed ``Sweep``.
        workers: processes of the local pool (default: the file's ``workers``, else 2).
        ray: run on Ray instead: ``"auto"`` (the cluster this machine belongs to), an address such as
            ``"ray://head:10001"``, or any value when Ray is already initialised in this process.
        runs_dir: where the runs go (default: the file's ``runs_dir``, else ``data/runs``).
        on_run: called with each run as it finishes (in the order they finish).
    """
    if not isinstance(sweep, Sweep):
        sweep = load_sweep(sweep)
    if runs_dir is not None:
        sweep = replace(sweep, runs_dir=Path(runs_dir))
    sweep = replace(sweep, runs_dir=sweep.runs_dir.resolve())
    sweep.runs_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(p, _run_kwargs(sweep, p)) for p in sweep.points]
    stream = _on_ray(jobs, ray) if ray is not None else _on_pool(jobs, workers or sweep.workers)
    finished: dict[str, SweepRun] = {}
    for run in stream:
        finished[run.point.run_id] = run
        if on_run is not None:
            on_run(run)
    runs = [finished[p.run_id] for p in sweep.points]
    return SweepResult(sweep.sweep_id, runs, write_sweep_manifests(sweep, runs))


def write_sweep_manifests(sweep: Sweep, runs: Sequence[SweepRun]) -> list[Path]:
    """The whole sweep's compare manifest (``compare/<sweep id>``, mismatches recorded) and, when the grid
    has several like-for-like groups, one per group (``compare/<sweep id>-<benchmark>-k<k>-<answerer>-
    <judges>``), over the runs that have a run directory."""
    from bench_nb.runner.comparison import write_compare_manifest

    present = [r for r in runs if (sweep.runs_dir / r.point.run_id / "checkpoint.json").is_file()]
    if not present:
        return []
    compare_root = sweep.runs_dir.parent / "compare"
    groups: dict[str, list[SweepRun]] = {}
    for r in present:
        p = r.point
        key = "-".join(
            _slug(s) for s in (p.benchmark, f"k{p.k}", p.answerer, (p.judges or "default").replace(",", "_"))
        )
        groups.setdefault(key, []).append(r)
    out = []
    with warnings.catch_warnings():  # the differences are recorded in the manifest, by design
        warnings.simplefilter("ignore", UserWarning)
        sets = [(sweep.sweep_id, present)]
        if len(groups) > 1:
            sets += [(f"{sweep.sweep_id}-{key}", members) for key, members in groups.items()]
        for compare_id, members in sets:
            out.append(
                write_compare_manifest(
                    [sweep.runs_dir / r.point.run_id for r in members],
                    compare_id=compare_id,
                    compare_dir=compare_root / compare_id,
                    allow_mismatch=True,
                )
            )
    return out
