"""Memory-side usage: the model calls a provider makes itself, during ingest and search.

A provider that can see its own model calls (mem0-local with ``infer=True`` extracts memories with an LLM)
reports each one with ``report_model_call(model, input_tokens, output_tokens)`` from inside ``ingest`` or
``search``, and declares ``reports_usage = True``. The runner wraps every ingest and search attempt in
``metered(...)``, which collects the calls of that attempt (a ``contextvars`` meter: each worker thread
its own) and gives back their usage entry, in the shape of the answer's (``runner.usage``)::

    {"model": "gpt-4o-mini", "calls": 2, "inputTokens": 910, "outputTokens": 64,
     "costUsd": 0.0001749, "cached": false}

What the declaration means:

- ``reports_usage = True``: every ingest and search reports all of the provider's own model calls; an
  attempt that reported none records ``calls: 0`` and ``costUsd: 0.0`` (it is known to have cost nothing:
  sqlite, the baselines, mem0-local with ``infer=False``).
- absent or False: the provider's own calls are not known (a cloud API whose responses carry no usage, or a
  provider of yours that does not say): nothing is recorded, and the frames' memory columns are null, "not
  reported", never 0.

A call is priced by ``bench_nb.models.prices`` from its model name (``costUsd: null`` when the table has no
price for it, or a token count is missing), unless the provider passes ``cost_usd`` itself.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ModelCall:
    """One model call a provider made: the model named, its billed tokens (None: not reported), its price."""

    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None


class UsageMeter:
    """The model calls reported during one provider call (thread-safe: a provider may report from its own
    worker threads once it has the meter, ``current_meter()``)."""

    def __init__(self) -> None:
        self._calls: list[ModelCall] = []
        self._lock = threading.Lock()

    def add(self, call: ModelCall) -> None:
        """Record one model call."""
        with self._lock:
            self._calls.append(call)

    @property
    def calls(self) -> list[ModelCall]:
        """The calls recorded so far, in order (a copy)."""
        with self._lock:
            return list(self._calls)

    def entry(self) -> dict[str, Any]:
        """The usage entry of the calls: tokens null when one call did not report its own, ``costUsd`` null
        when one call has no price; ``calls: 0`` with zero tokens and cost when there were none."""
        calls = self.calls
        return {
            "model": next((c.model for c in calls if c.model), None),
            "calls": len(calls),
            "inputTokens": _sum([c.input_tokens for c in calls]),
            "outputTokens": _sum([c.output_tokens for c in calls]),
            "costUsd": _sum([c.cost_usd for c in calls], 0.0),
            "cached": False,
        }


def _sum(values: list[Any], zero: Any = 0) -> Any:
    if any(v is None for v in values):
        return None
    return sum(values, zero)


_current: contextvars.ContextVar[UsageMeter | None] = contextvars.ContextVar(
    "bench_nb_usage_meter", default=None
)


def current_meter() -> UsageMeter | None:
    """The meter of the provider call running in this thread (None outside ``metered``)."""
    return _current.get()


def price(model: str | None, input_tokens: int | None, output_tokens: int | None) -> float | None:
    """The list price of one call (``bench_nb.models.prices``); None for an unknown model or token count."""
    if not model or input_tokens is None or output_tokens is None:
        return None
    from bench_nb.errors import BenchNbError
    from bench_nb.models.aliases import resolve_model
    from bench_nb.models.prices import cost_usd

    try:
        spec = resolve_model(model)
    except (BenchNbError, ValueError):
        return None
    return cost_usd(spec, input_tokens, output_tokens)


_UNSET: Any = object()


def report_model_call(
    model: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    cost_usd: float | None = _UNSET,
    meter: UsageMeter | None = None,
) -> None:
    """Report one model call the provider made (to ``meter``, default the current one; a no-op outside a
    metered call, so a provider used on its own needs no runner). ``cost_usd`` defaults to the list price."""
    target = meter if meter is not None else current_meter()
    if target is None:
        return
    cost = price(model, input_tokens, output_tokens) if cost_usd is _UNSET else cost_usd
    target.add(ModelCall(model, input_tokens, output_tokens, cost))


def reports_usage(provider: Any) -> bool:
    """Whether ``provider`` declares that it reports its own model calls (``reports_usage = True``)."""
    return getattr(provider, "reports_usage", False) is True


def metered(reports: bool, fn: Callable[[], T]) -> tuple[T, dict[str, Any] | None]:
    """``fn()``'s result and the usage entry of the model calls the provider reported during it (None when
    it does not report them: ``reports``, its ``reports_usage``)."""
    meter = UsageMeter()
    token = _current.set(meter)
    try:
        value = fn()
    finally:
        _current.reset(token)
    return value, meter.entry() if reports else None
