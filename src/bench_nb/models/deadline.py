"""One deadline for everything a question's phase asks of a model, retries included.

The runner opens ``deadline(seconds)`` around a question's search, answer or evaluation (``--question-timeout``,
default 600 s); the LLM client honours it: each HTTP attempt gets at most the time that is left as its timeout,
no retry waits past it, and a call made after it raises ``DeadlineExceeded`` (not retryable) at once. Without
it, one hung model could hold a question for ~20 minutes (120 s per attempt, 9 attempts, plus backoff).

The deadline lives in a ``contextvars.ContextVar``: it belongs to the worker thread (or task) that set it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from bench_nb.errors import DeadlineExceeded

__all__ = ["DeadlineExceeded", "attempt_timeout", "deadline", "exceeded", "remaining"]

_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("bench_nb_deadline", default=None)


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Within the block, model calls end by ``seconds`` from now (None: no deadline; nested: the earlier)."""
    if seconds is None:
        yield
        return
    at = time.monotonic() + seconds
    current = _DEADLINE.get()
    token = _DEADLINE.set((at, seconds) if current is None or at < current[0] else current)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining() -> float | None:
    """Seconds left before the deadline (may be negative), or None without one."""
    current = _DEADLINE.get()
    return None if current is None else current[0] - time.monotonic()


def exceeded() -> DeadlineExceeded:
    """The error for a deadline that has passed."""
    current = _DEADLINE.get()
    seconds = f"{current[1]:g} s" if current else "its time"
    return DeadlineExceeded(f"the question's deadline ({seconds}, --question-timeout) passed")


def attempt_timeout(timeout_s: float) -> float:
    """The timeout of the next attempt: ``timeout_s``, or less when the deadline is nearer; raises
    ``DeadlineExceeded`` when it has passed."""
    left = remaining()
    if left is None:
        return timeout_s
    if left <= 0:
        raise exceeded()
    return min(timeout_s, left)
