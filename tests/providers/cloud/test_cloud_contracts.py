"""Each adapter's requests, checked against what its SDK documents: method, path, auth header, required
fields, and the values we send (dates, ids, k). The fake APIs also reject any request that breaks the
contract (``violations``), and the SDKs parse every answer, so the shapes on both sides are checked."""

from __future__ import annotations

from typing import Any

import pytest
from cloud_adapters import ADAPTERS, FAST
from fake_services import FakeMem0, FakeSupermemory, FakeZep
from provider_fixtures import CONVERSATION

from bench_nb.providers import get_provider
from bench_nb.providers.cloud import CloudProvider

TAG = "conv-1-compare-locomo-20260101T000000000Z-x"
MAY_8 = "2023-05-08T13:56:00Z"  # the first session's date, as UTC


def _run(
    name: str, service: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, **settings: Any
) -> CloudProvider:
    adapter = ADAPTERS[name]
    monkeypatch.setenv(adapter.key_env, service.key)
    monkeypatch.setenv(adapter.url_env, service.url)
    provider = get_provider(name, run_dir=tmp_path, **{**FAST, **settings})
    assert isinstance(provider, CloudProvider)
    result = provider.ingest(TAG, CONVERSATION)
    provider.await_indexing(TAG, result, timeout_s=10)
    provider.search(TAG, "What is the puppy called?", 3)
    provider.clear(TAG)
    provider.close()
    return provider


def _auth_everywhere(service: Any, scheme: str) -> None:
    assert service.requests
    assert {r.headers.get("authorization") for r in service.requests} == {f"{scheme} {service.key}"}
    assert service.violations == []


def test_supermemory_requests(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    with FakeSupermemory() as svc:
        _run("supermemory", svc, monkeypatch, tmp_path)
    _auth_everywhere(svc, "Bearer")
    adds = svc.calls("POST", r"^/ns/[^/]+/document$")
    assert [r.path for r in adds] == [f"/ns/{TAG}/document"] * 3  # one document per session, in its namespace
    first = adds[0].body
    assert (
        first["content"].splitlines()[0]
        == "Priya: Hey Sam! Big news, we adopted a golden retriever puppy last weekend."
    )
    assert first["id"] == "s1" and first["date"] == MAY_8
    assert first["metadata"] == {
        "sessionId": "s1",
        "source": "bench_nb",
        "date": "2023-05-08T13:56:00",
        "messageIds": ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6"],
    }
    assert {r.path for r in svc.calls("GET", "/document/")} == {f"/ns/{TAG}/document/s{i}" for i in (1, 2, 3)}
    (search,) = svc.calls("POST", "/search$")
    assert search.path == f"/ns/{TAG}/search"
    assert search.body == {
        "query": "What is the puppy called?",
        "limit": 3,
        "searchMode": "hybrid",
        "threshold": 0.0,
    }
    assert [r.path for r in svc.calls("DELETE", "")] == [f"/ns/{TAG}"]


def test_supermemory_waits_for_memories_unless_told_not_to(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    # dreamingStatus lags status: with wait_for_memories the adapter keeps polling until both are done.
    with FakeSupermemory(polls_to_ready=2) as svc:
        original = svc.get

        def lagging(req: Any, ns: str, doc_id: str) -> Any:
            status, body = original(req, ns, doc_id)
            if status == 200 and svc.namespaces[ns][doc_id].job.reads < 4:
                body["system"]["dreamingStatus"] = "dreaming"
            return status, body

        svc._routes[1] = (svc._routes[1][0], svc._routes[1][1], lagging)
        _run("supermemory", svc, monkeypatch, tmp_path)
        waited = len(svc.calls("GET", "/document/"))
        svc.requests.clear()
        _run("supermemory", svc, monkeypatch, tmp_path, wait_for_memories=False)
        not_waited = len(svc.calls("GET", "/document/"))
    assert waited == 4 * 3 and not_waited == 2 * 3


def test_mem0_requests(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    with FakeMem0() as svc:
        _run("mem0", svc, monkeypatch, tmp_path)
    _auth_everywhere(svc, "Token")
    assert (
        svc.requests[0].method == "GET" and svc.requests[0].path == "/v1/ping/"
    )  # MemoryClient checks the key
    adds = svc.calls("POST", "^/v3/memories/add/$")
    assert len(adds) == 3
    first = adds[0].body
    assert first["user_id"] == TAG and first["infer"] is True
    assert first["timestamp"] == 1683554160  # 2023-05-08T13:56:00Z
    assert first["messages"][0] == {
        "role": "user",
        "content": "Priya: Hey Sam! Big news, we adopted a golden retriever puppy last weekend.",
    }
    assert first["metadata"]["session_id"] == "s1" and first["metadata"]["date"] == "2023-05-08T13:56:00"
    assert len(svc.calls("GET", "^/v1/event/[^/]+/$")) >= 3 * svc.polls_to_ready
    (search,) = svc.calls("POST", "^/v3/memories/search/$")
    assert search.body == {
        "query": "What is the puppy called?",
        "filters": {"user_id": TAG},
        "top_k": 3,
        "threshold": 0.0,
    }
    assert [r.path for r in svc.calls("DELETE", "")] == [f"/v2/entities/user/{TAG}/"]


def test_zep_requests(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    with FakeZep() as svc:
        _run("zep", svc, monkeypatch, tmp_path)
    _auth_everywhere(svc, "Api-Key")
    assert all(
        r.headers.get("idempotency-key")
        for r in svc.requests
        if r.method == "POST" and r.path != "/users/lookup"
    )
    (create,) = svc.calls("POST", "^/users$")
    assert create.body["user_id"] == TAG
    threads = svc.calls("POST", "^/threads$")
    assert len(threads) == 3 and all(t.body["user_uuid"].startswith("user-") for t in threads)
    adds = svc.calls("POST", "^/threads/[^/]+/messages$")
    assert len(adds) == 3
    first = adds[0].body["messages"][0]
    assert first == {
        "content": "Hey Sam! Big news, we adopted a golden retriever puppy last weekend.",
        "role": "user",
        "name": "Priya",
        "reference_time": MAY_8,
        "metadata": {"session_id": "s1", "message_id": "D1:1", "date": "2023-05-08T13:56:00"},
    }
    (search,) = svc.calls("POST", "/search/")
    assert search.path.endswith("/search/edges") and search.query == {"page_size": "3"}
    assert search.body == {"query": "What is the puppy called?"}
    (delete,) = svc.calls("DELETE", "")
    assert delete.path.startswith("/users/user-")
    assert svc.users == {}  # clear waited for the deletion task to finish


def test_zep_batches_messages_and_retries_with_the_same_idempotency_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    with FakeZep() as svc:
        svc.inject("POST", "/messages$", 503)
        monkeypatch.setenv("ZEP_API_KEY", svc.key)
        monkeypatch.setenv("ZEP_BASE_URL", svc.url)
        provider = get_provider("zep", run_dir=tmp_path, batch_size=4, **FAST)
        result = provider.ingest(TAG, CONVERSATION)
        adds = svc.calls("POST", "/messages$")
        assert [len(r.body["messages"]) for r in adds] == [
            4,
            4,
            2,
            4,
            1,
            3,
        ]  # refused, then sessions of 6, 5, 3
        assert adds[0].headers["idempotency-key"] == adds[1].headers["idempotency-key"]
        assert len({r.headers["idempotency-key"] for r in adds}) == 5
        assert len(result.task_ids) == 5 and len(result.document_ids) == 3
        provider.close()


def test_zep_episode_scope_gives_message_ids(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    with FakeZep() as svc:
        monkeypatch.setenv("ZEP_API_KEY", svc.key)
        monkeypatch.setenv("ZEP_BASE_URL", svc.url)
        provider = get_provider("zep", run_dir=tmp_path, scope="episodes", reranker="cross_encoder", **FAST)
        provider.await_indexing(TAG, provider.ingest(TAG, CONVERSATION), timeout_s=10)
        hits = provider.search(TAG, "What is the name of the puppy Biscuit?", 2)
        (search,) = svc.calls("POST", "/search/")
        provider.close()
    assert search.path.endswith("/search/episodes") and search.body["reranker"] == "cross_encoder"
    assert hits[0].hit_id == "D1:3" and hits[0].session_id == "s1"
    assert hits[0].text == "Priya: His name is Biscuit. He already chewed two of my shoes."
    assert hits[0].raw is not None and hits[0].raw["uuid"].startswith("episode-")


@pytest.mark.parametrize("name", list(ADAPTERS))
def test_bad_settings_are_refused_by_name(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADAPTERS[name].key_env, "k" * 20)
    with pytest.raises(Exception, match="max_concurrency must be at least 1"):
        get_provider(name, run_dir="unused", max_concurrency=0)


def test_registry_names_do_not_clash(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_nb.providers import list_providers
    from bench_nb.providers.cloud import Mem0PlatformProvider, SupermemoryProvider, ZepProvider

    assert {"supermemory", "mem0", "zep", "mem0-local", "sqlite"} <= set(list_providers())
    for name, cls in (
        ("supermemory", SupermemoryProvider),
        ("mem0", Mem0PlatformProvider),
        ("zep", ZepProvider),
    ):
        monkeypatch.setenv(ADAPTERS[name].key_env, "k" * 20)
        provider = get_provider(name, run_dir="unused")
        assert type(provider) is cls and provider.name == name
        assert "k" * 20 not in repr(provider)
