"""Fixtures of the models tests: the local LLM API server and a client pointed at it."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_settings import SECRET, fast_settings

from bench_nb.models.client import LLMClient
from llm_server import LLMServer, llm_server

__all__ = ["llm_server"]


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> str:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, SECRET)
    return SECRET


@pytest.fixture
def client(llm_server: LLMServer, tmp_path: Path, keys: str) -> LLMClient:
    """A client on the local server with a fresh cache (given to what calls a model: there is no default)."""
    return LLMClient(fast_settings(llm_server, tmp_path / "llm.sqlite"))
