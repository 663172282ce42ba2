"""The three retry sites share one policy (bench_nb.retry_policy): the same 429-with-Retry-After / 5xx sequence,
served over real HTTP on 127.0.0.1, gives the same attempts and the same waits (``SEQUENCE``) through the LLM
client (against tests/llm_server.py), each cloud adapter (against its fake API) and the runner's phase retries
(httpx against tests/llm_server.py). Waits are read from the policy's log records (tenacity's before-sleep
hook), not from clocks."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from cloud_adapters import Cloud
from provider_fixtures import CONVERSATION

from bench_nb.errors import DeadlineExceeded, ModelError
from bench_nb.models.client import LLMClient
from bench_nb.models.deadline import deadline
from bench_nb.models.settings import ClientSettings
from bench_nb.providers.cloud import CloudCallError
from bench_nb.retry_after import HoldTable, set_hold_board
from bench_nb.runner.retry import Attempts, RetryPolicy, call_with_retries
from llm_server import Fault, LLMServer, Reply, llm_server

__all__ = ["llm_server"]

TAG = "conv-1-run-20260101T000000000Z"
QUESTION = "What is the puppy called?"
RETRY_AFTER_S = 1.0  # whole seconds, as RFC 9110 writes Retry-After (Mem0's SDK reads no other form)
INITIAL_S = 0.01  # every site: the first backoff, doubling; four attempts in all
MSGS = [{"role": "user", "content": "What did Caroline research?"}]

Observed = list[tuple[int, int | None, float | None, float]]  # attempt, status, asked, wait


def _observe(caplog: pytest.LogCaptureFixture, what: str, call: Callable[[], Any]) -> tuple[Any, Observed]:
    """Run ``call``, and return what it returned (or raised) with the retries the policy logged for calls whose
    name starts with ``what``."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="bench_nb.retry"):
        try:
            out: Any = call()
        except Exception as err:
            out = err
    seen = [r for r in caplog.records if r.name == "bench_nb.retry" and r.retry_what.startswith(what)]  # type: ignore[attr-defined]
    return out, [(r.retry_attempt, r.retry_status, r.retry_asked_s, r.retry_wait_s) for r in seen]  # type: ignore[attr-defined]


def _llm_client(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMClient:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    settings = ClientSettings(
        timeout_s=2.0,
        max_retries=3,
        backoff_initial_s=INITIAL_S,
        backoff_max_s=0.05,
        cache_path=None,
        openai_base_url=server.openai_base_url,
    )
    return LLMClient(settings)


def _runner_call(server: LLMServer) -> Callable[[], Any]:
    """What the runner retries: a phase call that raises httpx's error for a failed response."""
    attempts = Attempts()
    policy = RetryPolicy(max_attempts=4, initial_s=INITIAL_S, max_s=0.05, jitter_s=INITIAL_S)

    def phase() -> int:
        with httpx.Client() as http:
            body = {"model": "gpt-4o-mini", "messages": MSGS}
            http.post(f"{server.openai_base_url}/chat/completions", json=body).raise_for_status()
        return attempts.count

    return lambda: call_with_retries(phase, policy, attempts)


def _assert_policy_waits(observed: Observed, jitter: Callable[[float], float]) -> None:
    """The waits of the sequence 429 (Retry-After), 500, 500: the header's wait exactly, then the backoff
    ``INITIAL_S · 2^(n-1)`` for the n-th retry plus the site's jitter."""
    assert [(a, s, asked) for a, s, asked, _ in observed] == [
        (1, 429, RETRY_AFTER_S),
        (2, 500, None),
        (3, 500, None),
    ]
    assert observed[0][3] == RETRY_AFTER_S
    for n, (*_, wait) in enumerate(observed[1:], start=2):
        base = INITIAL_S * 2 ** (n - 1)
        assert base <= wait <= base + jitter(base)


def test_the_llm_client_and_the_runner_retry_by_the_policy(
    llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.script(Fault("429", retry_after=RETRY_AFTER_S), Fault("500"), Fault("500"), Reply("recovered"))
    client = _llm_client(llm_server, monkeypatch)
    reply, llm = _observe(caplog, "gpt-4o-mini", lambda: client.complete("gpt-4o-mini", MSGS))
    assert (reply.text, reply.attempts, llm_server.count()) == ("recovered", 4, 4)
    _assert_policy_waits(llm, jitter=lambda b: INITIAL_S)  # the LLM client's jitter: up to backoff_initial_s

    llm_server.reset()
    llm_server.script(Fault("429", retry_after=RETRY_AFTER_S), Fault("500"), Fault("500"))
    attempts, runner = _observe(caplog, "runner", _runner_call(llm_server))
    assert (attempts, llm_server.count()) == (4, 4)
    _assert_policy_waits(runner, jitter=lambda b: INITIAL_S)  # the runner's: up to jitter_s

    # giving up: four attempts, three retries logged, the last error reported
    llm_server.reset()
    llm_server.script(*[Fault("500")] * 4)
    err, llm = _observe(caplog, "gpt-4o-mini", lambda: client.complete("gpt-4o-mini", MSGS))
    assert isinstance(err, ModelError) and "HTTP 500 after 4 attempts" in str(err)
    assert [o[:2] for o in llm] == [(1, 500), (2, 500), (3, 500)] and llm_server.count() == 4
    llm_server.reset()
    llm_server.script(*[Fault("500")] * 4)
    err, runner = _observe(caplog, "runner", _runner_call(llm_server))
    assert isinstance(err, httpx.HTTPStatusError) and err.response.status_code == 500
    assert [o[:2] for o in runner] == [(1, 500), (2, 500), (3, 500)] and llm_server.count() == 4


def test_a_cloud_adapter_retries_as_the_llm_client_and_the_runner_do(
    cloud: Cloud, caplog: pytest.LogCaptureFixture
) -> None:
    provider = cloud.make(max_retries=3, retry_initial_s=INITIAL_S)
    provider.ingest(TAG, CONVERSATION)
    path = cloud.adapter.search_path
    cloud.service.inject("POST", path, 429, headers={"Retry-After": f"{RETRY_AFTER_S:g}"})
    cloud.service.inject("POST", path, 500, times=2)
    hits, adapter = _observe(caplog, f"{cloud.adapter.name}: ", lambda: provider.search(TAG, QUESTION, 3))
    assert isinstance(hits, list) and len(cloud.service.calls("POST", path)) == 4
    _assert_policy_waits(adapter, jitter=lambda b: 0.1 * b)  # the cloud adapters' jitter: up to 10%

    cloud.service.inject("POST", path, 500, times=4)
    err, adapter = _observe(caplog, f"{cloud.adapter.name}: ", lambda: provider.search(TAG, QUESTION, 3))
    assert isinstance(err, CloudCallError) and "after 4 attempts" in str(err) and err.status == 500
    assert [o[:2] for o in adapter] == [(1, 500), (2, 500), (3, 500)]
    assert len(cloud.service.calls("POST", path)) == 8


def test_the_llm_client_and_the_runner_stop_at_the_question_deadline(
    llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A Retry-After that would end past the deadline is not waited: one attempt, then the error."""
    client = _llm_client(llm_server, monkeypatch)
    llm_server.script(Fault("429", retry_after=30), Reply("too late"))
    with deadline(5.0):
        err, llm = _observe(caplog, "gpt-4o-mini", lambda: client.complete("gpt-4o-mini", MSGS))
    assert isinstance(err, ModelError) and "HTTP 429" in str(err)
    assert (llm, llm_server.count()) == ([], 1)

    llm_server.reset()
    llm_server.script(Fault("429", retry_after=30), Reply("too late"))
    with deadline(5.0):
        err2, runner = _observe(caplog, "runner", _runner_call(llm_server))
    assert isinstance(err2, httpx.HTTPStatusError) and err2.response.status_code == 429
    assert (runner, llm_server.count()) == ([], 1)


def test_the_attempts_a_deadline_cut_short_are_the_ones_made(
    llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A 500 is retried, then a Retry-After past the deadline stops the retries: the error says 2 of 4
    attempts, not 4."""
    client = _llm_client(llm_server, monkeypatch)
    llm_server.script(Fault("500"), Fault("429", retry_after=30), Reply("too late"))
    with deadline(5.0):
        err, llm = _observe(caplog, "gpt-4o-mini", lambda: client.complete("gpt-4o-mini", MSGS))
    assert isinstance(err, ModelError), err
    assert "HTTP 429 after 2 of 4 attempts (the question's deadline left no time for more)" in str(err)
    assert [o[:2] for o in llm] == [(1, 500)] and llm_server.count() == 2


def test_a_cloud_call_honours_the_question_deadline(cloud: Cloud, caplog: pytest.LogCaptureFixture) -> None:
    """Under the question deadline a cloud call retries no further than it (the error says how many attempts
    were made), and a Retry-After hold that would end past it fails the next call with DeadlineExceeded,
    which reaches the server not at all. Outside a deadline (ingest) the same calls are not bounded."""
    provider = cloud.make(max_retries=3, retry_initial_s=INITIAL_S)
    provider.ingest(TAG, CONVERSATION)
    path = cloud.adapter.search_path
    cloud.service.inject("POST", path, 500)
    cloud.service.inject("POST", path, 429, headers={"Retry-After": "30"})
    with deadline(5.0):
        err, adapter = _observe(caplog, f"{cloud.adapter.name}: ", lambda: provider.search(TAG, QUESTION, 3))
    assert isinstance(err, CloudCallError) and err.status == 429, err
    assert "failed after 2 of 4 attempts (the question's deadline left no time for more): HTTP 429" in str(
        err
    )
    assert [o[:2] for o in adapter] == [(1, 500)] and len(cloud.service.calls("POST", path)) == 2
    # the 429 posted a 30 s hold on the provider's key: the next call under a 5 s deadline is not made
    with deadline(5.0):
        held, _ = _observe(caplog, f"{cloud.adapter.name}: ", lambda: provider.search(TAG, QUESTION, 3))
    assert isinstance(held, DeadlineExceeded), held
    assert "a Retry-After hold on its API key ends in 30 s, past the question's deadline" in str(held)
    left = re.search(r"\(([\d.]+) s left;", str(held))  # the deadline's time left when the hold was seen
    assert left is not None and 0 < float(left.group(1)) <= 5, held
    assert len(cloud.service.calls("POST", path)) == 2


def test_an_llm_retry_after_holds_back_another_client_with_the_same_key(
    llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two clients (as two Ray tasks would be) sharing a board: A meets a 429 with Retry-After 1 s; B, asking
    while A waits, reaches the server only after the hold; a hold past B's deadline fails B at once."""
    board = HoldTable()
    previous = set_hold_board(board)
    try:
        a, b = _llm_client(llm_server, monkeypatch), _llm_client(llm_server, monkeypatch)
        llm_server.script(Fault("429", retry_after=RETRY_AFTER_S), Reply("a, after the hold"), Reply("b"))
        first = threading.Thread(target=lambda: a.complete("gpt-4o-mini", MSGS))
        first.start()
        holds = _wait_for_hold(board)
        [(key, until)] = holds.items()
        reply = b.complete("gpt-4o-mini", [{"role": "user", "content": "B asks"}])
        first.join()
        calls = llm_server.calls
        assert [c.outcome for c in calls] == ["429", "ok", "ok"] and reply.text in ("a, after the hold", "b")
        assert until >= calls[0].at + RETRY_AFTER_S - 0.01  # the hold A's 429 posted
        b_call = next(c for c in calls if "B asks" in str(c.body))
        assert b_call.at >= until  # B waited for A's hold
        assert key.startswith(f"openai@127.0.0.1:{llm_server.port}/v1:") and "sk-test" not in key

        llm_server.reset()
        board.hold(key, time.time() + 30)  # as another task's 429 would
        with deadline(5.0), pytest.raises(DeadlineExceeded, match="hold on its API key"):
            b.complete("gpt-4o-mini", [{"role": "user", "content": "B again"}], use_cache=False)
        assert llm_server.count() == 0
    finally:
        set_hold_board(previous)


def _wait_for_hold(board: HoldTable) -> dict[str, float]:
    stop = time.monotonic() + 10
    while not board.holds():
        assert time.monotonic() < stop, "no hold was posted"
        time.sleep(0.01)
    return board.holds()
