"""One reader of an HTTP error's status and Retry-After, for the LLM client, the cloud providers and the runner."""

from __future__ import annotations

import email.utils
import time

import httpx

from bench_nb.retry_after import retry_after_s, status_of


class Resp:
    def __init__(self, headers: object, status_code: int = 429) -> None:
        self.headers = headers
        self.status_code = status_code


class Err(Exception):
    def __init__(self, headers: object, status_code: int = 429) -> None:
        self.response = Resp(headers, status_code)


class Mem0Err(Exception):
    def __init__(self, info: dict[str, object]) -> None:
        self.debug_info = info


def test_seconds_milliseconds_and_dates() -> None:
    assert retry_after_s(Err({"retry-after": "3"})) == 3.0
    assert retry_after_s(Err({"retry-after-ms": "250", "retry-after": "3"})) == 0.25
    assert retry_after_s(Err({"Retry-After": "1.5"})) == 1.5  # any case
    assert retry_after_s(Err(httpx.Headers({"Retry-After": "2"}))) == 2.0
    assert retry_after_s(Err({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # in the past
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after_s(Err({"retry-after": later})) or 0) <= 30
    assert retry_after_s(Mem0Err({"retry_after": 4})) == 4.0


def test_no_wait_named_is_none() -> None:
    assert retry_after_s(Err({})) is None
    assert retry_after_s(Err({"retry-after": "soon"})) is None
    assert retry_after_s(Err({"retry-after": "-5"})) == 0.0
    assert retry_after_s(ValueError()) is None and retry_after_s(None) is None


def test_status_from_the_error_its_response_or_mem0s_debug_info() -> None:
    assert status_of(Err({}, 503)) == 503
    assert status_of(Mem0Err({"status_code": 429})) == 429
    assert status_of(ValueError()) is None and status_of(None) is None


def _too_many(after: str) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/add")
    response = httpx.Response(429, headers={"Retry-After": after}, request=request)
    return httpx.HTTPStatusError("429 Too Many Requests", request=request, response=response)


def test_a_retry_after_holds_back_other_callers_of_the_same_key_through_the_board() -> None:
    from bench_nb.providers.cloud.common import Calls
    from bench_nb.retry_after import HoldTable, budget_key, set_hold_board

    board = HoldTable()
    key = budget_key("zep", "sk-test-not-a-real-key")
    assert "sk-test" not in key and key.startswith("zep:")
    previous = set_hold_board(board)
    try:
        first = Calls("zep", max_concurrency=1, max_retries=1, initial_s=0.01, max_s=0.01, budget=key)
        other = Calls("zep", max_concurrency=1, max_retries=0, initial_s=0.01, max_s=0.01, budget=key)
        tries: list[float] = []

        def add() -> str:
            tries.append(time.time())
            if len(tries) == 1:
                raise _too_many("1")
            return "ok"

        assert first("add", add) == "ok"
        until = board.not_before(key)
        assert until >= tries[0] + 0.99  # the hold the 429 posted
        assert board.not_before("mem0:" + key.split(":")[1]) == 0.0  # another provider's budget is free
        board.hold(key, time.time() + 1)  # as another process would
        held = board.not_before(key)
        started: list[float] = []
        assert other("search", lambda: started.append(time.time()) or "ok") == "ok"
        assert started[0] >= held  # another Calls object with the key waited for the hold
        board.hold(key, 0.0)  # a hold never moves earlier
        assert board.not_before(key) == held
    finally:
        set_hold_board(previous)
