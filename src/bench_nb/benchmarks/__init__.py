"""Benchmarks: dataset readers that produce ``bench_nb.records`` (Benchmark, Question, Haystack, Session,
Message), and a registry by name.

    >>> from bench_nb.benchmarks import load_benchmark
    >>> bench = load_benchmark("sample")
    >>> bench = load_benchmark("locomo", "../shared/data/locomo/locomo10.json")

Registered: ``locomo``, ``longmemeval`` (alias ``longmemeval-oracle``), ``longmemeval-s``, ``longmemeval-m``,
``custom`` (your own file, docs/benchmarks.md) and ``sample`` (bundled). See docs/benchmarks.md.
"""

# mypy: implicit-reexport
from typing import TYPE_CHECKING

from bench_nb.benchmarks.download import DatasetWarning
from bench_nb.benchmarks.registry import (
    BenchmarkReader,
    BenchmarkSpec,
    detect_benchmark,
    fetch_benchmark,
    get_benchmark_spec,
    list_benchmarks,
    load_benchmark,
    register_benchmark,
    unregister_benchmark,
)
from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.benchmarks.custom import read_custom, write_custom


# The custom format's reader and writer are imported on first use: their pydantic models cost a tenth of a
# second that a light submodule's importers (the run format, the errata, every report) never need.
__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.benchmarks.custom": ["read_custom", "write_custom"],
        "bench_nb.benchmarks.download": ["DatasetWarning"],
        "bench_nb.benchmarks.registry": [
            "BenchmarkReader",
            "BenchmarkSpec",
            "detect_benchmark",
            "fetch_benchmark",
            "get_benchmark_spec",
            "list_benchmarks",
            "load_benchmark",
            "register_benchmark",
            "unregister_benchmark",
        ],
    },
)
