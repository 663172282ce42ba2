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


def test_no_test_module_imports_from_a_conftest() -> None:
    """Every folder's conftest.py is imported as the module ``conftest``, so ``from conftest import x`` gets
    whichever one pytest loaded first: ``pytest tests/providers tests/roi`` failed to collect the ROI tests
    that imported ``new_database`` (found in the providers' conftest). Use the fixture instead."""
    importing = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("*.py")
        if any(
            line.lstrip().startswith(("from conftest import", "import conftest"))
            for line in path.read_text().splitlines()
        )
    ]
    assert importing == []
