"""HTML tables of runs for notebooks and reports: every number read against the usual bands.

Each ``table_*`` function returns a ``Table``: ``.data`` holds the numbers (pandas), ``.html`` the rendered
table (Jupyter displays it). All run text is escaped. Bands: ``accuracy_band``, ``latency_band``.
``table_settings`` shows the k, prompts, judge and question set the runs share, or how they differ.
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach
from bench_nb.tables.bands import accuracy_band, latency_band
from bench_nb.tables.beam import has_beam, table_beam
from bench_nb.tables.budget import table_budget
from bench_nb.tables.comparisons import (
    table_agreement,
    table_disputed,
    table_paired,
)
from bench_nb.tables.failures import table_failures
from bench_nb.tables.frame import show, table_frame
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
    table_across_benchmarks,
    table_latency,
    table_memscore,
    table_retrieval,
    table_success,
    table_tokens,
)
from bench_nb.tables.settings import (
    SettingsRow,
    run_settings,
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

# Every name above is imported eagerly; declared here once, so that ``__all__`` and ``dir`` follow from it.
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.tables.bands": ["accuracy_band", "latency_band"],
        "bench_nb.tables.beam": ["has_beam", "table_beam"],
        "bench_nb.tables.budget": ["table_budget"],
        "bench_nb.tables.comparisons": [
            "table_agreement",
            "table_disputed",
            "table_paired",
        ],
        "bench_nb.tables.failures": ["table_failures"],
        "bench_nb.tables.frame": ["show", "table_frame"],
        "bench_nb.tables.harnesses": [
            "not_recorded_note",
            "shows_harnesses",
            "table_answer_key",
            "table_harnesses",
            "table_replicates",
        ],
        "bench_nb.tables.html": ["Table"],
        "bench_nb.tables.judges": [
            "judge_verdict",
            "table_corrected",
            "table_judge_audit",
            "table_judge_audit_by_type",
            "table_judge_vs_human",
            "table_length_bias",
            "table_prompt_sweep",
        ],
        "bench_nb.tables.readings": ["ADVICE", "Reading", "table_what_to_fix", "what_to_fix"],
        "bench_nb.tables.receipts": ["table_receipts"],
        "bench_nb.tables.runs": [
            "table_accuracy_by_type",
            "table_across_benchmarks",
            "table_latency",
            "table_memscore",
            "table_retrieval",
            "table_success",
            "table_tokens",
        ],
        "bench_nb.tables.settings": [
            "SettingsRow",
            "run_settings",
            "settings_line",
            "table_settings",
        ],
        "bench_nb.tables.uncertainty": [
            "table_detectable",
            "table_pareto",
            "table_repeats",
            "table_tell_apart",
            "table_uncertainty",
        ],
    },
)
