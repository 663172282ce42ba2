"""A run's settings, and what bench_nb records of them in ``checkpoint.json`` (run-level ``benchNb``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bench_nb.errors import BenchNbError
from bench_nb.memorybench.format import PHASES, Concurrency
from bench_nb.runner.retry import RetryPolicy

BENCH_NB_VERSION = 1
DEFAULT_K = 10
DEFAULT_CONCURRENCY = 8
DEFAULT_ANSWERER = "extractive"
DEFAULT_JUDGES = ("contains", "f1")  # contains first: extractive answers are whole sentences


@dataclass(frozen=True)
class RunSettings:
    """How a run is executed.

    Attributes:
        k: the retrieval limit, the same for every provider.
        concurrency: how many tasks each phase runs at once (sliding window).
        phase_concurrency: per-phase overrides, e.g. ``{"answer": 4}`` for a rate-limited model.
        isolate_per_question: one container per question (MemoryBench's behaviour) instead of one per haystack.
        fail_fast: stop at the first question that fails after its retries.
        retry: how retryable errors are retried.
        indexing_timeout_s: how long ``await_indexing`` may take per container.
        checkpoint_every_s: the least time between two compactions of the journal into checkpoint.json.
        progress: progress bars on/off; None decides from the environment (see ``runner.progress``).
    """

    k: int = DEFAULT_K
    concurrency: int = DEFAULT_CONCURRENCY
    phase_concurrency: Mapping[str, int] = field(default_factory=dict)
    isolate_per_question: bool = False
    fail_fast: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    indexing_timeout_s: float = 600.0
    checkpoint_every_s: float = 5.0
    progress: bool | None = None

    def __post_init__(self) -> None:
        if self.k < 1:
            raise BenchNbError(f"k must be at least 1, not {self.k}")
        if self.concurrency < 1:
            raise BenchNbError(f"concurrency must be at least 1, not {self.concurrency}")
        for phase, n in self.phase_concurrency.items():
            if phase not in PHASES:
                raise BenchNbError(
                    f"unknown phase {phase!r} in phase_concurrency (phases: {', '.join(PHASES)})"
                )
            if n < 1:
                raise BenchNbError(f"concurrency of {phase} must be at least 1, not {n}")

    def limit(self, phase: str) -> int:
        return int(self.phase_concurrency.get(phase, self.concurrency))

    def concurrency_record(self) -> Concurrency:
        """MemoryBench's ``concurrency`` record."""
        return Concurrency(default=self.concurrency, **{p: int(n) for p, n in self.phase_concurrency.items()})


# Run-level benchNb keys that must be equal for a resume, and for runs to be compared like for like.
LIKE_FOR_LIKE_KEYS: tuple[tuple[str, str], ...] = (
    ("k", "retrieval limit k"),
    ("answerer", "answerer"),
    ("judges", "judges"),
    ("questionSetHash", "question set"),
    ("benchmarkSha256", "benchmark file"),
    ("promptHashes", "prompts"),
)


def settings_differences(stored: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    """How two run-level ``benchNb`` records differ on what a resume must keep (empty when they agree)."""
    out = []
    for key, label in (*LIKE_FOR_LIKE_KEYS, ("isolatePerQuestion", "isolate per question")):
        a, b = stored.get(key), wanted.get(key)
        if a is None or b is None:
            continue
        if a != b:
            out.append(f"{label}: {a!r} in the run, {b!r} now")
    return out
