"""The one retry policy (bench_nb.retry_policy): its waits, stops and hooks, observed through an injected sleep
and its log records; real httpx errors carry the statuses and Retry-After headers."""

from __future__ import annotations

import logging
import time

import httpx
import pytest

from bench_nb.errors import DeadlineExceeded
from bench_nb.retry_after import Holds, HoldTable, set_hold_board
from bench_nb.retry_policy import (
    Attempts,
    RetryPolicy,
    retry_call,
    transient_status,
    transport_failure,
)


def _http_error(status: int, headers: dict[str, str] | None = None) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/call")
    response = httpx.Response(status, headers=headers or {}, request=request)
    return httpx.HTTPStatusError(f"HTTP {status}", request=request, response=response)


def _failing(*errors: BaseException, result: str = "ok"):  # type: ignore[no-untyped-def]
    """A call that raises ``errors`` one per call, then returns ``result``."""
    queue = list(errors)

    def fn() -> str:
        if queue:
            raise queue.pop(0)
        return result

    return fn


def _http_retryable(err: BaseException) -> bool:
    return isinstance(err, httpx.HTTPStatusError) and transient_status(err.response.status_code)


NO_JITTER = RetryPolicy(max_attempts=6, initial_s=0.5, max_s=3.0, jitter_s=0.0, retry_after_cap_s=20.0)


def test_backoff_doubles_up_to_its_cap_and_a_retry_after_replaces_it() -> None:
    slept: list[float] = []
    attempts = Attempts()
    errors = [_http_error(500), _http_error(503), _http_error(429, {"Retry-After": "7"}), _http_error(502)]
    errors.append(_http_error(500))
    out = retry_call(_failing(*errors), NO_JITTER, _http_retryable, attempts=attempts, sleep=slept.append)
    assert out == "ok"
    assert attempts.count == 6
    # 0.5 · 2^(n-1) up to 3 s for the n-th retry; the 429's wait is its header's, whatever n is
    assert slept == [0.5, 1.0, 7.0, 3.0, 3.0]


def test_a_retry_after_is_capped_and_milliseconds_are_read() -> None:
    slept: list[float] = []
    errors = [_http_error(429, {"Retry-After": "3600"}), _http_error(503, {"retry-after-ms": "250"})]
    retry_call(_failing(*errors), NO_JITTER, _http_retryable, sleep=slept.append)
    assert slept == [20.0, 0.25]


@pytest.mark.parametrize(
    ("policy", "bound"),
    [
        (RetryPolicy(max_attempts=4, initial_s=1.0, max_s=30.0, jitter_s=1.0), lambda b: 1.0),
        (
            RetryPolicy(max_attempts=4, initial_s=1.0, max_s=30.0, jitter_s=0.0, jitter_ratio=0.1),
            lambda b: 0.1 * b,
        ),
    ],
    ids=["absolute", "relative"],
)
def test_jitter_stays_within_its_bound_and_varies(policy: RetryPolicy, bound) -> None:  # type: ignore[no-untyped-def]
    extras: list[list[float]] = []
    for _ in range(40):
        slept: list[float] = []
        retry_call(_failing(*[_http_error(500)] * 3), policy, _http_retryable, sleep=slept.append)
        bases = [1.0, 2.0, 4.0]
        assert all(b <= s <= b + bound(b) for b, s in zip(bases, slept, strict=True))
        extras.append([s - b for b, s in zip(bases, slept, strict=True)])
    assert len({tuple(e) for e in extras}) > 1  # random, not a constant offset


def test_gives_up_after_max_attempts_and_reraises_the_last_error() -> None:
    slept: list[float] = []
    attempts = Attempts()
    last = _http_error(502)
    with pytest.raises(httpx.HTTPStatusError) as info:
        retry_call(
            _failing(_http_error(500), _http_error(503), last),
            RetryPolicy(max_attempts=3, initial_s=0.5, max_s=3.0, jitter_s=0.0),
            _http_retryable,
            attempts=attempts,
            sleep=slept.append,
        )
    assert info.value is last
    assert (attempts.count, slept) == (3, [0.5, 1.0])


def test_an_error_the_call_site_does_not_accept_fails_at_once() -> None:
    slept: list[float] = []
    attempts = Attempts()
    with pytest.raises(httpx.HTTPStatusError):
        retry_call(
            _failing(_http_error(400)), NO_JITTER, _http_retryable, attempts=attempts, sleep=slept.append
        )
    assert (attempts.count, slept) == (1, [])


def test_no_retry_waits_past_the_deadline() -> None:
    slept: list[float] = []
    attempts = Attempts()
    left = [5.0]
    with pytest.raises(httpx.HTTPStatusError) as info:
        retry_call(
            _failing(_http_error(500), _http_error(429, {"Retry-After": "9"})),
            NO_JITTER,
            _http_retryable,
            attempts=attempts,
            deadline=lambda: left[0],
            sleep=slept.append,
        )
    assert info.value.response.status_code == 429  # 9 s would end past the 5 s left: given up at once
    assert (attempts.count, slept) == (2, [0.5])
    # no deadline (None) leaves the policy alone
    retry_call(
        _failing(_http_error(429, {"Retry-After": "9"})),
        NO_JITTER,
        _http_retryable,
        deadline=lambda: None,
        sleep=slept.append,
    )
    assert slept == [0.5, 9.0]


def test_a_wait_asked_for_is_posted_as_a_hold_also_after_the_last_attempt() -> None:
    holds = Holds()
    slept: list[float] = []
    errors = [
        _http_error(429, {"Retry-After": "2"}),
        _http_error(500),
        _http_error(429, {"Retry-After": "60"}),
    ]
    policy = RetryPolicy(max_attempts=3, initial_s=0.5, max_s=3.0, jitter_s=0.0, retry_after_cap_s=30.0)
    before = time.time()
    with pytest.raises(httpx.HTTPStatusError):
        retry_call(_failing(*errors), policy, _http_retryable, holds=holds, sleep=slept.append)
    # the hold the first 429 posted is the retry's own wait: not waited a second time
    assert slept == [2.0, 1.0]
    # the last 429's hold is posted (capped) though no retry follows it
    assert 29.0 <= holds.wait_s() <= 30.0 and time.time() - before < 1.0


def test_a_live_hold_is_waited_out_before_the_first_attempt(caplog: pytest.LogCaptureFixture) -> None:
    holds = Holds("openai@127.0.0.1/v1:0123456789ab")
    holds.post(5.0)  # as another thread's 429 would
    slept: list[float] = []
    attempts = Attempts()
    with caplog.at_level(logging.INFO, logger="bench_nb.retry"):
        out = retry_call(
            _failing(),
            NO_JITTER,
            _http_retryable,
            attempts=attempts,
            what="judge",
            holds=holds,
            sleep=slept.append,
        )
    assert (out, attempts.count) == ("ok", 1)
    assert len(slept) == 1 and 4.0 <= slept[0] <= 5.0
    [record] = [r for r in caplog.records if r.name == "bench_nb.retry.hold"]
    assert (record.hold_what, record.hold_attempt, record.hold_wait_s) == ("judge", 1, slept[0])  # type: ignore[attr-defined]
    assert "0123456789ab" not in caplog.text  # not even the key's hash


def test_a_hold_moved_later_while_waiting_is_waited_again() -> None:
    key = "zep:0123456789ab"
    board = HoldTable()
    previous = set_hold_board(board)
    try:
        holds = Holds(key)
        board.hold(key, time.time() + 5)
        slept: list[float] = []

        def sleep(seconds: float) -> None:
            slept.append(seconds)
            if len(slept) == 1:
                board.hold(key, time.time() + 10)  # another process met a longer Retry-After meanwhile

        retry_call(_failing(), NO_JITTER, _http_retryable, holds=holds, sleep=sleep)
        # the second wait is the rest: from the first hold's end to the new one's
        assert len(slept) == 2 and 4.0 <= slept[0] <= 5.0 and 4.9 <= slept[1] <= 6.0
    finally:
        set_hold_board(previous)


def test_a_hold_past_the_deadline_fails_at_once_without_calling() -> None:
    holds = Holds()
    holds.post(30.0)
    slept: list[float] = []
    attempts = Attempts()
    with pytest.raises(DeadlineExceeded) as info:
        retry_call(
            _failing(),
            NO_JITTER,
            _http_retryable,
            attempts=attempts,
            what="gpt-4o-mini",
            deadline=lambda: 5.0,
            holds=holds,
            sleep=slept.append,
        )
    assert (attempts.count, slept) == (0, [])
    message = str(info.value)
    assert message.startswith("gpt-4o-mini: a Retry-After hold on its API key ends in ")
    assert "(5 s left; --question-timeout); no call made" in message
    # a hold the deadline outlasts is waited, then the call is made
    out = retry_call(
        _failing(), NO_JITTER, _http_retryable, deadline=lambda: 60.0, holds=holds, sleep=slept.append
    )
    assert out == "ok" and len(slept) == 1
    # no hold, but the deadline has passed: no call either
    with pytest.raises(DeadlineExceeded, match=r"deadline \(--question-timeout\) passed"):
        retry_call(_failing(), NO_JITTER, _http_retryable, attempts=attempts, deadline=lambda: 0.0)
    assert attempts.count == 0


def test_each_retry_is_logged_with_its_wait_and_never_the_errors_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret_error = _http_error(500)
    secret_error.args = ("sk-secret-in-a-message",)
    errors = [_http_error(429, {"Retry-After": "2"}), secret_error, ConnectionError("reset")]
    with caplog.at_level(logging.INFO, logger="bench_nb.retry"):
        retry_call(_failing(*errors), NO_JITTER, lambda e: True, what="zep: search", sleep=lambda s: None)
    records = [r for r in caplog.records if r.name == "bench_nb.retry"]
    got = [(r.retry_what, r.retry_attempt, r.retry_status, r.retry_asked_s, r.retry_wait_s) for r in records]  # type: ignore[attr-defined]
    assert got == [
        ("zep: search", 1, 429, 2.0, 2.0),
        ("zep: search", 2, 500, None, 1.0),
        ("zep: search", 3, None, None, 2.0),
    ]
    assert records[0].getMessage() == "zep: search: HTTP 429 on attempt 1 of 6; retrying in 2 s (Retry-After)"
    assert "ConnectionError on attempt 3" in records[2].getMessage()
    assert "sk-secret" not in caplog.text


def test_transient_statuses_and_transport_failures() -> None:
    assert [s for s in (400, 401, 404, 408, 409, 422, 425, 429, 500, 503, 599) if transient_status(s)] == [
        408,
        425,
        429,
        500,
        503,
        599,
    ]
    assert transient_status(409, also={409}) and not transient_status(409)
    request = httpx.Request("GET", "http://127.0.0.1/")
    assert transport_failure(httpx.ConnectError("refused", request=request))
    assert transport_failure(TimeoutError()) and not transport_failure(ValueError())
    try:
        try:
            raise httpx.ReadTimeout("slow", request=request)
        except httpx.ReadTimeout as err:
            raise RuntimeError("the SDK's own error") from err
    except RuntimeError as wrapped:
        assert not transport_failure(wrapped)  # depth 1: the error itself only
        assert transport_failure(wrapped, depth=2)  # an SDK's wrapper of a timeout
