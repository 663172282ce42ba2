"""A ROI run: claim (one per owner at a time) → pinned recall of every active probe → judge → top up.

:func:`start_run` claims the run and does the recalls, then returns a :class:`RoiRun` whose
:meth:`RoiRun.finish` judges and tops the pool up (the MCP tool returns between the two). :func:`run_roi`
does both. On an empty pool the first call only generates the pool and reports ``generating``.

A run holds the owner's lock (a ``running`` row in ``runs`` naming its process; on Postgres also a row lock held
by the run's own connection) from claim to finish, across processes. A run whose process is gone (killed,
crashed) is marked ``abandoned`` by the next claim, which proceeds at once; a run whose process cannot be
checked (another host) after ``stale_after_s`` without a heartbeat (default 15 minutes); ``force=True``
(``roi run --force``) takes over from a process that hangs. What an abandoned run had written stays.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from bench_nb.errors import BenchNbError
from bench_nb.providers.base import Provider
from bench_nb.redaction import error_text
from bench_nb.roi.judges import DeterministicRoiJudge, JudgmentFailed, RoiJudge
from bench_nb.roi.metering import Meter
from bench_nb.roi.pool import POOL_SIZE, TopUp, top_up
from bench_nb.roi.probers import Prober, deterministic_prober
from bench_nb.roi.recall import DEFAULT_K, pinned_recalls, store_recalls
from bench_nb.roi.records import Probe, Recall, RunSummary
from bench_nb.roi.store import STALE_AFTER_S, RoiStore
from bench_nb.roi.summary import summarize_run

OutcomeStatus = Literal["generating", "recalled", "done"]
#: The provider name of a Postgres store's own search (see ``RoiStore.search``).
STORE_SEARCH = "postgres-fts"


@dataclass
class RoiRun:
    """A claimed run. ``status`` is ``generating`` (the pool was generated; nothing to judge) or ``recalled``
    (recalls stored; call :meth:`finish` to judge). ``finish`` may run in another thread."""

    db: str | Path
    owner: str
    run_id: str
    status: OutcomeStatus
    judge: RoiJudge
    prober: Prober
    pool_size: int
    own_key: bool
    k: int = DEFAULT_K
    probes: tuple[Probe, ...] = ()
    recalls: tuple[Recall, ...] = ()
    generated: TopUp | None = None
    topped_up: TopUp | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> RunSummary:
        """The run's summary as the store holds it now."""
        with RoiStore(self.db) as store:
            summary = summarize_run(store, self.owner, self.run_id)
        assert summary is not None  # the run is ours: claimed by this object
        return summary

    def finish(self) -> RunSummary:
        """Judge every recalled probe (a failed judgment is recorded and skipped), top the pool up, close."""
        if self.status != "recalled":
            return self.summary()
        with RoiStore(self.db) as store:
            try:
                meter = Meter(store, self.owner, own_key=self.own_key, run_id=self.run_id)
                store.heartbeat(self.run_id, "judging")
                by_id = {p.id: p for p in self.probes}
                for recall in self.recalls:
                    _judge_one(store, meter, self.judge, self.run_id, by_id[recall.probe_id], recall)
                    store.heartbeat(self.run_id)
                store.heartbeat(self.run_id, "topping-up")
                try:
                    self.topped_up = top_up(
                        store, self.owner, self.prober, target=self.pool_size, meter=meter
                    )
                except BenchNbError as err:  # the run's results stand; the next call tops up again
                    self.notes.append(f"top-up failed: {err}")
                store.finish_run(self.run_id, "done", "; ".join(self.notes) or None)
            except BaseException as err:
                store.finish_run(self.run_id, "failed", f"{type(err).__name__}: {err}")
                raise
            self.status = "done"
        return self.summary()


def new_run_id() -> str:
    """A new ROI run id: ``roi-<UTC timestamp>-<6 random hex digits>``."""
    return "roi-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def start_run(
    owner: str,
    db: str | Path,
    *,
    provider: str | Provider | None = None,
    provider_settings: Mapping[str, Any] | None = None,
    prober: Prober | None = None,
    judge: RoiJudge | None = None,
    k: int = DEFAULT_K,
    pool_size: int = POOL_SIZE,
    own_key: bool = False,
    stale_after_s: float = STALE_AFTER_S,
    force: bool = False,
) -> RoiRun:
    """Claim a run for ``owner`` and do its recalls (or, on an empty pool, generate the pool).

    Args:
        owner: whose probes run, with whose permissions.
        db: the ROI store.
        provider: a registered provider name (``bench_nb.providers.get_provider``) or a Provider object;
            None: the store's default (``sqlite`` for a SQLite store; ``postgres-fts``, the database's own
            full-text search in the owner's role, for a Postgres store).
        provider_settings: settings for a provider given by name (``run_dir`` defaults to a temporary dir).
        prober: writes new probes (default: the keyless paraphrase prober, which never quotes a memory).
        judge: judges each probe (default: the keyless deterministic judge).
        k: hits per recall.
        pool_size: active probes to keep per owner.
        own_key: the prober's and judge's model calls are made on the owner's own key (metered apart).
        stale_after_s: a running run whose process cannot be checked (another host) and without a heartbeat
            for this long is taken as crashed (one whose process is gone is abandoned at once).
        force: abandon the owner's running run even if its process looks alive (it hangs), and start.

    Raises:
        RunInProgressError: a run is in progress for ``owner``.
    """
    prober = prober or deterministic_prober()
    judge = judge or DeterministicRoiJudge()
    run_id = new_run_id()
    with RoiStore(db) as store:
        if provider is None:
            provider = store.default_provider
        provider_name = provider if isinstance(provider, str) else provider.name
        store.retire_invalidated(owner)
        kind = store.claim_run(
            run_id,
            owner,
            phase="starting",
            provider=provider_name,
            judge=judge.name,
            prober=prober.name,
            k=k,
            stale_after_s=stale_after_s,
            force=force,
        )
        run = RoiRun(db, owner, run_id, "generating", judge, prober, pool_size, own_key, k)
        meter = Meter(store, owner, own_key=own_key, run_id=run_id)
        try:
            if kind == "generate":
                store.heartbeat(run_id, "generating")
                run.generated = top_up(store, owner, prober, target=pool_size, meter=meter)
                store.finish_run(run_id, "done")
                return run
            store.heartbeat(run_id, "recalling")
            run.probes = tuple(store.active_probes(owner))
            run.recalls = tuple(_recall_all(store, provider, provider_settings, run))
            run.status = "recalled"
        except BaseException as err:
            store.finish_run(run_id, "failed", error_text(err))
            raise
    return run


def run_roi(owner: str, db: str | Path, **options: Any) -> RoiRun:
    """Start a run (:func:`start_run`, same options) and finish it; returns the finished run.

    ``run.status`` is ``generating`` when this call only generated the pool, else ``done``; ``run.summary()``
    holds the numbers.
    """
    run = start_run(owner, db, **options)
    run.finish()
    return run


def _recall_all(
    store: RoiStore, provider: str | Provider, settings: Mapping[str, Any] | None, run: RoiRun
) -> list[Recall]:
    settings = dict(settings or {})
    with tempfile.TemporaryDirectory(prefix="bench-nb-roi-") as tmp:
        if provider == STORE_SEARCH:
            found = store_recalls(store, run.probes, k=run.k)
        else:
            if isinstance(provider, str):
                from bench_nb.providers import get_provider

                run_dir = settings.pop("run_dir", Path(tmp))
                provider = get_provider(provider, run_dir=run_dir, **settings)
            assert not isinstance(provider, str)
            found = pinned_recalls(store, provider, run.probes, run_id=run.run_id, k=run.k)
        recalls = []
        for recall in found:
            store.add_recall(run.run_id, run.owner, recall)
            store.heartbeat(run.run_id)
            recalls.append(recall)
        return recalls


def _judge_one(
    store: RoiStore, meter: Meter, judge: RoiJudge, run_id: str, probe: Probe, recall: Recall
) -> None:
    def failed(error: str) -> None:
        store.add_result(run_id, probe, judge=judge.name, error=error)

    source = store.memory(probe.memory_id)
    if source is None:  # cannot happen through the API (probes reference memories), kept as a clear record
        failed(f"source memory {probe.memory_id} not in the store")
        return
    try:
        reply = judge.judge(probe, source, recall)
    except JudgmentFailed as err:
        meter.record("judge", err.usage)
        failed(str(err))
        return
    meter.record("judge", reply.usage)
    j = reply.judgment
    store.add_result(
        run_id,
        probe,
        judge=judge.name,
        with_memory=j.with_memory,
        without_memory=j.without_memory,
        confidence=j.confidence,
        explanation=j.explanation,
    )
