"""The two baselines every comparison needs: ``full-context`` (the whole haystack) and ``no-memory`` (nothing).

``full-context`` stores the messages like ``sqlite`` does (``<run_dir>/memory/full-context/``, so a resumed
run still has them) and answers every search with the whole haystack in order, one hit per message
(``[date] speaker: text``), ignoring the query. ``k`` is checked but does not cut the list: the baseline's
limit is its token budget. When the haystack exceeds ``max_context_tokens``, the most recent messages are
kept: messages are taken from the newest back while the sum of their token counts (each hit's text counted
on its own, with the tokenizer of ``model``) stays within the budget, so the oldest part is dropped and what
is kept is one contiguous, most recent stretch. Each hit's ``raw`` says its ``tokens`` and the
``tokenizer`` that counted them (an ``approx:`` tokenizer says so: counts are never silently estimated).
When the budget dropped messages, each kept hit's ``raw`` also has ``contextCut``: ``{"droppedMessages": n,
"budgetTokens": max_context_tokens}`` (``bn.failure_reasons`` reads it: a miss of a cut context is a truncation).

``no-memory`` stores nothing and finds nothing: the answer without any memory.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import asdict, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from bench_nb.errors import ModelError, ProviderError
from bench_nb.models.tokens import count_tokens, counting_client, tokenizer_for
from bench_nb.providers.base import EvidenceLevel
from bench_nb.providers.sqlite import check_k
from bench_nb.providers.store import MessageStore
from bench_nb.records import CONTEXT_CUT, IngestResult, SearchHit, Session

if TYPE_CHECKING:
    from bench_nb.models.client import LLMClient

DEFAULT_MAX_CONTEXT_TOKENS = 100_000
DEFAULT_TOKEN_MODEL = "gpt-4o"


class FullContextProvider:
    """The whole haystack as context, cut to a token budget keeping the most recent messages.

    Args:
        run_dir: the run directory; messages live in ``<run_dir>/memory/full-context/``.
        max_context_tokens: the budget, summed over the hits' texts (default 100,000).
        model: the model whose tokenizer counts the budget (an alias or prefixed name of
            ``bench_nb.models``; default ``gpt-4o``, counted with tiktoken's o200k_base).
    """

    name = "full-context"
    evidence_level: EvidenceLevel = "message"  # a hit is one stored message, its id the dataset's
    reports_usage = True  # calls no model (providers.usage)

    def __init__(
        self,
        run_dir: str | Path,
        *,
        max_context_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS,
        model: str = DEFAULT_TOKEN_MODEL,
    ) -> None:
        budget = int(max_context_tokens)
        if budget < 1:
            raise ProviderError(
                f"full-context: max_context_tokens must be positive, got {max_context_tokens!r}"
            )
        try:
            self.tokenizer = tokenizer_for(model)
        except ModelError as err:
            raise ProviderError(f"full-context: cannot count tokens for model {model!r}: {err}") from err
        self.run_dir = Path(run_dir)
        self.max_context_tokens = budget
        self.model = model
        self.store = MessageStore(self.run_dir / "memory" / self.name)
        self._cache: dict[str, list[SearchHit]] = {}
        self._lock = threading.Lock()

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        """Store the messages (replacing those sessions' earlier rows)."""
        with self._lock:
            self._cache.pop(container, None)
        rows = self.store.ingest(container, sessions)
        with self._lock:
            self._cache.pop(container, None)
        return IngestResult(document_ids=tuple(r.message_id for r in rows))

    @cached_property
    def _client(self) -> LLMClient | None:
        return counting_client(self.tokenizer)  # one for every count it makes

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        """Nothing to wait for; checks the container exists."""
        self.store.check(container)

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        """The haystack in order, cut to the budget (most recent kept); ``query`` is not used."""
        check_k(k)
        with self._lock:
            cached = self._cache.get(container)
        if cached is None:
            cached = self.context(container)
            with self._lock:
                self._cache[container] = cached
        return list(cached)

    def context(self, container: str) -> list[SearchHit]:
        """Compute the hits: newest messages first while they fit the budget, returned oldest first."""
        kept: list[SearchHit] = []
        total = 0
        rows = self.store.rows(container)
        for row in reversed(rows):
            hit = row.to_hit()
            counted = count_tokens(hit.text, self.model, client=self._client)
            if total + counted.n > self.max_context_tokens:
                break
            total += counted.n
            raw = {k: v for k, v in asdict(row).items() if k != "text"}
            raw.update(tokens=counted.n, tokenizer=counted.tokenizer)
            kept.append(replace(hit, raw=raw))
        kept.reverse()
        dropped = len(rows) - len(kept)
        if dropped:  # the budget cut the haystack: every kept hit says so (failure_reasons reads it)
            cut = {"droppedMessages": dropped, "budgetTokens": self.max_context_tokens}
            kept = [replace(h, raw={**(h.raw or {}), CONTEXT_CUT: cut}) for h in kept]
        return kept

    def clear(self, container: str) -> None:
        """Delete the container's messages."""
        with self._lock:
            self._cache.pop(container, None)
        self.store.clear(container)


class NoMemoryProvider:
    """Ingests nothing and returns no hits: the baseline of answering without memory."""

    name = "no-memory"
    evidence_level: EvidenceLevel = "none"  # retrieves nothing by design: retrieval metrics do not apply
    reports_usage = True  # calls no model (providers.usage)

    def __init__(self, run_dir: str | Path | None = None) -> None:
        self.run_dir = None if run_dir is None else Path(run_dir)

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        """Store nothing."""
        return IngestResult()

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        """Return at once: there is nothing to index."""

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        """No hits, whatever the query (``k`` is still checked)."""
        check_k(k)
        return []

    def clear(self, container: str) -> None:
        """Nothing to clear."""
