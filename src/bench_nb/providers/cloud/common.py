"""What the cloud providers share: keys and base URLs, container names, calls with bounded concurrency and
retries that honour Retry-After, polling with backoff, and the conversions every adapter needs.

Retries live here, not in the SDKs (each SDK client is made with its own retries off) and not in the runner:
a call that still fails after ``max_retries`` retries raises ``CloudCallError``, whose ``retryable`` is False,
so the runner records the failure for the question instead of repeating a whole ingest.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from bench_nb.errors import DeadlineExceeded, HoldBoardLost, MissingProviderKey, ProviderError
from bench_nb.models.deadline import remaining as question_time_left
from bench_nb.records import SearchHit
from bench_nb.retry_after import Holds, status_of
from bench_nb.retry_policy import Attempts, RetryPolicy, retry_call, transient_status, transport_failure

T = TypeVar("T")

INSTALL_HINT = "pip install 'bench_nb[cloud]'"


class CloudCallError(ProviderError):
    """A call to a cloud provider that failed after its retries (or at once, for a non-transient error).

    Attributes:
        status: the HTTP status of the last failure, when there was one.
        retryable: always False: the provider already retried, the runner must not repeat the call.
    """

    retryable = False

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def api_key(env_var: str, provider: str) -> str:
    """The API key in ``env_var`` (keys are read from the environment only, never from settings)."""
    key = os.environ.get(env_var, "").strip()
    if not key:
        raise MissingProviderKey(
            f"provider {provider!r} needs an API key in the environment variable {env_var} "
            "(keys are read from the environment only: never pass them as settings)"
        )
    return key


def base_url(setting: str | None, env_var: str) -> str | None:
    """The base URL: the ``base_url`` setting, else ``env_var``, else None (the SDK's default)."""
    value = setting or os.environ.get(env_var, "").strip()
    return value.rstrip("/") if value else None


def container_name(tag: str, *, max_len: int, allowed: str = "A-Za-z0-9_-") -> str:
    """``tag`` as a name the provider accepts: characters outside ``allowed`` become ``_``; a name that had to
    change or be shortened ends with 12 hex digits of the tag's sha256, so distinct tags stay distinct."""
    name = re.sub(f"[^{allowed}]", "_", tag)
    if name == tag and len(name) <= max_len:
        return name
    digest = hashlib.sha256(tag.encode("utf-8")).hexdigest()[:12]
    return f"{name[: max_len - len(digest) - 1]}-{digest}"


def parse_date(value: str | None) -> datetime | None:
    """An ISO-8601 date as an aware datetime (a date without a zone is taken as UTC); None if unparseable."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def utc_iso(value: str | None) -> str | None:
    """``value`` as an ISO-8601 UTC timestamp ending in ``Z`` (None if absent or unparseable)."""
    parsed = parse_date(value)
    return parsed.astimezone(UTC).isoformat().replace("+00:00", "Z") if parsed else None


def speaker_line(role: str, content: str) -> str:
    """A message as one line of text; speakers other than user/assistant are named (``Caroline: ...``)."""
    return content if role in ("user", "assistant") else f"{role}: {content}"


def chat_role(role: str) -> str:
    """The chat role a provider understands: ``assistant`` stays, every other speaker is a ``user``."""
    return "assistant" if role == "assistant" else "user"


def metadata_hit(raw: dict[str, Any], text: Any, score: Any, session_key: str) -> SearchHit:
    """A search result as a hit: its session and date from the metadata bench_nb attached at ingest, its id,
    ``raw`` as returned."""
    meta = raw.get("metadata") or {}
    return SearchHit(
        text=str(text or ""),
        score=float(score) if isinstance(score, int | float) else None,
        session_id=meta.get(session_key),
        date=meta.get("date"),
        hit_id=raw.get("id"),
        raw=raw,
    )


def to_dict(obj: Any) -> dict[str, Any]:
    """An SDK result as plain JSON-ready data (pydantic models by alias; dicts as they are)."""
    if isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        data = dump(mode="json", by_alias=True, exclude_none=True)
        return data if isinstance(data, dict) else {"value": data}
    return {"value": obj}


def is_transient(err: BaseException) -> bool:
    """Whether calling again may help: 408, 425, 429, 5xx, or a connection failure or timeout."""
    if isinstance(err, ProviderError):
        return False
    status = status_of(err)
    if status is not None:
        return transient_status(status)  # not 409: a conflict at a memory provider stays one
    return transport_failure(err, depth=5)  # the error and the errors it was raised from


def describe(err: BaseException) -> str:
    """A short, key-free account of an SDK error: its type, HTTP status and the body's message."""
    status = status_of(err)
    body = getattr(err, "body", None)
    text = str(body) if body is not None else str(err)
    text = re.sub(r"\s+", " ", text).strip()[:300]
    where = f"HTTP {status}" if status is not None else type(err).__name__
    return f"{where}: {text}" if text else where


class Calls:
    """Calls to one provider: at most ``max_concurrency`` at once, transient failures retried by the one
    retry policy (``bench_nb.retry_policy``; ``policy`` is this provider's).

    Waits grow exponentially from ``initial_s`` up to ``max_s`` (with up to 10% jitter); a response with
    ``Retry-After`` is waited out exactly, and no call of this provider starts before that time has passed
    (``holds``). Under a question's deadline (search, answer, evaluation: ``models.deadline``) no retry
    waits past it, and a hold that would end past it fails the call with ``DeadlineExceeded``.

    Args:
        provider: the provider's name, for error messages.
        max_concurrency: calls in flight at once, across all threads.
        max_retries: retries after the first attempt (0 = no retry).
        initial_s, max_s: the backoff's first and longest wait.
        retry_after_cap_s: the longest Retry-After honoured (a longer one is waited this long).
        budget: the API key's budget key (``retry_after.budget_key``): a Retry-After is also posted to the
            process-shared ``HoldBoard``, when one is set, and every process's holds on that key are honoured.
    """

    def __init__(
        self,
        provider: str,
        *,
        max_concurrency: int,
        max_retries: int,
        initial_s: float,
        max_s: float,
        retry_after_cap_s: float = 300.0,
        budget: str | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ProviderError(
                f"provider {provider!r}: max_concurrency must be at least 1, not {max_concurrency}"
            )
        if max_retries < 0:
            raise ProviderError(f"provider {provider!r}: max_retries must be 0 or more, not {max_retries}")
        self.provider = provider
        self.policy = RetryPolicy(
            max_attempts=int(max_retries) + 1,
            initial_s=float(initial_s),
            max_s=float(max_s),
            jitter_s=0.0,
            jitter_ratio=0.1,
            retry_after_cap_s=float(retry_after_cap_s),
        )
        self._slots = threading.BoundedSemaphore(int(max_concurrency))
        self.holds = Holds(budget)

    def __call__(self, what: str, fn: Callable[[], T]) -> T:
        """``fn()``, retried on transient failures; raises ``CloudCallError`` naming ``what`` when it gives up
        (or ``DeadlineExceeded`` when the question's deadline leaves no time for a call)."""
        attempts = Attempts()

        def attempt() -> T:
            with self._slots:
                return fn()

        try:
            return retry_call(
                attempt,
                self.policy,
                is_transient,
                attempts=attempts,
                what=f"{self.provider}: {what}",
                deadline=question_time_left,
                holds=self.holds,
            )
        except (ProviderError, DeadlineExceeded, HoldBoardLost):  # a lost board is the sweep's failure
            raise
        except Exception as err:
            n, of = attempts.count, self.policy.max_attempts
            tries = f" after {n} attempts" if n > 1 else ""
            if is_transient(err) and n < of:  # the question's deadline stopped the retries
                tries = f" after {n} of {of} attempts (the question's deadline left no time for more)"
            raise CloudCallError(
                f"{self.provider}: {what} failed{tries}: {describe(err)}", status_of(err)
            ) from err


def poll(
    what: str, pending: Callable[[], str | None], *, timeout_s: float, initial_s: float, max_s: float
) -> int:
    """Call ``pending()`` until it returns None, waiting ``initial_s``, then twice as long each time up to
    ``max_s``; returns the number of polls.

    ``pending`` returns what is still not ready (for the timeout's message), or None when all is ready; it
    raises ``ProviderError`` for something that failed for good.

    Raises:
        ProviderError: still pending after ``timeout_s`` seconds.
    """
    deadline = time.monotonic() + timeout_s
    delay, polls = initial_s, 0
    while True:
        polls += 1
        left = pending()
        if left is None:
            return polls
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ProviderError(
                f"{what}: not ready after {timeout_s:g} s ({polls} polls); still waiting for {left}"
            )
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, max_s)
