"""Prices per million tokens, and the cost of a call.

The built-in table holds list prices (USD per 1M input / output tokens, standard tier, no batch or cached-input
discount) as published by OpenAI, Anthropic and Google in 2025; prices change, so override them:

- in Python: ``set_price("gpt-4o", input_per_mtok=2.5, output_per_mtok=10)``;
- from a file: ``$BENCH_NB_PRICES`` naming a JSON file ``{"gpt-4o": {"input": 2.5, "output": 10}, ...}``,
  read again when the variable or the file changes (keys are model ids or aliases); ``set_price`` wins over
  it.

Local models (``local:``/``ollama:``) cost 0. A model with no price gets ``cost_usd = None`` (unknown), never 0.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from bench_nb.errors import ModelError
from bench_nb.models.aliases import ModelSpec


@dataclass(frozen=True)
class Price:
    """USD per one million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The cost in USD of a call with these token counts."""
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "o1": Price(15.00, 60.00),
    "o3": Price(2.00, 8.00),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    "claude-sonnet-4-20250514": Price(3.00, 15.00),
    "claude-sonnet-4-5-20250929": Price(3.00, 15.00),
    "claude-sonnet-4-6": Price(3.00, 15.00),
    "claude-haiku-4-5-20251001": Price(1.00, 5.00),
    "claude-opus-4-20250514": Price(15.00, 75.00),
    "claude-opus-4-1-20250805": Price(15.00, 75.00),
    "claude-opus-4-5-20251101": Price(5.00, 25.00),
    "claude-opus-4-6": Price(5.00, 25.00),
    "gemini-2.0-flash": Price(0.10, 0.40),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.5-flash-lite": Price(0.10, 0.40),
    "gemini-2.5-pro": Price(1.25, 10.00),
}

_overrides: dict[str, Price] = {}
_env_files: dict[str, tuple[tuple[int, int], dict[str, Price]]] = {}  # path -> (mtime, size), its prices
_lock = threading.Lock()


def set_price(model: str, input_per_mtok: float, output_per_mtok: float) -> None:
    """Override the price of a model id or alias for this process."""
    with _lock:
        _overrides[model] = Price(float(input_per_mtok), float(output_per_mtok))


def _read_prices(path: str | Path) -> dict[str, Price]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ModelError(f"{path}: cannot read the price file: {err}") from err
    if not isinstance(data, dict):
        raise ModelError(f"{path}: expected an object of model -> {{input, output}}")
    read: dict[str, Price] = {}
    for model, entry in data.items():
        try:
            read[model] = Price(float(entry["input"]), float(entry["output"]))
        except (KeyError, TypeError, ValueError) as err:
            raise ModelError(f"{path} (entry {model!r}): needs numeric 'input' and 'output': {err}") from err
    return read


def _env_prices() -> dict[str, Price]:
    """The prices in the file ``$BENCH_NB_PRICES`` names now; a thread asking while another reads it waits."""
    path = os.environ.get("BENCH_NB_PRICES")
    if not path:
        return {}
    try:
        stat = os.stat(path)
    except OSError:
        return _read_prices(path)  # raises, naming the file
    version = (stat.st_mtime_ns, stat.st_size)
    with _lock:
        if _env_files.get(path, (None,))[0] != version:  # read again if changed, the old prices dropped
            _env_files[path] = (version, _read_prices(path))
        return _env_files[path][1]


def price_for(spec: ModelSpec) -> Price | None:
    """The price of a model: overrides, then the price file (by alias, then id), then the built-in table.

    A local model not priced by either costs 0; any other model without a price gets None.
    """
    for table in (_overrides, _env_prices()):
        for key in (spec.alias, spec.model_id):
            if key in table:
                return table[key]
    if spec.family == "local":
        return Price(0.0, 0.0)
    return DEFAULT_PRICES.get(spec.model_id)


def cost_usd(spec: ModelSpec, input_tokens: int | None, output_tokens: int | None) -> float | None:
    """The cost of one call at list price; None when the price or a token count is unknown."""
    price = price_for(spec)
    if price is None or input_tokens is None or output_tokens is None:
        return None
    return price.cost(input_tokens, output_tokens)
