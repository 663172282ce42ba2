"""ROI judges decide, per probe, two things: could it be answered with what memory surfaced (``with_memory``),
and could a competent agent answer it without project memory, from general knowledge alone
(``without_memory``).

The deterministic judge needs no key: ``with_memory`` is true only when the source memory itself was surfaced,
``without_memory`` is always false (it cannot know what a bare agent knows), confidence 1. Its exclusive rate is
therefore the share of probes whose memory surfaced: for the same probes and recalls, an upper bound on the
exclusive rate an LLM judge would give, which also credits a bare agent with the probes it could answer (only a
probe answered by another surfaced memory than its source could move the LLM judge the other way). How hard the
probes are is the probe mode's matter (``probers``: paraphrase and distractor probes are the pessimistic sets,
template probes the easy one). The LLM judge lives in ``bench_nb.roi.llm``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bench_nb.errors import JudgeError
from bench_nb.roi.memory import Memory
from bench_nb.roi.records import Judgment, ModelUsage, Probe, Recall


@dataclass(frozen=True)
class JudgeReply:
    """A judgment and the model calls that produced it (for metering)."""

    judgment: Judgment
    usage: tuple[ModelUsage, ...] = ()


class JudgmentFailed(JudgeError):
    """A probe could not be judged (the model failed, or its reply did not parse): the probe is skipped.

    ``usage`` holds the model calls made anyway, so they are still metered.
    """

    def __init__(self, probe_id: str, message: str, usage: tuple[ModelUsage, ...] = ()) -> None:
        self.probe_id = probe_id
        self.usage = usage
        super().__init__(f"probe {probe_id}: {message}")


@runtime_checkable
class RoiJudge(Protocol):
    """Judges one probe given its source memory and what the pinned recall surfaced."""

    name: str

    def judge(self, probe: Probe, source: Memory, recall: Recall) -> JudgeReply:
        """Raises JudgmentFailed when no judgment could be made."""
        ...


class DeterministicRoiJudge:
    """``with_memory`` iff the source memory's id was surfaced; ``without_memory`` false; confidence 1."""

    name = "deterministic"

    def judge(self, probe: Probe, source: Memory, recall: Recall) -> JudgeReply:
        """Judge by ids: answerable with memory when the probe's source memory surfaced, never without it."""
        ids = recall.memory_ids
        if probe.memory_id in ids:
            why = f"source memory {probe.memory_id} surfaced at rank {ids.index(probe.memory_id) + 1} of {len(ids)}"
            found = True
        else:
            why = f"source memory {probe.memory_id} not among the {len(ids)} surfaced"
            found = False
        return JudgeReply(Judgment(with_memory=found, without_memory=False, confidence=1.0, explanation=why))
