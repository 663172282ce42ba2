"""Client settings for the models tests: short timeouts, both APIs pointed at the local server."""

from __future__ import annotations

from pathlib import Path

from bench_nb.models.settings import ClientSettings
from llm_server import LLMServer

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
