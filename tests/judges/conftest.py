"""Fixtures of the judges tests: the local LLM API server (``tests/llm_server.py``, real HTTP on 127.0.0.1)
and a client pointed at it with a fresh cache, the way every model judge test talks to its model."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_nb.models.client import LLMClient
from bench_nb.models.settings import ClientSettings
from llm_server import LLMServer, llm_server

__all__ = ["llm_server"]


@pytest.fixture
def client_settings(llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ClientSettings:
    """Settings for the local server: OpenAI and Anthropic endpoints on it, test keys, short timeouts, two
    quick HTTP retries, the cache in ``tmp_path`` (a second client from them shares the first's cache)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    return ClientSettings(
        timeout_s=1.0,
        max_retries=2,
        backoff_initial_s=0.01,
        backoff_max_s=0.02,
        cache_path=tmp_path / "llm.sqlite",
        openai_base_url=llm_server.openai_base_url,
        anthropic_base_url=llm_server.base_url,
    )


@pytest.fixture
def client(client_settings: ClientSettings) -> LLMClient:
    return LLMClient(client_settings)
