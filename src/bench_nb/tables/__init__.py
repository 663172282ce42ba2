"""HTML tables of runs for notebooks and reports: every number read against the usual bands.

Each ``table_*`` function returns a ``Table``: ``.data`` holds the numbers (pandas), ``.html`` the rendered
table (Jupyter displays it). All run text is escaped. Bands: ``accuracy_band``, ``latency_band``.
``table_settings`` shows the k, prompts, judge and question set the runs share, or how they differ.
"""

from __future__ import annotations

from bench_nb.tables.bands import AccuracyBand, LatencyBand, accuracy_band, latency_band
from bench_nb.tables.beam import has_beam, table_beam
from bench_nb.tables.budget import table_budget
from bench_nb.tables.comparisons import (
    like_for_like_warnings,
    table_agreement,
    table_disputed,
    table_paired,
    warnings_html,
)
from bench_nb.tables.failures import table_failures
from bench_nb.tables.frame import table_frame
from bench_nb.tables.harnesses import (
    not_recorded_note,
    shows_harnesses,
    table_answer_key,
    table_harnesses,
    table_replicates,
)
from bench_nb.tables.html import Table
from bench_nb.tables.judges import (
    judge_verdict,
    table_corrected,
    table_judge_audit,
    table_judge_audit_by_type,
    table_judge_vs_human,
    table_length_bias,
    table_prompt_sweep,
)
from bench_nb.tables.readings import ADVICE, Reading, table_what_to_fix, what_to_fix
from bench_nb.tables.receipts import table_receipts
from bench_nb.tables.runs import (
    table_accuracy_by_type,
    table_latency,
    table_memscore,
    table_retrieval,
    table_success,
    table_tokens,
)
from bench_nb.tables.settings import (
    RunSettings,
    run_settings,
    settings_differences,
    settings_line,
    table_settings,
)
from bench_nb.tables.uncertainty import (
    table_detectable,
    table_pareto,
    table_repeats,
    table_tell_apart,
    table_uncertainty,
)

__all__ = [
    "ADVICE",
    "AccuracyBand",
    "LatencyBand",
    "Reading",
    "RunSettings",
    "Table",
    "accuracy_band",
    "has_beam",
    "judge_verdict",
    "latency_band",
    "like_for_like_warnings",
    "not_recorded_note",
    "run_settings",
    "settings_differences",
    "settings_line",
    "shows_harnesses",
    "table_accuracy_by_type",
    "table_agreement",
    "table_answer_key",
    "table_beam",
    "table_budget",
    "table_corrected",
    "table_detectable",
    "table_disputed",
    "table_failures",
    "table_frame",
    "table_harnesses",
    "table_judge_audit",
    "table_judge_audit_by_type",
    "table_judge_vs_human",
    "table_latency",
    "table_length_bias",
    "table_memscore",
    "table_paired",
    "table_pareto",
    "table_prompt_sweep",
    "table_receipts",
    "table_repeats",
    "table_replicates",
    "table_retrieval",
    "table_settings",
    "table_success",
    "table_tell_apart",
    "table_tokens",
    "table_uncertainty",
    "table_what_to_fix",
    "warnings_html",
    "what_to_fix",
]
