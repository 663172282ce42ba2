"""A sliding-window pool: at most ``limit`` tasks run at once, and the next starts the moment one finishes.

MemoryBench runs fixed batches (``Promise.all`` over N tasks, then the next N), so every batch waits for its
slowest task. Here each worker thread, when its task ends, takes the next waiting task itself: no batch
boundary and no round trip through the scheduler. Results go to one shared queue, which the runner's single
scheduler thread reads (it alone touches the run's state).
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Done:
    """A finished task: ``error`` is set when it raised."""

    pool: str
    key: Hashable
    result: Any = None
    error: BaseException | None = None


class WindowPool:
    """Runs submitted callables on at most ``limit`` threads, posting a ``Done`` to ``results`` for each.

    Args:
        name: the pool's name (a phase), copied into every ``Done``.
        limit: how many tasks may run at the same time.
        results: where finished tasks are posted.
    """

    def __init__(self, name: str, limit: int, results: queue.SimpleQueue[Done]) -> None:
        self.name = name
        self.limit = limit
        self._results = results
        self._pending: deque[tuple[Hashable, Callable[[], Any]]] = deque()
        self._lock = threading.Lock()
        self._running = 0
        self._closed = False
        self._executor = ThreadPoolExecutor(max_workers=limit, thread_name_prefix=f"bench-nb-{name}")

    def submit(self, key: Hashable, fn: Callable[[], Any]) -> None:
        """Queue ``fn``; it starts now if fewer than ``limit`` tasks are running."""
        with self._lock:
            if self._closed:
                return
            self._pending.append((key, fn))
            if self._running >= self.limit:
                return
            self._running += 1
        self._executor.submit(self._work)

    def cancel_pending(self) -> int:
        """Drop the tasks that have not started; returns how many were dropped."""
        with self._lock:
            n = len(self._pending)
            self._pending.clear()
            self._closed = True
            return n

    def shutdown(self, wait: bool = True) -> None:
        """Drop the tasks not started and shut the executor down, waiting for the running ones when ``wait``."""
        self.cancel_pending()
        self._executor.shutdown(wait=wait, cancel_futures=True)

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._running -= 1
                    return
                key, fn = self._pending.popleft()
            try:
                self._results.put(Done(self.name, key, fn()))
            except BaseException as err:  # reported to the scheduler, which decides what to do
                self._results.put(Done(self.name, key, None, err))
