"""What a failed HTTP call says about trying again: its status, and the wait it asks for (``Retry-After``).

One reader for the one retry policy (``retry_policy``, which the LLM client ``models.client``, the cloud
providers ``providers.cloud.common`` and the runner's ``runner.retry`` use), whatever SDK raised the error: OpenAI's and
Anthropic's (``response.headers``), httpx's, Fern's (``status_code``, ``headers``) and mem0's (``debug_info``).
A Retry-After is also a hold on the API key it was met with: ``Holds`` keeps one key's holds for a call site
(the threads of one process) and, through a ``HoldBoard``, shares them between processes (a sweep's runs on
its local pool or on Ray: ``set_hold_board``); ``retry_policy.retry_call(holds=...)`` posts and waits them out.
"""

from __future__ import annotations

import email.utils
import hashlib
import threading
import time
from collections.abc import Mapping
from typing import Any, Protocol


def status_of(err: BaseException | None) -> int | None:
    """The HTTP status an error carries: ``status_code`` on it or its ``response``, or mem0's ``debug_info``."""
    if err is None:
        return None
    for obj in (err, getattr(err, "response", None)):
        code = getattr(obj, "status_code", None)
        if isinstance(code, int):
            return code
    info = getattr(err, "debug_info", None)
    if isinstance(info, Mapping) and isinstance(info.get("status_code"), int):
        return int(info["status_code"])
    return None


def _header(headers: Any, name: str) -> str | None:
    """A header's value, the name matched without regard to case (httpx headers, dicts, SDK mappings)."""
    if not headers:
        return None
    try:
        items = headers.items()
    except AttributeError:
        return None
    for key, value in items:
        if str(key).lower() == name:
            return str(value)
    return None


def retry_after_s(err: BaseException | None) -> float | None:
    """The seconds a response asks to wait: ``retry-after-ms``, else ``Retry-After`` (seconds or an HTTP date).

    None when the error names no wait (or one that cannot be read); never negative.
    """
    if err is None:
        return None
    headers = getattr(err, "headers", None) or getattr(getattr(err, "response", None), "headers", None)
    ms = _header(headers, "retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is None:
        info = getattr(err, "debug_info", None)  # mem0 keeps the header's value here
        if isinstance(info, Mapping) and info.get("retry_after") is not None:
            value = str(info["retry_after"])
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# --- holds shared between processes: a Retry-After seen by one process holds back every process's calls ------


class HoldBoard(Protocol):
    """Where processes share their holds: per budget key, the wall-clock time (``time.time()``) before which
    no call with that key may start. ``bench_nb.runner.sweep`` installs a
    ``HoldTable`` kept by a manager process (its local pool) or a Ray actor."""

    def not_before(self, key: str) -> float:
        """When calls with budget key ``key`` may start again (a ``time.time()`` value; 0 without a hold)."""
        ...

    def hold(self, key: str, until: float) -> None:
        """Hold calls with budget key ``key`` back until ``until``."""
        ...


class HoldTable:
    """A ``HoldBoard`` in one process's memory: a hold only ever moves later."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def not_before(self, key: str) -> float:
        """When calls with budget key ``key`` may start again (0 without a hold)."""
        with self._lock:
            return self._until.get(key, 0.0)

    def hold(self, key: str, until: float) -> None:
        """Hold calls with budget key ``key`` back until ``until``; an earlier hold never shortens a later
        one."""
        with self._lock:
            self._until[key] = max(self._until.get(key, 0.0), float(until))

    def holds(self) -> dict[str, float]:
        """Every hold it keeps: budget key → the time before which no call may start."""
        with self._lock:
            return dict(self._until)


_BOARD: HoldBoard | None = None


def set_hold_board(board: HoldBoard | None) -> HoldBoard | None:
    """Share this process's Retry-After holds through ``board`` (None: keep them to this process); returns
    the board it replaces."""
    global _BOARD
    previous, _BOARD = _BOARD, board
    return previous


def budget_key(name: str, secret: str) -> str:
    """The key of one API key's budget: the provider's (or endpoint's) name and a 12-hex-digit sha256 prefix
    of the key (never the key)."""
    return f"{name}:{hashlib.sha256(secret.encode()).hexdigest()[:12]}"


class Holds:
    """The Retry-After holds on one API key as a call site sees them: its own (this object, shared by the
    threads that call through it) and, when a board is set (``set_hold_board``), every process's on ``key``.

    A site keeps one per API key it calls with (the LLM client one per endpoint and key, ``Calls`` one per
    provider) and hands it to ``retry_policy.retry_call``, which posts each Retry-After met and waits out
    every live hold before each attempt.

    Args:
        key: the budget key (``budget_key``); None keeps the holds to this object.
    """

    def __init__(self, key: str | None = None) -> None:
        self.key = key
        self._until = 0.0  # wall-clock time before which no call through this object starts
        self._lock = threading.Lock()

    def post(self, seconds: float) -> None:
        """No call with this key starts for ``seconds`` (here, and in every process sharing the board)."""
        with self._lock:
            self._until = max(self._until, time.time() + seconds)
        board = _BOARD
        if board is not None and self.key is not None:
            board.hold(self.key, time.time() + seconds)

    def wait_s(self) -> float:
        """How long a call with this key must still wait (0: no live hold)."""
        with self._lock:
            own = self._until - time.time()
        board = _BOARD  # another process's hold, when a board is set
        shared = (
            board.not_before(self.key) - time.time() if board is not None and self.key is not None else 0.0
        )
        return max(0.0, own, shared)
