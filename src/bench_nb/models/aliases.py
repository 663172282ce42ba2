"""Model aliases: the short names users pass as ``-m`` / ``-j``, resolved to an API, a model id and defaults.

Three wire protocols cover every model:

- ``openai``: OpenAI's Chat Completions (gpt-4o, gpt-4.1, gpt-5, o-series), and any OpenAI-compatible server
  (vLLM, Ollama, LM Studio) through ``base_url``;
- ``anthropic``: Anthropic's Messages API (Claude 4.x);
- ``gemini``: Gemini 2.x through Google's OpenAI-compatible endpoint.

Besides the aliases in ``MODELS``, a name with a prefix selects the API for any model id:
``openai:<id>``, ``anthropic:<id>``, ``gemini:<id>``, ``local:<id>`` (an OpenAI-compatible server at
``$BENCH_NB_LOCAL_BASE_URL``, default vLLM's ``http://localhost:8000/v1``) and ``ollama:<id>``
(``http://localhost:11434/v1``). Bare ids starting with ``gpt-``, ``o1``/``o3``/``o4``, ``claude-`` or
``gemini-`` are recognised too; anything else is an error, never a silent guess.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from bench_nb.errors import ModelError

Api = Literal["openai", "anthropic", "gemini"]
Family = Literal["openai", "anthropic", "google", "local"]

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
VLLM_BASE_URL = "http://localhost:8000/v1"
OLLAMA_BASE_URL = "http://localhost:11434/v1"

#: The prefixes that select an API for any model id (``local:llama3``); a name with one is a model, never a
#: plugin spec ``module:attribute``.
MODEL_PREFIXES = frozenset({"openai", "anthropic", "gemini", "google", "local", "vllm", "ollama"})


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model: what to call, how, and with which defaults.

    Attributes:
        alias: the name the user gave (recorded in runs).
        model_id: the id sent to the API.
        api: the wire protocol (``openai``, ``anthropic`` or ``gemini``).
        family: whose model it is; picks the tokenizer and the price.
        reasoning: a reasoning model (gpt-5, o-series): no temperature, ``max_completion_tokens``.
        base_url: a fixed endpoint (local servers); None uses the API's default or its environment variable.
        key_env: the environment variable holding the API key (None: no key needed).
    """

    alias: str
    model_id: str
    api: Api
    family: Family
    reasoning: bool = False
    base_url: str | None = None
    key_env: str | None = "OPENAI_API_KEY"


def _openai(model_id: str, reasoning: bool = False) -> ModelSpec:
    return ModelSpec(model_id, model_id, "openai", "openai", reasoning=reasoning)


def _claude(alias: str, model_id: str) -> ModelSpec:
    return ModelSpec(alias, model_id, "anthropic", "anthropic", key_env="ANTHROPIC_API_KEY")


def _gemini(model_id: str) -> ModelSpec:
    return ModelSpec(model_id, model_id, "gemini", "google", key_env="GEMINI_API_KEY")


MODELS: dict[str, ModelSpec] = {
    spec.alias: spec
    for spec in (
        _openai("gpt-4o"),
        _openai("gpt-4o-mini"),
        _openai("gpt-4.1"),
        _openai("gpt-4.1-mini"),
        _openai("gpt-4.1-nano"),
        _openai("gpt-5", reasoning=True),
        _openai("gpt-5-mini", reasoning=True),
        _openai("gpt-5-nano", reasoning=True),
        _openai("o1", reasoning=True),
        _openai("o3", reasoning=True),
        _openai("o3-mini", reasoning=True),
        _openai("o4-mini", reasoning=True),
        _claude("sonnet-4", "claude-sonnet-4-20250514"),
        _claude("sonnet-4.5", "claude-sonnet-4-5-20250929"),
        _claude("sonnet-4.6", "claude-sonnet-4-6"),
        _claude("haiku-4.5", "claude-haiku-4-5-20251001"),
        _claude("opus-4", "claude-opus-4-20250514"),
        _claude("opus-4.1", "claude-opus-4-1-20250805"),
        _claude("opus-4.5", "claude-opus-4-5-20251101"),
        _claude("opus-4.6", "claude-opus-4-6"),
        _gemini("gemini-2.0-flash"),
        _gemini("gemini-2.5-flash"),
        _gemini("gemini-2.5-flash-lite"),
        _gemini("gemini-2.5-pro"),
    )
}

_REASONING_PREFIXES = ("gpt-5", "o1", "o3", "o4")


def resolve_model(alias: str, *, base_url: str | None = None) -> ModelSpec:
    """The ``ModelSpec`` of an alias, a prefixed name (``local:llama3``) or a recognised model id.

    Args:
        alias: what the user wrote.
        base_url: an explicit endpoint; it makes the model an OpenAI-compatible one when the alias alone
            does not say which API to use.

    Raises:
        ModelError: the name is not an alias, has no known prefix, and is not a recognised model id.
    """
    name = alias.strip()
    spec = MODELS.get(name.lower())
    if spec is None and ":" in name:
        prefix, _, model_id = name.partition(":")
        spec = _prefixed(prefix.lower(), model_id, name)
    if spec is None:
        lowered = name.lower()
        if lowered.startswith(("gpt-", *_REASONING_PREFIXES)):
            spec = _openai(name, reasoning=lowered.startswith(_REASONING_PREFIXES))
        elif lowered.startswith("claude-"):
            spec = _claude(name, name)
        elif lowered.startswith("gemini-"):
            spec = _gemini(name)
        elif base_url:
            spec = ModelSpec(name, name, "openai", "local", key_env=None)
    if spec is None:
        from bench_nb.registry import did_you_mean

        known = ", ".join(sorted(MODELS))
        raise ModelError(
            f"unknown model {alias!r}{did_you_mean(name, MODELS)}: use an alias ({known}), a prefixed name such as "
            "'openai:<id>', 'anthropic:<id>', 'local:<id>' or 'ollama:<id>', or pass base_url"
        )
    if base_url:
        spec = replace(spec, base_url=base_url)
    return spec


def _prefixed(prefix: str, model_id: str, alias: str) -> ModelSpec | None:
    import os

    if not model_id:
        return None
    if prefix == "openai":
        return replace(_openai(model_id, reasoning=model_id.startswith(_REASONING_PREFIXES)), alias=alias)
    if prefix == "anthropic":
        return _claude(alias, model_id)
    if prefix in ("gemini", "google"):
        return replace(_gemini(model_id), alias=alias)
    if prefix in ("local", "vllm"):
        url = os.environ.get("BENCH_NB_LOCAL_BASE_URL", VLLM_BASE_URL)
        return ModelSpec(alias, model_id, "openai", "local", base_url=url, key_env=None)
    if prefix == "ollama":
        url = os.environ.get("BENCH_NB_OLLAMA_BASE_URL", OLLAMA_BASE_URL)
        return ModelSpec(alias, model_id, "openai", "local", base_url=url, key_env=None)
    return None


def unknown_name(kind: str, name: str, offline: tuple[str, ...]) -> str:
    """The message for an answerer or judge name that is neither built in nor a model: the nearest of both
    (difflib), the offline ones, then the model aliases, so ``-j contans`` says ``contains``."""
    from bench_nb.registry import did_you_mean

    hint = did_you_mean(name, [*offline, *MODELS])
    return (
        f"unknown {kind} {name!r}{hint}: offline, no key needed: {', '.join(sorted(offline))}; or a model: "
        f"{', '.join(sorted(MODELS))}, or a prefixed name such as 'openai:<id>', 'anthropic:<id>', "
        "'local:<id>' or 'ollama:<id>'"
    )


def check_key(spec: ModelSpec) -> str:
    """The API key ``spec`` is called with, from the environment; a run checks its answerer's and judges' keys
    before ingest, so nothing is paid for before the first answer would fail.

    Raises:
        ModelError: the key variable is unset, naming it.
    """
    if spec.key_env is None:
        return os.environ.get("OPENAI_API_KEY") or "not-needed"  # local servers ignore it
    key = os.environ.get(spec.key_env)
    if not key and spec.key_env == "GEMINI_API_KEY":
        key = os.environ.get("GOOGLE_API_KEY")
    if not key:
        raise ModelError(
            f"{spec.key_env} is not set: export it to call {spec.alias!r} (keys come from the environment only)"
        )
    return key


def missing_credentials(answerer: Any, judges: Sequence[Any]) -> list[str]:
    """Every API key the answerer and the judges would call a model with (their ``spec``) that the
    environment does not hold, one line each naming the answerer or judge and the variable."""
    missing = []
    roles = [("answerer", answerer)] if answerer is not None else []
    for role, obj in (*roles, *(("judge", j) for j in judges)):
        spec = getattr(obj, "spec", None)
        if isinstance(spec, ModelSpec):
            try:
                check_key(spec)
            except ModelError as err:
                missing.append(f"{role} {getattr(obj, 'name', spec.alias)!r}: {err}")
    return missing


def check_credentials(answerer: Any, judges: Sequence[Any]) -> None:
    """Check the API key of every model the answerer and the judges call (their ``spec``), before a run
    ingests anything (or a rejudge grades anything): a missing key fails at once, not every question at its
    answer or evaluate phase.

    Raises:
        ModelError: keys the environment does not hold, every one named with its answerer or judge.
    """
    missing = missing_credentials(answerer, judges)
    if missing:
        raise ModelError("; ".join(missing))
