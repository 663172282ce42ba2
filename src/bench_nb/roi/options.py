"""How a run is configured from the CLI and the MCP server: one place that picks the prober and the judge."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench_nb.roi.judges import DeterministicRoiJudge, RoiJudge
from bench_nb.roi.pool import POOL_SIZE
from bench_nb.roi.probers import Prober, deterministic_prober
from bench_nb.roi.recall import DEFAULT_K
from bench_nb.roi.records import ProbeMode
from bench_nb.roi.store import STALE_AFTER_S

#: The model the LLM prober and judge use unless told otherwise.
DEFAULT_MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class RoiOptions:
    """A run's settings.

    Attributes:
        deterministic: keyless prober (``probe_mode``) and deterministic judge; else the LLM ones.
        probe_mode: the deterministic prober's mode: ``paraphrase`` (default), ``distractor`` (only words the
            memory shares with its nearest neighbours: the search must rank it among them) or ``template``
            (quotes the memory: an upper bound).
        model: the LLM prober's model (an alias of ``bench_nb.models``).
        judge_model: the LLM judge's model (default: ``model``).
        provider: the registered provider that recalls (default: the store's own, see ``start_run``).
        provider_settings: its settings.
        k: hits per recall.
        pool_size: active probes kept per owner.
        own_key: model calls are made on the owner's own key (metered apart from the deployment's).
        stale_after_s: a running run whose process cannot be checked and without a heartbeat for this long is
            taken as crashed.
        force: take over from a running run whose process looks alive (it hangs).
    """

    deterministic: bool = True
    probe_mode: ProbeMode = "paraphrase"  # probers.DEFAULT_MODE: never quotes the memory
    model: str = DEFAULT_MODEL
    judge_model: str | None = None
    provider: str | None = None
    provider_settings: dict[str, Any] = field(default_factory=dict)
    k: int = DEFAULT_K
    pool_size: int = POOL_SIZE
    own_key: bool = False
    stale_after_s: float = STALE_AFTER_S
    force: bool = False

    def prober(self) -> Prober:
        """The prober these options ask for: a deterministic one by ``probe_mode``, else an LLM prober of
        ``model``."""
        if self.deterministic:
            return deterministic_prober(self.probe_mode)
        from bench_nb.roi.llm import LLMProber

        return LLMProber(self.model)

    def judge(self) -> RoiJudge:
        """The judge these options ask for: the deterministic judge, else an LLM judge of ``judge_model`` or
        ``model``."""
        if self.deterministic:
            return DeterministicRoiJudge()
        from bench_nb.roi.llm import LLMRoiJudge

        return LLMRoiJudge(self.judge_model or self.model)

    def start_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``start_run`` / ``run_roi``."""
        return {
            "provider": self.provider,
            "provider_settings": dict(self.provider_settings),
            "prober": self.prober(),
            "judge": self.judge(),
            "k": self.k,
            "pool_size": self.pool_size,
            "own_key": self.own_key,
            "stale_after_s": self.stale_after_s,
            "force": self.force,
        }
