"""The behaviour every cloud adapter shares, each run against its fake API through the official SDK:
ingest → indexing over several polls → search with the run's k → clear; rate limits, transient failures,
failed documents, timeouts, the concurrency limit, keys and container names."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import replace

import pytest
from cloud_adapters import Cloud
from fake_services import FAIL_MARKER
from provider_fixtures import CONVERSATION

from bench_nb.errors import ProviderError
from bench_nb.providers import get_provider
from bench_nb.providers.cloud import CloudCallError
from bench_nb.records import Message
from bench_nb.runner.retry import is_retryable

TAG = "conv-1-run-20260101T000000000Z"
QUESTION = "What is the puppy called?"


def _requested_k(cloud: Cloud) -> list[int]:
    out = []
    for r in cloud.service.calls("POST", cloud.adapter.search_path):
        if cloud.adapter.name == "supermemory":
            out.append(r.body["limit"])
        elif cloud.adapter.name == "mem0":
            out.append(r.body["top_k"])
        else:
            out.append(int(r.query["page_size"]))
    return out


def _ingested(cloud: Cloud, **settings: object):  # type: ignore[no-untyped-def]
    provider = cloud.make(**settings)
    result = provider.ingest(TAG, CONVERSATION)
    provider.await_indexing(TAG, result, timeout_s=10)
    return provider, result


def _stored_sessions(cloud: Cloud) -> int:
    """How many session batches the fake API holds (each session stored once means len(CONVERSATION))."""
    svc = cloud.service
    if cloud.adapter.name == "supermemory":
        return sum(len(docs) for docs in svc.namespaces.values())
    if cloud.adapter.name == "mem0":
        return sum(len(events) for events in svc.users.values())
    return sum(len(u.threads) for u in svc.users.values())


def test_round_trip_normalises_hits_and_clear_deletes_the_container(cloud: Cloud) -> None:
    provider, result = _ingested(cloud)
    assert result.document_ids or result.task_ids
    status_reads = cloud.service.calls("GET", cloud.adapter.status_path)
    assert len(status_reads) >= cloud.service.polls_to_ready * len(
        CONVERSATION
    )  # indexing took several polls

    hits = provider.search(TAG, QUESTION, 2)
    assert _requested_k(cloud) == [2]
    assert 1 <= len(hits) <= 2
    top = hits[0]
    assert "puppy" in top.text.lower()
    assert isinstance(top.score, float) and 0 < top.score <= 1
    assert top.date is not None and top.date.startswith("2023-05-08")
    assert top.raw and top.hit_id
    if cloud.adapter.name != "zep":  # Zep's facts do not say which session they came from
        assert top.session_id == "s1"
    assert cloud.service.violations == []

    provider.clear(TAG)
    assert _stored_sessions(cloud) == 0
    provider.clear(TAG)  # clearing what is gone is fine
    assert cloud.service.violations == []


@pytest.mark.parametrize("k", [1, 4])
def test_search_asks_for_exactly_the_runs_k(cloud: Cloud, k: int) -> None:
    provider, _ = _ingested(cloud)
    hits = provider.search(TAG, "Sam knee marathon training Biscuit", k)
    assert _requested_k(cloud) == [k]
    assert len(hits) == k  # the fakes hold more than four items, so exactly k come back
    with pytest.raises(ProviderError, match="positive integer"):
        provider.search(TAG, QUESTION, 0)


def test_a_429_waits_for_retry_after(cloud: Cloud) -> None:
    cloud.service.inject("POST", cloud.adapter.add_path, 429, headers={"Retry-After": "1"})
    _provider, _ = _ingested(cloud, retry_initial_s=0.01)
    adds = cloud.service.calls("POST", cloud.adapter.add_path)
    assert len(adds) == len(CONVERSATION) + 1  # the refused call, then every session once
    assert adds[1].at - adds[0].at >= 0.95  # the Retry-After, not the 0.01 s backoff
    assert _stored_sessions(cloud) == len(CONVERSATION)


def test_a_long_ingest_survives_5xx_and_dropped_connections(cloud: Cloud) -> None:
    cloud.service.inject("POST", cloud.adapter.add_path, 503, times=2)
    cloud.service.inject("POST", cloud.adapter.add_path, 0)  # the connection drops without an answer
    cloud.service.inject("GET", cloud.adapter.status_path, 502)
    provider, _ = _ingested(cloud)
    assert _stored_sessions(cloud) == len(CONVERSATION)
    assert len(cloud.service.calls("POST", cloud.adapter.add_path)) == len(CONVERSATION) + 3
    assert provider.search(TAG, QUESTION, 3)


@pytest.mark.parametrize("max_retries", [0, 2])
def test_gives_up_after_its_retries_with_an_error_the_runner_does_not_repeat(
    cloud: Cloud, max_retries: int
) -> None:
    provider, _ = _ingested(cloud, max_retries=max_retries)
    cloud.service.inject("POST", cloud.adapter.search_path, 500, times=10)
    with pytest.raises(CloudCallError) as info:
        provider.search(TAG, QUESTION, 3)
    assert (
        len(cloud.service.calls("POST", cloud.adapter.search_path)) == max_retries + 1
    )  # SDK retries are off
    assert (
        info.value.status == 500 and "HTTP 500" in str(info.value) and cloud.adapter.name in str(info.value)
    )
    assert cloud.service.key not in str(info.value)
    assert is_retryable(info.value) is False


def test_a_client_error_is_not_retried(cloud: Cloud) -> None:
    provider = cloud.make()
    cloud.service.inject("POST", cloud.adapter.add_path, 400, body={"error": "bad request"})
    with pytest.raises(CloudCallError, match="HTTP 400") as info:
        provider.ingest(TAG, CONVERSATION)
    assert info.value.status == 400
    assert len(cloud.service.calls("POST", cloud.adapter.add_path)) == 1


def test_a_failed_document_fails_indexing(cloud: Cloud) -> None:
    provider = cloud.make()
    bad = replace(CONVERSATION[1], messages=(*CONVERSATION[1].messages, Message("Sam", FAIL_MARKER, "D2:6")))
    result = provider.ingest(TAG, (CONVERSATION[0], bad, CONVERSATION[2]))
    with pytest.raises(ProviderError, match="fail") as info:
        provider.await_indexing(TAG, result, timeout_s=10)
    assert is_retryable(info.value) is False


def test_indexing_times_out_with_a_provider_error(cloud: Cloud) -> None:
    cloud.service.polls_to_ready = 10**6
    provider = cloud.make(poll_initial_s=0.02, poll_max_s=0.1)
    result = provider.ingest(TAG, CONVERSATION)
    start = time.monotonic()
    with pytest.raises(ProviderError, match=r"not ready after 0.5 s \((\d+) polls\)") as info:
        provider.await_indexing(TAG, result, timeout_s=0.5)
    assert time.monotonic() - start >= 0.5  # it waited the whole timeout (no upper bound: a busy machine)
    polls = len(cloud.service.calls("GET", cloud.adapter.status_path)) // len(CONVERSATION)
    assert f"({polls} polls)" in str(info.value)
    # backoff 0.02, 0.04, 0.08, 0.1, 0.1, ...: at most 9 polls fit in 0.5 s; a slow machine makes fewer
    assert 1 <= polls <= 9


@pytest.mark.parametrize("limit", [2, 6])
def test_the_concurrency_limit_bounds_calls_in_flight(cloud: Cloud, limit: int) -> None:
    provider, _ = _ingested(cloud, max_concurrency=limit)
    cloud.service.delay_s = 0.05
    cloud.service.max_in_flight = 0
    threads = [threading.Thread(target=provider.search, args=(TAG, QUESTION, 3)) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cloud.service.calls("POST", cloud.adapter.search_path)) == 12
    if limit == 2:
        assert cloud.service.max_in_flight == 2
    else:
        assert cloud.service.max_in_flight > 2  # the limit, not the test, is what held it at 2


def test_a_missing_key_names_the_environment_variable(cloud: Cloud, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cloud.adapter.key_env)
    with pytest.raises(ProviderError, match=cloud.adapter.key_env):
        get_provider(cloud.adapter.name, run_dir="unused")
    with pytest.raises(ProviderError, match="does not take setting"):
        get_provider(cloud.adapter.name, run_dir="unused", api_key="sk-never-a-setting")


def test_the_base_url_setting_wins_over_the_environment(
    cloud: Cloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cloud.adapter.url_env, "http://127.0.0.1:9")  # nothing listens there
    provider = cloud.make(base_url=cloud.service.url)
    provider.ingest(TAG, CONVERSATION[:1])
    assert cloud.service.calls("POST", cloud.adapter.add_path)


def test_two_runs_never_share_a_container(cloud: Cloud) -> None:
    provider = cloud.make()
    odd = "conv/26 é?" + "x" * 300 + "-compare-locomo-20260101T000000000Z-" + cloud.adapter.name
    tags = ["conv-26-run-a", "conv-26-run-b", odd, odd.replace("-compare", "-compare2")]
    for tag in tags:
        provider.ingest(tag, CONVERSATION[:1])
    if cloud.adapter.name == "supermemory":
        names = set(cloud.service.namespaces)
    elif cloud.adapter.name == "mem0":
        names = set(cloud.service.users)
    else:
        names = {u.user_id for u in cloud.service.users.values()}
    assert len(names) == len(tags)
    assert {"conv-26-run-a", "conv-26-run-b"} <= names  # names that fit are kept as they are
    limit = 200 if cloud.adapter.name == "zep" else 100
    assert all(len(n) <= limit and n.isascii() and "/" not in n and " " not in n for n in names)
    assert cloud.service.violations == []


def test_a_missing_sdk_is_named_with_the_install_hint(cloud: Cloud, monkeypatch: pytest.MonkeyPatch) -> None:
    sdk = {"mem0": "mem0.client.main", "zep": "zep_cloud", "supermemory": "supermemory"}[cloud.adapter.name]
    monkeypatch.setitem(sys.modules, sdk, None)  # importing it fails, as when the extra is not installed
    with pytest.raises(
        ProviderError, match=rf"provider '{cloud.adapter.name}' needs its SDK .*install it with"
    ):
        _ = cloud.make().client
