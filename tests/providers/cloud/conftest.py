"""Fixtures of the cloud-provider tests: each adapter against its fake API on 127.0.0.1 (fake_services.py).

``cloud`` is parametrised over the three adapters; ``make_provider(**settings)`` builds the provider with
the key and base URL in the environment (as a user sets them) and fast retry and poll timings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_http import FakeService
from fake_services import FakeMem0, FakeSupermemory, FakeZep

from bench_nb.providers import get_provider
from bench_nb.providers.cloud import CloudProvider

FAST = {"retry_initial_s": 0.01, "retry_max_s": 0.05, "poll_initial_s": 0.01, "poll_max_s": 0.02}


@dataclass(frozen=True)
class Adapter:
    """One adapter under test: its registry name, fake API, and environment variables."""

    name: str
    fake: type[FakeService]
    key_env: str
    url_env: str
    add_path: str  # the path (regex) of the call that stores a session
    status_path: str  # the path (regex) of the call that reads indexing status
    search_path: str


ADAPTERS = {
    "supermemory": Adapter(
        "supermemory",
        FakeSupermemory,
        "SUPERMEMORY_API_KEY",
        "SUPERMEMORY_BASE_URL",
        r"^/ns/[^/]+/document$",
        r"^/ns/[^/]+/document/[^/]+$",
        r"^/ns/[^/]+/search$",
    ),
    "mem0": Adapter(
        "mem0",
        FakeMem0,
        "MEM0_API_KEY",
        "MEM0_BASE_URL",
        r"^/v3/memories/add/$",
        r"^/v1/event/[^/]+/$",
        r"^/v3/memories/search/$",
    ),
    "zep": Adapter(
        "zep",
        FakeZep,
        "ZEP_API_KEY",
        "ZEP_BASE_URL",
        r"^/threads/[^/]+/messages$",
        r"^/tasks/[^/]+$",
        r"^/graphs/[^/]+/search/edges$",
    ),
}


@dataclass
class Cloud:
    adapter: Adapter
    service: Any
    make: Callable[..., CloudProvider]


@pytest.fixture(params=list(ADAPTERS))
def cloud(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cloud]:
    adapter = ADAPTERS[request.param]
    with adapter.fake() as service:
        monkeypatch.setenv(adapter.key_env, service.key)
        monkeypatch.setenv(adapter.url_env, service.url)
        made: list[CloudProvider] = []

        def make(**settings: Any) -> CloudProvider:
            provider = get_provider(adapter.name, run_dir=tmp_path / "run", **{**FAST, **settings})
            assert isinstance(provider, CloudProvider)
            made.append(provider)
            return provider

        yield Cloud(adapter, service, make)
        for p in made:
            p.close()
