"""``CloudProvider``: the part every cloud adapter shares (key, base URL, calls, polling, the SDK client)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypedDict

from bench_nb.errors import ProviderError
from bench_nb.providers.cloud.common import INSTALL_HINT, Calls, CloudCallError, api_key, poll
from bench_nb.providers.cloud.common import base_url as resolve_base_url
from bench_nb.retry_after import budget_key

# Defaults of the settings every cloud provider takes (see docs/cloud-providers.md).
MAX_CONCURRENCY = 4
MAX_RETRIES = 5
RETRY_INITIAL_S = 1.0
RETRY_MAX_S = 60.0
REQUEST_TIMEOUT_S = 60.0
POLL_INITIAL_S = 0.5
POLL_MAX_S = 10.0


class CloudSettings(TypedDict, total=False):
    """The settings every cloud provider takes, passed on to ``CloudProvider`` (docs/cloud-providers.md)."""

    base_url: str | None
    max_concurrency: int
    max_retries: int
    retry_initial_s: float
    retry_max_s: float
    request_timeout_s: float
    poll_initial_s: float
    poll_max_s: float


class CloudProvider:
    """Base of the cloud adapters: subclasses set ``name``, ``key_env``, ``url_env`` and ``_make_client``.

    The API key is read from ``key_env`` when the provider is made (a missing key fails before the run
    starts) and is only ever handed to the SDK. The SDK client is made on first use, so making a provider
    costs no request.
    """

    name = "cloud"
    key_env = ""
    url_env = ""
    persistent = True  # memories live at the provider: a resumed run searches what the first attempt stored

    def __init__(
        self,
        run_dir: str | Path,
        *,
        base_url: str | None = None,
        max_concurrency: int = MAX_CONCURRENCY,
        max_retries: int = MAX_RETRIES,
        retry_initial_s: float = RETRY_INITIAL_S,
        retry_max_s: float = RETRY_MAX_S,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
        poll_initial_s: float = POLL_INITIAL_S,
        poll_max_s: float = POLL_MAX_S,
    ) -> None:
        self.run_dir = Path(run_dir)
        self._api_key = api_key(self.key_env, self.name)
        self.base_url = resolve_base_url(base_url, self.url_env)
        self.request_timeout_s = float(request_timeout_s)
        self.poll_initial_s = float(poll_initial_s)
        self.poll_max_s = float(poll_max_s)
        self.calls = Calls(
            self.name,
            max_concurrency=max_concurrency,
            max_retries=max_retries,
            initial_s=retry_initial_s,
            max_s=retry_max_s,
            budget=budget_key(self.name, self._api_key),
        )
        self._client: Any = None
        self._http: Any = None  # the httpx.Client the SDK sends through (closed by ``close``)
        self._client_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    @property
    def client(self) -> Any:
        """The SDK client, made on first use (thread-safe)."""
        with self._client_lock:
            if self._client is None:
                import httpx

                self._http = httpx.Client(timeout=self.request_timeout_s)
                try:
                    self._client = self._make_client(self._api_key, self._http)
                except ImportError as err:
                    raise ProviderError(
                        f"provider {self.name!r} needs its SDK ({err}); install it with: {INSTALL_HINT}"
                    ) from err
            return self._client

    def _make_client(self, key: str, http: Any) -> Any:  # pragma: no cover - every adapter overrides it
        """The SDK client, sending through ``http`` with the SDK's own retries off (an ImportError: no SDK)."""
        raise NotImplementedError

    def call_unless_gone(self, what: str, fn: Callable[[], Any]) -> Any:
        """``self.calls(what, fn)``, or None when the provider answers 404: what was asked for is gone."""
        try:
            return self.calls(what, fn)
        except CloudCallError as err:
            if err.status != 404:
                raise
            return None

    def wait_for_each(
        self, what: str, noun: str, ids: Sequence[str], done: Callable[[str], bool], timeout_s: float
    ) -> int:
        """Poll ``done(id)`` with backoff for every id not done yet until all are (see ``common.poll``; ``done``
        raises ProviderError for one that failed for good); returns the polls made."""
        waiting = list(ids)

        def pending() -> str | None:
            waiting[:] = [i for i in waiting if not done(i)]
            return f"{len(waiting)} of {len(ids)} {noun} (e.g. {waiting[0]})" if waiting else None

        return poll(what, pending, timeout_s=timeout_s, initial_s=self.poll_initial_s, max_s=self.poll_max_s)

    def close(self) -> None:
        """Close the SDK's HTTP connections (the runner calls this at the end of a run)."""
        with self._client_lock:
            http, self._http, self._client = self._http, None, None
        if http is not None:
            http.close()
