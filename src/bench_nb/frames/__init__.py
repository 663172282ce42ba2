"""The read side: run directories and run stores as polars (or pandas) frames.

The frame functions users call are at the top level (``bench_nb.load_runs``, ``questions_df``, ``runs_df``,
``judgments_df``, ``disputed_questions``, ``export_runs``) and here; ``StoredRuns`` is what ``load_runs``
returns for a run store. The other modules (``columns``, ``backend``, ``verdicts``, ...) are internal.
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.frames.judgments import disputed_questions, judgments_df
    from bench_nb.frames.questions import QuestionsLike, RunsLike, questions_df, runs_df
    from bench_nb.frames.store import StoredRuns, export_runs, load_runs

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.frames.judgments": ["disputed_questions", "judgments_df"],
        "bench_nb.frames.questions": ["QuestionsLike", "RunsLike", "questions_df", "runs_df"],
        "bench_nb.frames.store": ["StoredRuns", "export_runs", "load_runs"],
    },
)
