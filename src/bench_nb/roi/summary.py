"""The numbers of a run, and an owner's status. Every query is filtered by owner: nothing here reads across.

Definitions: ``probes`` = probes recalled in the run; ``judged`` = probes with a judgment; ``failed`` = probes
whose judgment failed (skipped); ``exclusive`` = judged probes with ``with_memory`` and not
``without_memory``; ``exclusive_rate`` = exclusive / judged.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import cast

from bench_nb.roi.memory import PROBE_KINDS
from bench_nb.roi.records import RunProbeMode, RunSummary
from bench_nb.roi.store import RoiStore, borrow_store


def measured(exclusive: int, judged: int, judge: str | None) -> str:
    """What a run's exclusive count measured, in words, for the tile and ``bench-nb roi status``. The
    deterministic judge never asks whether a bare agent could answer (``without_memory`` is always false), so
    its count is the probes whose memory surfaced, not questions a bare agent could not answer."""
    if judge == "deterministic":
        return f"memory surfaced for {exclusive} of {judged} probes; a bare agent was not asked (deterministic judge)"
    return f"{exclusive} of {judged} project questions a bare agent could not answer"


def summarize_run(store: RoiStore, owner: str, run_id: str) -> RunSummary | None:
    """The numbers of ``owner``'s run ``run_id`` (None if there is no such run for this owner)."""
    run = store.run(owner, run_id)
    if run is None:
        return None
    modes = store.run_probe_modes(owner, run_id)
    counts = store.run_counts(owner, run_id)
    mode = cast(RunProbeMode, "none" if not modes else next(iter(modes)) if len(modes) == 1 else "mixed")
    return RunSummary(
        run_id=run["id"],
        owner=run["owner"],
        kind=run["kind"],
        status=run["status"],
        phase=run["phase"],
        started_at=run["started_at"],
        finished_at=run["finished_at"],
        provider=run["provider"],
        judge=run["judge"],
        probes=sum(modes.values()),
        **counts,  # judged, failed, with_memory, without_memory, exclusive
        probe_mode=mode,
        probe_modes=modes,
    )


def finished_runs(store: RoiStore, owner: str) -> list[RunSummary]:
    """``owner``'s finished benchmark runs, oldest first."""
    out = []
    for row in store.runs(owner, "benchmark"):
        if row["status"] == "done":
            summary = summarize_run(store, owner, row["id"])
            if summary is not None:
                out.append(summary)
    return out


@dataclass(frozen=True)
class RoiStatus:
    """Where ``owner`` stands: the pool, the run in progress if any, and the latest finished run."""

    owner: str
    active_probes: int
    retired_probes: int
    unprobed_memories: int
    in_progress: RunSummary | None
    latest: RunSummary | None
    runs: int  # finished benchmark runs

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: the latest run's numbers at the top level (None before the first run)."""
        # before the first run: the same keys, every one None
        empty: dict[str, object] = dict.fromkeys([*(f.name for f in fields(RunSummary)), "exclusive_rate"])
        latest = self.latest.to_dict() if self.latest else empty
        return {
            **latest,
            "owner": self.owner,
            "status": "in_progress" if self.in_progress else ("done" if self.latest else "no_runs"),
            "in_progress": None
            if self.in_progress is None
            else {
                "run_id": self.in_progress.run_id,
                "phase": self.in_progress.phase,
                "kind": self.in_progress.kind,
            },
            "active_probes": self.active_probes,
            "retired_probes": self.retired_probes,
            "unprobed_memories": self.unprobed_memories,
            "runs": self.runs,
        }


def roi_status(owner: str, db: str | Path | RoiStore) -> RoiStatus:
    """``owner``'s ROI status (reads only ``owner``'s rows)."""
    with borrow_store(db) as store:
        probes = store.probes(owner)
        running = [r for r in store.runs(owner) if r["status"] == "running"]
        finished = finished_runs(store, owner)
        unprobed = store.count_unprobed(owner, PROBE_KINDS)
        return RoiStatus(
            owner=owner,
            active_probes=sum(p.retired_at is None for p in probes),
            retired_probes=sum(p.retired_at is not None for p in probes),
            unprobed_memories=unprobed,
            in_progress=summarize_run(store, owner, running[0]["id"]) if running else None,
            latest=finished[-1] if finished else None,
            runs=len(finished),
        )
