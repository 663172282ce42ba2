"""The runner's retries of its phase calls: the one retry policy (``bench_nb.retry_policy``), under the
question deadline (``models.deadline``).

What is retried: an exception whose ``retryable`` attribute is true (providers and models can set it on any
error they raise), ``TimeoutError``, ``ConnectionError``, httpx transport errors, and errors carrying an HTTP
status (``status_code`` or ``response.status_code``) of 408, 409, 425, 429 or 5xx; a ``Retry-After`` such an
error carries is waited out. Everything else fails the phase at once: a bug or a bad input does not get
better by waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from bench_nb.models.deadline import remaining
from bench_nb.retry_after import status_of
from bench_nb.retry_policy import (
    TRANSIENT_STATUS,
    Attempts,
    RetryPolicy,
    retry_call,
    transient_status,
    transport_failure,
)

T = TypeVar("T")

RETRYABLE_STATUS = TRANSIENT_STATUS | {409}

__all__ = ["RETRYABLE_STATUS", "Attempts", "RetryPolicy", "call_with_retries", "is_retryable"]


def is_retryable(exc: BaseException) -> bool:
    """Whether waiting and calling again may help (see the module docstring)."""
    flag = getattr(exc, "retryable", None)
    if isinstance(flag, bool):
        return flag
    if transport_failure(exc):
        return True
    status = status_of(exc)
    return status is not None and transient_status(status, also=RETRYABLE_STATUS)


def call_with_retries(fn: Callable[[], T], policy: RetryPolicy, attempts: Attempts) -> T:
    """Call ``fn``, retrying retryable errors per ``policy``; the last error is re-raised as is."""
    return retry_call(fn, policy, is_retryable, attempts=attempts, what="runner", deadline=remaining)
