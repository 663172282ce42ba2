"""In-memory records of the ROI benchmark: probes, recalls, judgments, usage events and run summaries."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

ProbeMode = Literal["template", "paraphrase", "distractor", "llm"]
#: What a run reports as its probe mode: one mode, or "mixed" when its probes were written by several.
RunProbeMode = Literal["template", "paraphrase", "distractor", "llm", "mixed", "none"]
RunStatus = Literal["running", "done", "failed", "abandoned"]
RunKind = Literal["generate", "benchmark"]
Purpose = Literal["prober", "judge"]


@dataclass(frozen=True)
class Probe:
    """A holdout question that one source memory, and realistically only it, answers."""

    id: str
    owner: str
    memory_id: str
    scope: str  # the source memory's scope: the recall is pinned to it (plus personal and core)
    question: str
    mode: ProbeMode
    model: str | None
    created_at: str
    retired_at: str | None = None
    retired_reason: str | None = None


@dataclass(frozen=True)
class ProbeDraft:
    """A question a prober wrote for one memory, before it is stored as a probe."""

    memory_id: str
    question: str


@dataclass(frozen=True)
class Surfaced:
    """One recalled memory, as the judge sees it."""

    memory_id: str
    text: str
    score: float | None = None


@dataclass(frozen=True)
class Recall:
    """What a pinned recall surfaced for one probe (hits outside the pinned read set already dropped)."""

    probe_id: str
    surfaced: tuple[Surfaced, ...]
    dropped: int  # hits the provider returned that were not in the probe's read set (or unmappable)
    latency_ms: float

    @property
    def memory_ids(self) -> tuple[str, ...]:
        """The ids of the surfaced memories, in rank order."""
        return tuple(s.memory_id for s in self.surfaced)


@dataclass(frozen=True)
class Judgment:
    """A judge's decision for one probe: answerable with what memory surfaced, and without project memory."""

    with_memory: bool
    without_memory: bool
    confidence: float
    explanation: str = ""


@dataclass(frozen=True)
class ModelUsage:
    """Tokens of one model call, as billed."""

    model: str
    input_tokens: int | None
    output_tokens: int | None


@dataclass(frozen=True)
class RunSummary:
    """The numbers of one run. ``exclusive_rate`` is exclusive over judged probes (None when none was judged)."""

    run_id: str
    owner: str
    kind: RunKind
    status: RunStatus
    phase: str | None
    started_at: str
    finished_at: str | None
    provider: str | None
    judge: str | None
    probes: int  # probes recalled in this run
    judged: int
    failed: int  # probes whose judgment failed (skipped; the run still counts)
    with_memory: int
    without_memory: int
    exclusive: int
    probe_mode: RunProbeMode
    probe_modes: dict[str, int] = field(default_factory=dict)

    @property
    def exclusive_rate(self) -> float | None:
        """The share of judged probes answerable only with memory; None when none was judged."""
        return self.exclusive / self.judged if self.judged else None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, with ``exclusive_rate`` after ``exclusive``."""
        data = asdict(self)  # the fields in order, probe_modes copied
        last = {k: data.pop(k) for k in ("probe_mode", "probe_modes")}
        return {**data, "exclusive_rate": self.exclusive_rate, **last}
