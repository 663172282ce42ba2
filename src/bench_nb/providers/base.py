"""The Provider protocol: what the runner needs from a memory system."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from bench_nb.records import IngestResult, SearchHit, Session

# What a provider's hits can be traced to, for retrieval metrics against a benchmark's evidence: a message
# of the haystack (``hit_id`` is the message id), only its session (``session_id``), or nothing of ours.
# A provider declares it as an optional attribute ``evidence_level`` (see docs/runner.md).
EvidenceLevel = Literal["message", "session", "none"]


@runtime_checkable
class Provider(Protocol):
    """A memory system under test.

    A *container* isolates one haystack's memories (a LoCoMo conversation, or one LongMemEval question);
    its name is unique per run, so two runs never share one. Methods are called from worker threads:
    implementations must be thread-safe.

    Optional attributes the runner reads when present: ``persistent`` (memories survive the process),
    ``evidence_level`` (an ``EvidenceLevel``: what its hits can be traced to, for retrieval metrics) and
    ``reports_usage`` (True: it reports every model call it makes itself during ingest and search through
    ``bench_nb.providers.usage.report_model_call``, none meaning none; absent: its own calls are unknown).
    """

    name: str

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        """Store the sessions (one document or message batch per session, with the session date)."""
        ...

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        """Block until what was ingested is searchable; raise ProviderError on timeout or failure."""
        ...

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        """The top ``k`` hits for ``query`` (the run's k, the same for every provider)."""
        ...

    def clear(self, container: str) -> None:
        """Delete what this container holds at the provider."""
        ...
