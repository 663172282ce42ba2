"""The local LLM API server (tests/llm_server.py) wired into the environment the way a user points bench_nb at
an OpenAI-compatible endpoint: OPENAI_BASE_URL, a key, and the response cache in the test's directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_server import LLMServer, llm_server

__all__ = ["LLM_KEY", "llm_env", "llm_server"]

LLM_KEY = "sk-runner-SECRET-777"


@pytest.fixture
def llm_env(llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", LLM_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", str(tmp_path / "cache" / "llm.sqlite"))
    monkeypatch.setenv("BENCH_NB_LLM_TIMEOUT", "2")
    monkeypatch.setenv("BENCH_NB_LLM_BACKOFF", "0.01")
    yield llm_server
