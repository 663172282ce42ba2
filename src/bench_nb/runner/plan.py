"""A run resolved once: what the provider tells of itself, read one time (``ProviderTraits``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bench_nb.providers.base import EvidenceLevel, Provider
from bench_nb.providers.usage import reports_usage
from bench_nb.runner.retrieval import declared_evidence_level


@dataclass(frozen=True)
class ProviderTraits:
    """What a run reads of its provider besides its calls, read once when it is made (the Provider protocol's
    optional attributes, ``providers.base``): its name, its evidence level (``runner.retrieval``), whether its
    memories outlive the process (``persistent``: one that keeps them in process memory is ingested again on a
    resume), whether it reports its own model calls (``providers.usage``), and its own answer and judge prompts
    (``prompts``, read only when the run allows them: ``--allow-provider-prompts``)."""

    name: str
    evidence_level: EvidenceLevel | None = None
    persistent: bool = True
    reports_usage: bool = False
    prompts: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, provider: Provider, *, prompts: bool = False) -> ProviderTraits:
        """``provider``'s traits (``prompts``: read its own prompts too). Raises ``ProviderError`` on a bad
        evidence level."""
        own: Mapping[str, Any] = {}
        if prompts:
            from bench_nb.models.llm import provider_prompts  # the LLM client: only for a run that asks

            own = provider_prompts(provider)
        return cls(
            name=provider.name,
            evidence_level=declared_evidence_level(provider),
            persistent=bool(getattr(provider, "persistent", True)),
            reports_usage=reports_usage(provider),
            prompts=own,
        )
