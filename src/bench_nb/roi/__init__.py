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

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

if TYPE_CHECKING:
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

# Every name is imported on first use: the store, frames and judges bring polars, numpy and pydantic.
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.roi.errors": ["MemoryImportError", "RoiError", "RunInProgressError", "StoreError"],
        "bench_nb.roi.frames": ["roi_results_df", "roi_runs_df"],
        "bench_nb.roi.imports": ["ImportSummary", "MemoryFile", "import_memories", "read_memories"],
        "bench_nb.roi.judges": ["DeterministicRoiJudge", "JudgeReply", "JudgmentFailed", "RoiJudge"],
        "bench_nb.roi.memory": ["Memory", "ScopeMember", "can_read", "pinned_scopes", "scope_owner"],
        "bench_nb.roi.metering": ["deployment_usage", "usage_df"],
        "bench_nb.roi.options": ["RoiOptions"],
        "bench_nb.roi.pool": ["POOL_SIZE", "TopUp", "top_up"],
        "bench_nb.roi.probers": [
            "DistractorProber",
            "ParaphraseProber",
            "Prober",
            "ProberReply",
            "TemplateProber",
            "deterministic_prober",
        ],
        "bench_nb.roi.records": ["Judgment", "ModelUsage", "Probe", "ProbeDraft", "Recall", "RunSummary"],
        "bench_nb.roi.run": ["RoiRun", "run_roi", "start_run"],
        "bench_nb.roi.store": ["RoiStore", "require_store"],
        "bench_nb.roi.summary": ["RoiStatus", "roi_status"],
        "bench_nb.roi.tile": ["RoiTile", "chart_roi_trend", "roi_tile", "roi_tile_html"],
    },
)
