"""Test modules live in folders without __init__.py, so pytest imports each by its file name alone: two
test files of one name in different folders stop the whole suite from being collected."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_module_name_is_unique() -> None:
    where: defaultdict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name != "conftest.py" and not (path.parent / "__init__.py").exists():
            where[path.name].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
