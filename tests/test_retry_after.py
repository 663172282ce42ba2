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
