"""The adapters under test: registry name, fake API, environment variables and the paths of their calls."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fake_http import FakeService
from fake_services import FakeMem0, FakeSupermemory, FakeZep

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
