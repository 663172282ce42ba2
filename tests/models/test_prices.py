"""Prices from ``$BENCH_NB_PRICES``: the file named now, read again when it changes, and safe across threads."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from bench_nb.models.aliases import resolve_model
from bench_nb.models.prices import DEFAULT_PRICES, Price, price_for

GPT4O = resolve_model("gpt-4o")


def _price_file(path: Path, input_per_mtok: float, filler: int = 0) -> Path:
    prices = {f"filler-{i}": {"input": 1, "output": 1} for i in range(filler)}
    path.write_text(json.dumps({**prices, "gpt-4o": {"input": input_per_mtok, "output": 2 * input_per_mtok}}))
    return path


def test_the_price_file_is_read_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _price_file(tmp_path / "first.json", 1.0)
    monkeypatch.setenv("BENCH_NB_PRICES", str(first))
    assert price_for(GPT4O) == Price(1.0, 2.0)
    monkeypatch.setenv("BENCH_NB_PRICES", str(_price_file(tmp_path / "second.json", 3.0)))
    assert price_for(GPT4O) == Price(3.0, 6.0)  # another file in the same process
    monkeypatch.setenv("BENCH_NB_PRICES", str(first))
    _price_file(first, 5.0)
    stat = first.stat()
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # changed a second later
    assert price_for(GPT4O) == Price(5.0, 10.0)
    monkeypatch.delenv("BENCH_NB_PRICES")
    assert price_for(GPT4O) == DEFAULT_PRICES["gpt-4o"]


def test_a_thread_reads_the_built_in_price_while_another_loads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file long enough to take the loading thread many GIL switch intervals: the others ask meanwhile.
    monkeypatch.setenv("BENCH_NB_PRICES", str(_price_file(tmp_path / "prices.json", 1.0, filler=100_000)))
    start = threading.Barrier(8)
    seen: list[Price | None] = []

    def ask() -> None:
        start.wait()
        seen.append(price_for(GPT4O))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [Price(1.0, 2.0)] * 8


def test_a_price_file_changed_many_times_keeps_only_its_current_prices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench_nb.models import prices

    path = tmp_path / "prices.json"
    monkeypatch.setenv("BENCH_NB_PRICES", str(path))
    monkeypatch.setattr(prices, "_env_files", {})
    for n in range(1, 21):  # a file edited 20 times in one process: one entry remembered, not 20
        _price_file(path, float(n), filler=n)
        assert price_for(GPT4O) == Price(float(n), 2.0 * n)
    assert len(prices._env_files) == 1
