"""Fixtures of the models tests: the local LLM API server and a client pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench_nb.models.client import LLMClient, set_default_client
from bench_nb.models.settings import ClientSettings
from llm_server import LLMServer, llm_server

__all__ = ["llm_server"]

SECRET = "sk-test-SECRET-do-not-store-4242"


def fast_settings(server: LLMServer, cache: Path | None, **overrides: object) -> ClientSettings:
    """Short timeout and backoff, both APIs pointed at the local server."""
    values: dict[str, object] = {
        "timeout_s": 1.0,
        "max_retries": 3,
        "backoff_initial_s": 0.01,
        "backoff_max_s": 0.05,
        "cache_path": cache,
        "openai_base_url": server.openai_base_url,
        "anthropic_base_url": server.base_url,
        "gemini_base_url": server.openai_base_url,
    }
    values.update(overrides)
    return ClientSettings(**values)  # type: ignore[arg-type]


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> str:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, SECRET)
    return SECRET


@pytest.fixture
def client(llm_server: LLMServer, tmp_path: Path, keys: str) -> Iterator[LLMClient]:
    """A client on the local server with a fresh cache, also installed as the default client."""
    c = LLMClient(fast_settings(llm_server, tmp_path / "llm.sqlite"))
    set_default_client(c)
    yield c
    set_default_client(None)
