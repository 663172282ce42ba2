"""The ROI benchmark: what would an agent lose without memory?

A holdout of probe questions generated from an owner's own stored knowledge (decisions, gotchas, conventions),
a real recall for each under the owner's permissions, pinned to the probe's scope, and a judge deciding per
probe whether it was answerable with what memory surfaced and whether a bare agent could have answered it.
The headline is the exclusive rate: exclusive (with and not without) over judged probes.

Typical use::

    from bench_nb import roi

    roi.import_memories("memories.jsonl", "roi.sqlite")
    roi.run_roi("alice", "roi.sqlite")          # first call on an empty pool: generates the pool
    run = roi.run_roi("alice", "roi.sqlite")    # runs: recall, judge, top up
    run.summary().exclusive_rate
    roi.roi_tile("alice", "roi.sqlite")         # the "Only memory knows" tile

See docs/roi.md for the memory model, the import formats, the store and the interfaces.
"""

from __future__ import annotations

from pathlib import Path

from bench_nb.roi.errors import MemoryImportError, RoiError, RunInProgressError, StoreError
from bench_nb.roi.frames import roi_results_df, roi_runs_df
from bench_nb.roi.imports import ImportSummary, MemoryFile, import_memories, read_memories
from bench_nb.roi.judges import DeterministicRoiJudge, JudgeReply, JudgmentFailed, RoiJudge
from bench_nb.roi.memory import Memory, ScopeMember, can_read, pinned_scopes, scope_owner
from bench_nb.roi.metering import deployment_usage, usage_df
from bench_nb.roi.options import RoiOptions
from bench_nb.roi.pool import POOL_SIZE, TopUp, top_up
from bench_nb.roi.probers import (
    DistractorProber,
    ParaphraseProber,
    Prober,
    ProberReply,
    TemplateProber,
    deterministic_prober,
)
from bench_nb.roi.records import Judgment, ModelUsage, Probe, ProbeDraft, Recall, RunSummary
from bench_nb.roi.run import RoiRun, run_roi, start_run
from bench_nb.roi.store import RoiStore, require_store
from bench_nb.roi.summary import RoiStatus, roi_status
from bench_nb.roi.tile import RoiTile, chart_roi_trend, roi_tile, roi_tile_html


def ensure_probes(
    owner: str, db: str | Path, prober: Prober | None = None, *, target: int = POOL_SIZE
) -> TopUp:
    """Top ``owner``'s pool up to ``target`` active probes (default prober: templated, no key)."""
    with RoiStore(db) as store:
        return top_up(store, owner, prober or TemplateProber(), target=target)


__all__ = [
    "POOL_SIZE",
    "DeterministicRoiJudge",
    "DistractorProber",
    "ImportSummary",
    "JudgeReply",
    "Judgment",
    "JudgmentFailed",
    "Memory",
    "MemoryFile",
    "MemoryImportError",
    "ModelUsage",
    "ParaphraseProber",
    "Probe",
    "ProbeDraft",
    "Prober",
    "ProberReply",
    "Recall",
    "RoiError",
    "RoiJudge",
    "RoiOptions",
    "RoiRun",
    "RoiStatus",
    "RoiStore",
    "RoiTile",
    "RunInProgressError",
    "RunSummary",
    "ScopeMember",
    "StoreError",
    "TemplateProber",
    "TopUp",
    "can_read",
    "chart_roi_trend",
    "deployment_usage",
    "deterministic_prober",
    "ensure_probes",
    "import_memories",
    "pinned_scopes",
    "read_memories",
    "require_store",
    "roi_results_df",
    "roi_runs_df",
    "roi_status",
    "roi_tile",
    "roi_tile_html",
    "run_roi",
    "scope_owner",
    "start_run",
    "top_up",
    "usage_df",
]
