"""Settings of the LLM client: timeouts, retries, the response cache and endpoints, from the environment.

| variable | meaning | default |
|---|---|---|
| ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``) | API keys | none |
| ``OPENAI_BASE_URL`` | OpenAI-compatible endpoint for OpenAI models (a proxy, a local server) | api.openai.com |
| ``ANTHROPIC_BASE_URL`` | Anthropic endpoint | api.anthropic.com |
| ``BENCH_NB_GEMINI_BASE_URL`` | Gemini's OpenAI-compatible endpoint | Google's |
| ``BENCH_NB_LOCAL_BASE_URL`` / ``BENCH_NB_OLLAMA_BASE_URL`` | ``local:`` / ``ollama:`` models | localhost |
| ``BENCH_NB_LLM_CACHE`` | response cache file, or ``off`` | ``data/cache/llm.sqlite`` |
| ``BENCH_NB_LLM_TIMEOUT`` | seconds per HTTP attempt | 120 |
| ``BENCH_NB_LLM_MAX_RETRIES`` | retries after the first attempt | 8 |
| ``BENCH_NB_LLM_BACKOFF`` | first backoff in seconds (doubles, with jitter, up to 60) | 1 |

Keys are read from the environment when a client is built and are never stored in settings, caches, runs or
logs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bench_nb.errors import ModelError
from bench_nb.retry_policy import RetryPolicy

DEFAULT_CACHE_PATH = Path("data/cache/llm.sqlite")


@dataclass(frozen=True)
class ClientSettings:
    """How the client calls models.

    Attributes:
        timeout_s: seconds allowed per HTTP attempt.
        max_retries: retries after the first attempt, on 429, 5xx, timeouts, dropped connections and
            unreadable bodies.
        backoff_initial_s: first exponential backoff (with jitter); doubles per retry up to ``backoff_max_s``.
        backoff_max_s: longest backoff.
        max_retry_after_s: longest wait honoured from a ``Retry-After`` header.
        cache_path: the response cache; None disables it.
        openai_base_url / anthropic_base_url / gemini_base_url: endpoints (None: the SDK's default).
    """

    timeout_s: float = 120.0
    max_retries: int = 8
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    max_retry_after_s: float = 300.0
    cache_path: Path | None = DEFAULT_CACHE_PATH
    openai_base_url: str | None = None
    anthropic_base_url: str | None = None
    gemini_base_url: str | None = None

    def retry_policy(self) -> RetryPolicy:
        """The client's retry policy: ``max_retries`` retries; a backoff from ``backoff_initial_s``, doubling
        up to ``backoff_max_s``, plus up to ``backoff_initial_s`` of jitter; Retry-After honoured up to
        ``max_retry_after_s``."""
        return RetryPolicy(
            max_attempts=self.max_retries + 1,
            initial_s=self.backoff_initial_s,
            max_s=self.backoff_max_s,
            jitter_s=self.backoff_initial_s,
            retry_after_cap_s=self.max_retry_after_s,
        )

    @classmethod
    def from_env(cls, **overrides: object) -> ClientSettings:
        """Settings from ``BENCH_NB_LLM_*`` and the SDKs' base-URL variables; ``overrides`` win."""
        env = os.environ
        cache_env = env.get("BENCH_NB_LLM_CACHE")
        cache: Path | None = DEFAULT_CACHE_PATH
        if cache_env is not None:
            cache = None if cache_env.strip().lower() in ("", "off", "none", "0") else Path(cache_env)
        values: dict[str, object] = {
            "timeout_s": _number(env, "BENCH_NB_LLM_TIMEOUT", 120.0),
            "max_retries": int(_number(env, "BENCH_NB_LLM_MAX_RETRIES", 8)),
            "backoff_initial_s": _number(env, "BENCH_NB_LLM_BACKOFF", 1.0),
            "cache_path": cache,
            "openai_base_url": env.get("OPENAI_BASE_URL") or None,
            "anthropic_base_url": env.get("ANTHROPIC_BASE_URL") or None,
            "gemini_base_url": env.get("BENCH_NB_GEMINI_BASE_URL") or None,
        }
        values.update(overrides)
        if values.get("cache_path") is not None:
            values["cache_path"] = Path(str(values["cache_path"]))
        return cls(**values)  # type: ignore[arg-type]


def _number(env: os._Environ[str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError as err:
        raise ModelError(f"environment variable {name}={raw!r} is not a number") from err
