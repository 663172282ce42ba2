"""Retries with exponential backoff and jitter (tenacity) for the runner's phase calls.

What is retried: an exception whose ``retryable`` attribute is true (providers and models can set it on any
error they raise), ``TimeoutError``, ``ConnectionError``, httpx transport errors, and errors carrying an HTTP
status (``status_code`` or ``response.status_code``) of 408, 409, 425, 429 or 5xx. Everything else fails the
phase at once: a bug or a bad input does not get better by waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx  # at module top: importing it in a worker thread races the SDKs that look it up (issue 14)
import tenacity

from bench_nb.models.deadline import stop_at_deadline
from bench_nb.retry_after import status_of

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """How a failing phase call is retried.

    Attributes:
        max_attempts: calls in all (1 = no retry).
        initial_s: the first wait; each later wait doubles, up to ``max_s``, plus up to ``jitter_s`` at random.
        max_s: the longest wait between two calls.
        jitter_s: the random part added to every wait (spreads clients that failed together).
    """

    max_attempts: int = 4
    initial_s: float = 1.0
    max_s: float = 30.0
    jitter_s: float = 1.0


def is_retryable(exc: BaseException) -> bool:
    """Whether waiting and calling again may help (see the module docstring)."""
    flag = getattr(exc, "retryable", None)
    if isinstance(flag, bool):
        return flag
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    status = status_of(exc)
    if status is not None:
        return status in RETRYABLE_STATUS or 500 <= status < 600
    return isinstance(exc, httpx.TransportError)


class Attempts:
    """Counts the calls one ``call_with_retries`` made (read after it returns or raises)."""

    def __init__(self) -> None:
        self.count = 0


def call_with_retries(fn: Callable[[], T], policy: RetryPolicy, attempts: Attempts) -> T:
    """Call ``fn``, retrying retryable errors per ``policy``; the last error is re-raised as is."""
    retrying = tenacity.Retrying(
        wait=tenacity.wait_exponential(multiplier=policy.initial_s, max=policy.max_s)
        + tenacity.wait_random(0, policy.jitter_s),
        retry=tenacity.retry_if_exception(is_retryable),
        stop=tenacity.stop_after_attempt(max(1, policy.max_attempts)) | stop_at_deadline,
        reraise=True,
    )
    for attempt in retrying:
        with attempt:
            attempts.count += 1
            return fn()
    raise AssertionError("unreachable")  # pragma: no cover
