"""No code outside the benchmark package compares a benchmark's name: what the rest of bench_nb needs to know
about a benchmark is a trait of its registration (``BenchmarkTraits``, read with ``benchmark_traits``).

Every module of src/bench_nb except ``bench_nb/benchmarks/`` is read with ``ast`` (nothing is imported). A
comparison (``==``, ``!=``, ``in``, ``not in``) with a string that is a registered benchmark name or alias (or a
tuple, list or set holding one), and ``startswith``/``removeprefix`` with one or with a prefix of one ending in
``-``, are failures. The checker is proved on generated source.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import bench_nb
from bench_nb.benchmarks.registry import get_benchmark_spec, list_benchmarks

SRC = Path(bench_nb.__file__).parent
_PREFIX_CALLS = frozenset({"startswith", "removeprefix", "endswith", "removesuffix"})


def benchmark_names() -> frozenset[str]:
    """Every registered benchmark name and alias."""
    return frozenset(n for name in list_benchmarks() for n in (name, *get_benchmark_spec(name).aliases))


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    return []


def name_comparisons(source: str, names: frozenset[str]) -> list[tuple[int, str]]:
    """``(line, the name)`` of every comparison of a benchmark name in ``source``."""

    def is_name(s: str, *, prefix: bool) -> bool:
        low = s.lower()
        return low in names or (prefix and low.endswith("-") and any(n.startswith(low) for n in names))

    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                out += [(node.lineno, s) for s in _strings(operand) if is_name(s, prefix=False)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _PREFIX_CALLS
        ):
            for arg in node.args:
                out += [(node.lineno, s) for s in _strings(arg) if is_name(s, prefix=True)]
    return out


def test_no_module_outside_the_benchmark_package_compares_a_benchmark_name() -> None:
    names = benchmark_names()
    found = [
        f"{path.relative_to(SRC)}:{line}: {name!r}"
        for path in sorted(SRC.rglob("*.py"))
        if "benchmarks" not in path.relative_to(SRC).parts
        for line, name in name_comparisons(path.read_text(encoding="utf-8"), names)
    ]
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        'if name == "locomo": pass',
        'x = "beam" != name',
        'ok = name.lower() in ("sample", "other")',
        'ok = name.startswith("beam-")',
        'tier = name.removeprefix("longmemeval-v2-")',
        'ok = name.startswith(("x", "lme-v2"))',
    ],
)
def test_the_checker_catches_a_name_comparison(source: str) -> None:
    assert len(name_comparisons(source, benchmark_names())) == 1


def test_the_checker_leaves_other_strings_alone() -> None:
    source = 'name = "locomo"\nif kind == "rubric" or path.startswith("conv-"): load("beam-100k")'
    assert name_comparisons(source, benchmark_names()) == []
