"""One retry policy (tenacity) for every call that may pass when made again: the LLM client
(``models.client``), the cloud providers (``providers.cloud.common``) and the runner's phases (``runner.retry``).

The policy, ``RetryPolicy``: at most ``max_attempts`` calls; before each retry, the wait the failure asked for
(``Retry-After`` or ``retry-after-ms``, read by ``retry_after.retry_after_s``, at most ``retry_after_cap_s``),
else an exponential backoff ``initial_s · 2^(n-1)`` up to ``max_s`` plus a random jitter between 0 and
``jitter_s + jitter_ratio · backoff``; with a deadline, no retry whose wait would end past it. ``retry_call`` runs
a function under it. A call site says only what differs: which errors are transient (its predicate, built on
``transient_status`` and ``transport_failure``), its numbers, whether the question deadline bounds it, and
the API key's holds (``retry_after.Holds``).

Holds: a wait a response asked for is also posted as a hold on the API key (``holds.post``): no call with
that key starts before it ends, in this process and, through the sweep's board on Ray, in every process.
Before each attempt, the first included, ``retry_call`` waits out every live hold on its key.

The deadline: no retry whose wait would end past it (the last error is re-raised), and no attempt starts
when the deadline leaves no more than the live hold: ``DeadlineExceeded`` then, at once, without the wait.

Every retry is logged on the ``bench_nb.retry`` logger (INFO, silent unless logging is set up) with the
error's type and HTTP status (never its text, which may quote a request), the attempt and the wait; the
record carries them as ``retry_what``, ``retry_attempt``, ``retry_status``, ``retry_asked_s`` (the wait the
response asked for, or None) and ``retry_wait_s``. Every wait for a hold is logged on ``bench_nb.retry.hold``
(INFO) with ``hold_what``, ``hold_attempt`` (the attempt it holds back) and ``hold_wait_s``; never a key.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TypeVar

import httpx  # at module top: importing it in a worker thread races the SDKs that look it up (issue 14)
import tenacity

from bench_nb.errors import DeadlineExceeded
from bench_nb.retry_after import Holds, retry_after_s, status_of

T = TypeVar("T")
log = logging.getLogger("bench_nb.retry")
hold_log = logging.getLogger("bench_nb.retry.hold")

#: HTTP statuses that may succeed when asked again later (with every 5xx): Request Timeout, Too Early,
#: Too Many Requests. A call site adds what else it retries (the LLM client and the runner: 409 Conflict).
TRANSIENT_STATUS = frozenset({408, 425, 429})


def transient_status(status: int, also: Collection[int] = ()) -> bool:
    """Whether a response with this HTTP status may succeed when asked again: ``TRANSIENT_STATUS``, every
    5xx, and the statuses in ``also``."""
    return status in TRANSIENT_STATUS or status in also or status >= 500


def transport_failure(err: BaseException, depth: int = 1) -> bool:
    """Whether ``err`` is a dropped connection or a timeout (httpx's transport errors, ``TimeoutError``,
    ``ConnectionError``), or, with ``depth`` > 1, was raised from one (up to ``depth`` errors down the chain
    of causes: SDKs wrap httpx's errors in their own)."""
    seen: BaseException | None = err
    for _ in range(depth):
        if seen is None:
            return False
        if isinstance(seen, httpx.TransportError | TimeoutError | ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """How a failing call is retried (the defaults are the runner's; see the module docstring).

    Attributes:
        max_attempts: calls in all (1 = no retry).
        initial_s: the first backoff; each later one doubles, up to ``max_s``.
        max_s: the longest backoff.
        jitter_s: the random part added to every backoff is at most ``jitter_s + jitter_ratio · backoff``
            (spreads clients that failed together).
        jitter_ratio: see ``jitter_s``.
        retry_after_cap_s: the longest ``Retry-After`` honoured (a longer one is waited this long); a wait
            asked for by the response replaces the backoff and has no jitter.
    """

    max_attempts: int = 4
    initial_s: float = 1.0
    max_s: float = 30.0
    jitter_s: float = 1.0
    jitter_ratio: float = 0.0
    retry_after_cap_s: float = 300.0

    def wait_s(self, state: tenacity.RetryCallState) -> tuple[float, float | None]:
        """The wait after the failed attempt ``state`` describes, and the wait its error asked for (or None)."""
        asked = retry_after_s(state.outcome.exception() if state.outcome else None)
        if asked is not None:
            return min(asked, self.retry_after_cap_s), asked
        backoff = float(tenacity.wait_exponential(multiplier=self.initial_s, max=self.max_s)(state))
        jitter = tenacity.wait_random(0, self.jitter_s + self.jitter_ratio * backoff)
        return backoff + float(jitter(state)), None


class Attempts:
    """Counts the calls one ``retry_call`` made (read after it returns or raises)."""

    def __init__(self) -> None:
        self.count = 0


def retry_call(
    fn: Callable[[], T],
    policy: RetryPolicy,
    retryable: Callable[[BaseException], bool],
    *,
    attempts: Attempts | None = None,
    what: str = "call",
    deadline: Callable[[], float | None] | None = None,
    holds: Holds | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``fn()``, retried per ``policy`` while it raises errors ``retryable`` accepts; the last error is
    re-raised as it is.

    Args:
        fn: the call, without arguments.
        policy: how many attempts and how long between them.
        retryable: whether an error raised is transient (retried) or final (raised at once).
        attempts: counts the calls made (also when the last one raises).
        what: names the call in the log and in ``DeadlineExceeded``.
        deadline: the seconds left before a deadline (None: none), e.g. ``models.deadline.remaining``.
        holds: the API key's Retry-After holds: each wait a response asks for (capped) is posted there, also
            after the last attempt; every live hold is waited out before each attempt.
        sleep: how a wait is waited (tests pass their own).

    Raises:
        DeadlineExceeded: before an attempt, when the deadline leaves no more than the live hold (or has
            passed); no call is made then.
    """
    counter = attempts if attempts is not None else Attempts()
    slept_until = [0.0]  # the time the retries' own waits have reached: a hold ending by then is waited

    def wait(state: tenacity.RetryCallState) -> float:
        seconds, asked = policy.wait_s(state)
        if asked is not None and holds is not None:
            holds.post(seconds)
        slept_until[0] = max(slept_until[0], time.time()) + seconds
        return seconds

    at_most = tenacity.stop_after_attempt(max(1, policy.max_attempts))

    def stop(state: tenacity.RetryCallState) -> bool:  # attempts spent, or no time left for the wait
        left = deadline() if deadline is not None else None
        late = left is not None and left <= float(getattr(state, "upcoming_sleep", 0.0) or 0.0)
        return bool(at_most(state)) or late

    retrying = tenacity.Retrying(
        wait=wait,
        stop=stop,
        retry=tenacity.retry_if_exception(retryable),
        before_sleep=lambda state: _log_retry(what, policy, state),
        sleep=sleep,
        reraise=True,
    )
    for attempt in retrying:
        slept_until[0] = _wait_out_holds(holds, deadline, what, counter.count + 1, sleep, slept_until[0])
        with attempt:
            counter.count += 1
            return fn()
    raise AssertionError("unreachable")  # pragma: no cover


def _wait_out_holds(
    holds: Holds | None,
    deadline: Callable[[], float | None] | None,
    what: str,
    attempt: int,
    sleep: Callable[[float], None],
    waited_until: float,
) -> float:
    """Wait until no hold on the key is live (again if another process moved it later meanwhile), and return
    the time waited to; or raise ``DeadlineExceeded`` when the deadline would pass first. It raises outside
    tenacity's attempt, so its error is never retried. ``waited_until``: the time already waited to (the
    retry's own wait; a hold ending by then is not waited twice, also when a test's sleep takes no time)."""
    while True:
        now = time.time()
        end = now + (holds.wait_s() if holds is not None else 0.0)  # when the live hold ends
        wait = end - max(now, waited_until)
        wait = wait if wait > 1e-3 else 0.0
        left = deadline() if deadline is not None else None
        if left is not None and left <= wait:
            if wait > 0:
                raise DeadlineExceeded(
                    f"{what}: a Retry-After hold on its API key ends in {wait:.3g} s, past the question's "
                    f"deadline ({max(left, 0.0):.3g} s left; --question-timeout); no call made"
                )
            raise DeadlineExceeded(f"{what}: the question's deadline (--question-timeout) passed")
        if wait <= 0:
            return waited_until
        hold_log.info(
            "%s: attempt %d waits %.3g s for a Retry-After hold on its API key",
            what,
            attempt,
            wait,
            extra={"hold_what": what, "hold_attempt": attempt, "hold_wait_s": wait},
        )
        waited_until = end
        sleep(wait)


def _log_retry(what: str, policy: RetryPolicy, state: tenacity.RetryCallState) -> None:
    err = state.outcome.exception() if state.outcome else None
    status = status_of(err)
    asked = retry_after_s(err)
    wait = float(state.upcoming_sleep)
    failure = f"HTTP {status}" if status is not None else type(err).__name__
    log.info(
        "%s: %s on attempt %d of %d; retrying in %.3g s%s",
        what,
        failure,
        state.attempt_number,
        policy.max_attempts,
        wait,
        " (Retry-After)" if asked is not None else "",
        extra={
            "retry_what": what,
            "retry_attempt": state.attempt_number,
            "retry_status": status,
            "retry_asked_s": asked,
            "retry_wait_s": wait,
        },
    )
