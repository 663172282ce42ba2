"""One call to a model: the official SDKs, retries, the response cache, tokens and cost.

    from bench_nb.models.client import complete
    reply = complete("gpt-4o-mini", [{"role": "user", "content": "Say hi"}])
    reply.text, reply.input_tokens, reply.output_tokens, reply.cost_usd, reply.cached

Retries are ours (the one policy of ``bench_nb.retry_policy``, built by ``ClientSettings.retry_policy``; the
SDKs' own are turned off so the behaviour is one, tested, thing): a 429 waits what its ``Retry-After`` (or
``retry-after-ms``) header says; 5xx, 408/409/425, timeouts, dropped connections and unreadable bodies back off
exponentially with jitter. Other errors (400, 401, 404) fail at once. What still
fails raises ``ModelError`` naming the model, the attempts made and the last error.

A ``Retry-After`` is also a hold on the endpoint and API key it was met with (``retry_after.Holds``, keyed by
the API, the base URL's host and path, and a sha256 prefix of the key): every call through this client with
that endpoint and key waits it out first, and on a sweep's Ray tasks every task's calls do (the board of
``retry_after.set_hold_board``). Under the question deadline a hold that would end past it raises
``DeadlineExceeded`` at once, without calling.
"""

from __future__ import annotations

import json as jsonlib
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx
import openai

from bench_nb.errors import DeadlineExceeded, HoldBoardLost, ModelError
from bench_nb.models.aliases import GEMINI_BASE_URL, ModelSpec, check_key, resolve_model
from bench_nb.models.cache import ResponseCache
from bench_nb.models.deadline import attempt_timeout, exceeded, remaining
from bench_nb.models.prices import cost_usd
from bench_nb.models.settings import ClientSettings
from bench_nb.redaction import redact
from bench_nb.retry_after import Holds, budget_key
from bench_nb.retry_policy import Attempts, retry_call, transient_status

Messages = Sequence[Mapping[str, str]]
DEFAULT_MAX_TOKENS = 1024
REASONING_MAX_TOKENS = 8192


@dataclass(frozen=True)
class Completion:
    """A model's reply and what it cost.

    Attributes:
        text: the reply text.
        model: the alias asked for; ``model_id`` the id sent to the API.
        input_tokens / output_tokens: as billed by the API (None if it did not say).
        cost_usd: list price of those tokens (see ``bench_nb.models.prices``); None if the price is unknown.
            Also set for cached replies: it is what the reply cost when it was made.
        cached: the reply came from the response cache (no HTTP call, nothing spent now).
        attempts: HTTP attempts made (0 when cached).
        duration_ms: wall time of this call, retries included.
    """

    text: str
    model: str
    model_id: str
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cached: bool
    attempts: int
    duration_ms: float


@dataclass
class UsageTotals:
    """Running totals of calls, tokens and cost (thread-safe)."""

    calls: int = 0
    cached_calls: int = 0
    http_attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, c: Completion) -> None:
        """Add one completion's call, cached call, HTTP attempts, tokens and cost to the totals."""
        with self._lock:
            self.calls += 1
            self.cached_calls += int(c.cached)
            self.http_attempts += c.attempts
            self.input_tokens += c.input_tokens or 0
            self.output_tokens += c.output_tokens or 0
            self.cost_usd += c.cost_usd or 0.0

    def as_dict(self) -> dict[str, float | int]:
        """Plain numbers, for a run's ``benchNb`` record."""
        with self._lock:
            return {
                "calls": self.calls,
                "cachedCalls": self.cached_calls,
                "httpAttempts": self.http_attempts,
                "inputTokens": self.input_tokens,
                "outputTokens": self.output_tokens,
                "costUsd": round(self.cost_usd, 6),
            }


class LLMClient:
    """Calls models by alias with retries and an on-disk cache; thread-safe. No client is process-wide: each run
    makes its own (``RunPlan.client``), and what calls a model outside a run makes its own from the environment."""

    def __init__(self, settings: ClientSettings | None = None) -> None:
        self.settings = settings or ClientSettings.from_env()
        self.usage = UsageTotals()
        self._cache: ResponseCache | None = None
        self._sdk: dict[tuple[str, str | None, str | None], tuple[Any, Holds]] = {}
        self._lock = threading.Lock()

    @property
    def cache(self) -> ResponseCache | None:
        """The response cache (None: caching is off), opened on first use: a client never called opens no file."""
        with self._lock:
            if self._cache is None and self.settings.cache_path:
                self._cache = ResponseCache(self.settings.cache_path)
            return self._cache

    def close(self) -> None:
        """Close the response cache's SQLite file and the SDK clients' connections (opened again if called)."""
        with self._lock:
            for sdk, _ in self._sdk.values():
                sdk.close()
            self._sdk.clear()
            if self._cache is not None:
                self._cache.close()
            self._cache = None

    # -- public ------------------------------------------------------------------------------------------
    def complete(
        self,
        model: str | ModelSpec,
        messages: Messages,
        *,
        json: bool = False,
        temperature: float | None = None,
        max_tokens: int | None = None,
        use_cache: bool = True,
        replicate: int = 1,
    ) -> Completion:
        """Send ``messages`` (``{"role": "system"|"user"|"assistant", "content": str}``) and return the reply.

        Args:
            model: an alias (``gpt-4o-mini``, ``sonnet-4.5``, ``local:llama3``) or a ``ModelSpec``.
            messages: the conversation; system messages go to Anthropic's ``system`` field.
            json: ask for a JSON object (OpenAI-style ``response_format``; Claude is asked by the prompt).
            temperature: default 0 for OpenAI-style APIs (omitted for reasoning models, which do not take it);
                Claude gets the Messages API's default unless one is given.
            max_tokens: reply budget; default 1024 (8192 for reasoning models, whose thinking counts).
            use_cache: read and write the response cache; identical requests made at once (threads or
                processes sharing the cache file) share one call and its reply (``ResponseCache.get_or_call``).
            replicate: the n-th asking of the same request (judge replicates): replicate n > 1 is cached under
                its own key (``"replicate": n`` beside the request), so each replicate is a real call once and
                free on a rerun; replicate 1 keeps the plain request's key. Not sent to the model.

        Raises:
            ModelError: no key, a non-retryable error, or retries exhausted.
        """
        spec = model if isinstance(model, ModelSpec) else resolve_model(model)
        request = self._request(spec, messages, json, temperature, max_tokens)
        key = request if replicate == 1 else {**request, "replicate": int(replicate)}
        started = time.perf_counter()
        attempts = Attempts()
        if use_cache and (cache := self.cache) is not None:  # identical requests at once: one call, one reply
            reply, cached = cache.get_or_call(
                key,
                lambda: self._retrying(spec, lambda: self._send(spec, request), attempts),
                time_left=remaining,
                on_timeout=exceeded,
            )
            text, n_in, n_out = reply.text, reply.input_tokens, reply.output_tokens
        else:
            cached = False
            text, n_in, n_out = self._retrying(spec, lambda: self._send(spec, request), attempts)
        done = Completion(
            text=text,
            model=spec.alias,
            model_id=spec.model_id,
            input_tokens=n_in,
            output_tokens=n_out,
            cost_usd=cost_usd(spec, n_in, n_out),
            cached=cached,
            attempts=0 if cached else attempts.count,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        self.usage.add(done)
        return done

    def count_anthropic_tokens(self, text: str, spec: ModelSpec) -> int:
        """Anthropic's count of ``text`` as one user message (count_tokens API, cached like replies, identical
        counts at once sharing one call)."""
        request = {"api": "anthropic", "endpoint": "count_tokens", "model": spec.model_id, "text": text}

        def count() -> tuple[str, int | None, int | None]:
            sdk = self._endpoint(spec)[0]
            result = sdk.messages.count_tokens(
                model=spec.model_id, messages=[{"role": "user", "content": text}]
            )
            return "", int(result.input_tokens), None

        cache = self.cache
        if cache is None:
            return int(self._retrying(spec, count)[1] or 0)
        reply, _ = cache.get_or_call(
            request, lambda: self._retrying(spec, count), time_left=remaining, on_timeout=exceeded
        )
        return int(reply.input_tokens or 0)

    # -- internals ---------------------------------------------------------------------------------------
    def _request(
        self,
        spec: ModelSpec,
        messages: Messages,
        json: bool,
        temperature: float | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        """The cache key's content: everything that decides the reply, and nothing secret."""
        params: dict[str, Any] = {
            "max_tokens": max_tokens or (REASONING_MAX_TOKENS if spec.reasoning else DEFAULT_MAX_TOKENS)
        }
        if spec.api == "anthropic":
            if temperature is not None:  # the Messages API's default otherwise (the SDK no longer types it)
                params["temperature"] = float(temperature)
        elif not spec.reasoning:  # reasoning models take no temperature
            params["temperature"] = 0.0 if temperature is None else float(temperature)
        if json:
            params["json"] = True
        msgs = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
        return {"api": spec.api, "model": spec.model_id, "messages": msgs, "params": params}

    def _send(self, spec: ModelSpec, request: dict[str, Any]) -> tuple[str, int | None, int | None]:
        sdk = self._endpoint(spec)[0]
        params = request["params"]
        if spec.api == "anthropic":
            system = "\n\n".join(m["content"] for m in request["messages"] if m["role"] == "system")
            kwargs: dict[str, Any] = {
                "model": spec.model_id,
                "max_tokens": params["max_tokens"],
                "messages": [m for m in request["messages"] if m["role"] != "system"],
            }
            if system:
                kwargs["system"] = system
            if "temperature" in params:
                kwargs["extra_body"] = {"temperature": params["temperature"]}
            msg = sdk.messages.create(**kwargs, timeout=attempt_timeout(self.settings.timeout_s))
            text = "".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", "") == "text")
            return text, msg.usage.input_tokens, msg.usage.output_tokens
        kwargs = {"model": spec.model_id, "messages": request["messages"]}
        budget = "max_completion_tokens" if spec.family == "openai" else "max_tokens"
        kwargs[budget] = params["max_tokens"]
        if "temperature" in params:
            kwargs["temperature"] = params["temperature"]
        if params.get("json"):
            kwargs["response_format"] = {"type": "json_object"}
        resp = sdk.chat.completions.create(**kwargs, timeout=attempt_timeout(self.settings.timeout_s))
        if not resp.choices:
            raise ModelError(f"{spec.alias}: the reply has no choices")
        usage = resp.usage
        return (
            resp.choices[0].message.content or "",
            usage.prompt_tokens if usage else None,
            usage.completion_tokens if usage else None,
        )

    def _endpoint(self, spec: ModelSpec) -> tuple[Any, Holds]:
        """The SDK client for ``spec``'s API, base URL and key, and the Retry-After holds on that key."""
        base_url = spec.base_url
        if base_url is None:
            base_url = {
                "openai": self.settings.openai_base_url,
                "anthropic": self.settings.anthropic_base_url,
                "gemini": self.settings.gemini_base_url or GEMINI_BASE_URL,
            }[spec.api]
        slot = (spec.api, base_url, spec.key_env)
        with self._lock:
            if slot not in self._sdk:
                key = check_key(spec)
                common: dict[str, Any] = {"timeout": self.settings.timeout_s, "max_retries": 0}
                sdk: Any
                if spec.api == "anthropic":
                    sdk = anthropic.Anthropic(api_key=key, base_url=base_url, **common)
                else:
                    sdk = openai.OpenAI(api_key=key, base_url=base_url, **common)
                self._sdk[slot] = (sdk, Holds(budget_key(_endpoint_name(spec.api, sdk.base_url), key)))
            return self._sdk[slot]

    def _retrying(self, spec: ModelSpec, fn: Any, attempts: Attempts | None = None) -> Any:
        policy = self.settings.retry_policy()
        made = attempts if attempts is not None else Attempts()
        _, holds = self._endpoint(spec)
        try:
            return retry_call(
                fn,
                policy,
                is_retryable_api_error,
                attempts=made,
                what=spec.alias,
                deadline=remaining,
                holds=holds,
            )
        except (ModelError, DeadlineExceeded, HoldBoardLost):  # a lost board is the sweep's failure, not ours
            raise
        except Exception as err:
            if (left := remaining()) is not None and left <= 0:
                raise exceeded() from err
            retryable = is_retryable_api_error(err)
            cut = retryable and made.count < policy.max_attempts  # the deadline stopped the retries
            raise ModelError(
                _describe(
                    spec, err, retryable=retryable, tries=made.count, of=policy.max_attempts if cut else None
                )
            ) from err


def is_retryable_api_error(err: BaseException | None) -> bool:
    """408, 409, 425, 429, 5xx, timeouts, dropped connections and unreadable (non-JSON or cut) bodies."""
    if isinstance(err, openai.APIStatusError | anthropic.APIStatusError):
        return transient_status(err.status_code, also={409})
    if isinstance(err, openai.APIConnectionError | anthropic.APIConnectionError):
        return True  # includes timeouts and bodies cut short
    return isinstance(err, jsonlib.JSONDecodeError | openai.APIResponseValidationError)


def _endpoint_name(api: str, base_url: Any) -> str:
    """An endpoint's name in its budget key: the API, the base URL's host, port and path (no user, password
    or query, which may hold a secret)."""
    url = httpx.URL(str(base_url))
    port = f":{url.port}" if url.port else ""
    return f"{api}@{url.host}{port}{url.path.rstrip('/')}"


def _describe(
    spec: ModelSpec, err: BaseException, *, retryable: bool, tries: int, of: int | None = None
) -> str:
    status = getattr(err, "status_code", None)
    what = f"HTTP {status}" if status else type(err).__name__
    detail = redact(str(err).splitlines()[0])[:300] if str(err) else ""  # redacted before it is cut
    hint = ""
    if status == 401:
        hint = f" (check {spec.key_env})"
    elif status == 404:
        hint = f" (is {spec.model_id!r} served at this endpoint?)"
    tail = f"after {tries} attempt{'s' if tries != 1 else ''}" if retryable else "(not retryable)"
    if retryable and of is not None:
        tail = f"after {tries} of {of} attempts (the question's deadline left no time for more)"
    return f"{spec.alias}: {what} {tail}: {detail}{hint}"


def set_default_client(client: LLMClient | None) -> None:
    """Removed: there is no process-wide client any more (raises, naming what to do instead)."""
    raise TypeError(
        "set_default_client was removed in bench_nb 0.2 (there is no process-wide LLM client): give the client "
        "to what calls a model, make_llm_answerer(model, client=LLMClient(ClientSettings(...))) or "
        "get_judge(spec, client=...); a run makes its own from the environment (BENCH_NB_LLM_*)"
    )


def complete(model: str | ModelSpec, messages: Messages, **kwargs: Any) -> Completion:
    """``LLMClient().complete(...)`` with a client made from the environment: see ``LLMClient.complete``."""
    return LLMClient().complete(model, messages, **kwargs)
