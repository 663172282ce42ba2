"""Benchmarks: dataset readers that produce ``bench_nb.records`` (Benchmark, Question, Haystack, Session,
Message), and a registry by name.

    >>> from bench_nb.benchmarks import load_benchmark
    >>> bench = load_benchmark("sample")
    >>> bench = load_benchmark("locomo", "../shared/data/locomo/locomo10.json")

Registered: ``locomo``, ``longmemeval`` (alias ``longmemeval-oracle``), ``longmemeval-s``, ``longmemeval-m``,
``custom`` (your own file, docs/benchmarks.md) and ``sample`` (bundled). See docs/benchmarks.md.
"""

from typing import TYPE_CHECKING, Any

from bench_nb.benchmarks.download import DatasetWarning, download_file, sha256_file
from bench_nb.benchmarks.locomo import LOCOMO_TYPE_REGISTRY, parse_locomo_date, read_locomo
from bench_nb.benchmarks.longmemeval import parse_longmemeval_date, read_longmemeval
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

if TYPE_CHECKING:
    from bench_nb.benchmarks.custom import read_custom, write_custom


def __getattr__(name: str) -> Any:
    # The custom format's reader and writer are imported on first use: their pydantic models cost a tenth
    # of a second that a light submodule's importers (the run format, the errata, every report) never need.
    if name in ("read_custom", "write_custom"):
        from bench_nb.benchmarks import custom

        return getattr(custom, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "LOCOMO_TYPE_REGISTRY",
    "BenchmarkReader",
    "BenchmarkSpec",
    "DatasetWarning",
    "detect_benchmark",
    "download_file",
    "fetch_benchmark",
    "get_benchmark_spec",
    "list_benchmarks",
    "load_benchmark",
    "parse_locomo_date",
    "parse_longmemeval_date",
    "read_custom",
    "read_locomo",
    "read_longmemeval",
    "register_benchmark",
    "sha256_file",
    "unregister_benchmark",
    "write_custom",
]
