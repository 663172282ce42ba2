"""Every package's public names, declared once (``bench_nb.lazy.attach``): the declaration, the imports a type
checker reads and ``__all__`` agree, every name resolves to its defining module's object, and a lazy name is
imported only when asked for (as altair's ``tests/test_toplevel.py`` checks its generated ``__all__``).

The declaring packages are found by reading each ``__init__.py`` (``ast``), so a new one is checked too."""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

import bench_nb
from bench_nb import lazy

SRC = Path(bench_nb.__file__).parent
# Every package's front is built one way. Not fronts: ``cli`` (the ``bench-nb`` command) and the run format's
# importers (``runformat.harnesses``, internal: ``load_runs`` reads other harnesses' files through them).
NOT_A_FRONT = {"bench_nb.cli", "bench_nb.runformat.harnesses"}
# Names an __init__ binds for its own use, never public.
PLUMBING = {"TYPE_CHECKING", "annotations", "attach"}


def _package_name(init: Path) -> str:
    parts = init.parent.relative_to(SRC.parent).parts
    return ".".join(parts)


def _declaring() -> list[str]:
    found = []
    for init in SRC.rglob("__init__.py"):
        text = init.read_text(encoding="utf-8")
        if "from bench_nb.lazy import attach" in text:
            found.append(_package_name(init))
    return sorted(found)


DECLARING = _declaring()


def _imports(package: str) -> tuple[dict[str, str], dict[str, str]]:
    """(name -> module) of the package's ``from bench_nb... import`` statements: those run at import, and those
    under ``if TYPE_CHECKING:`` (the typing view of the lazy names). ``a as b`` counts as ``b``; the value is
    ``module:a`` when the names differ (a deprecated alias)."""
    init = SRC.parent.joinpath(*package.split("."), "__init__.py")
    eager: dict[str, str] = {}
    typing_only: dict[str, str] = {}

    def collect(body: list[ast.stmt], into: dict[str, str]) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bench_nb"):
                for alias in node.names:
                    if node.module == "bench_nb.lazy":
                        continue
                    name = alias.asname or alias.name
                    assert name not in eager and name not in typing_only, f"{package} imports {name} twice"
                    into[name] = node.module if name == alias.name else f"{node.module}:{alias.name}"

    tree = ast.parse(init.read_text(encoding="utf-8"))
    collect(tree.body, eager)
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            collect(node.body, typing_only)
    return eager, typing_only


def _submodules(package: ModuleType) -> set[str]:
    return {m.name for m in pkgutil.iter_modules(package.__path__)}


def test_every_package_declares_its_names_with_the_helper() -> None:
    packages = {_package_name(init) for init in SRC.rglob("__init__.py")}
    assert set(DECLARING) == packages - NOT_A_FRONT
    for init in SRC.rglob("__init__.py"):  # no hand-written module __getattr__ is left
        assert "def __getattr__" not in init.read_text(encoding="utf-8"), init
    for package in DECLARING:  # and mypy takes each front's imports for its exports (the slow test below)
        init = SRC.parent.joinpath(*package.split("."), "__init__.py")
        assert "\n# mypy: implicit-reexport\n" in init.read_text(encoding="utf-8"), init


@pytest.mark.slow
def test_a_users_script_checked_by_mypy_strict_sees_every_fronts_names(tmp_path: Path) -> None:
    """mypy cannot run ``attach``: under ``--strict`` (no implicit re-export) a user's ``bn.compare_runs`` was
    "Module 'bench_nb' does not explicitly export attribute" unless the front says it re-exports its imports
    (``# mypy: implicit-reexport``, read wherever the package is installed). The script reaches every public
    name of every front, as ``import bench_nb as bn`` and ``from bench_nb import ...`` users do."""
    lines = ["import bench_nb as bn", "from bench_nb import charts, compare_runs, tables", ""]
    lines += [f"import {package}" for package in DECLARING if package != "bench_nb"]
    lines += ["print(compare_runs, tables.show, charts.chart_memscore)"]
    for package in DECLARING:
        front = "bn" if package == "bench_nb" else package
        lines += [f"print({front}.{name})" for name in lazy.exports_of(importlib.import_module(package)).all]
    (tmp_path / "user.py").write_text("\n".join(lines) + "\n")
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental", "user.py"],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(SRC.parent)},  # the package the tests import: the installed one
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert checked.returncode == 0 and "does not explicitly export" not in checked.stdout, checked.stdout[
        -3000:
    ]


@pytest.mark.parametrize("package_name", DECLARING)
def test_declaration_type_checking_block_and_all_agree(package_name: str) -> None:
    package = importlib.import_module(package_name)
    exports = lazy.exports_of(package)
    eager, typing_only = _imports(package_name)
    imported = eager | typing_only

    # Each public name is imported (eagerly, or for the type checker) from the module it is declared from.
    plain = {n: m for n, m in imported.items() if ":" not in m}
    assert plain == exports.names
    # A deprecated alias of a name of the same package is typed as its new name and resolves to it (with a
    # warning); a name moved to another package (a dotted new name) is not typed here: mypy flags the old use.
    aliases = {n: m for n, m in imported.items() if ":" in m}
    assert {n: m.split(":")[1] for n, m in aliases.items()} == {
        old: new for old, (new, _) in exports.deprecated.items() if "." not in new
    }
    for old, (new, _) in exports.deprecated.items():
        if "." in new:
            home, _, attr = new.rpartition(".")
            assert hasattr(importlib.import_module(home), attr), (package_name, old, new)

    assert package.__all__ == sorted(set(package.__all__)) == sorted(exports.names)
    assert not set(exports.deprecated) & set(package.__all__)
    listed = dir(package)
    assert listed == sorted(listed) and set(package.__all__) <= set(listed)
    assert set(listed) - set(package.__all__) <= {*exports.submodules, "__version__"}

    # What the package binds at import is public (in __all__), a submodule, or its own plumbing (altair's
    # check: nothing public escapes __all__).
    bound = {
        n
        for n, v in vars(package).items()
        if not n.startswith("_") and not isinstance(v, ModuleType) and n not in PLUMBING
    }
    assert bound <= set(package.__all__), sorted(bound - set(package.__all__))

    # A name imported only on first use must not be a submodule's name too: importing that submodule
    # (anyone's ``import package.name``) would bind the module over the name.
    assert not set(typing_only) & _submodules(package)


@pytest.mark.parametrize("package_name", DECLARING)
def test_every_declared_name_resolves_to_its_modules_object(package_name: str) -> None:
    package = importlib.import_module(package_name)
    for name, module in lazy.exports_of(package).names.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name), (package_name, name)
    with pytest.raises(AttributeError, match=f"module '{package_name}' has no attribute 'no_such_name'"):
        package.no_such_name  # noqa: B018


def _packages_with_all() -> list[str]:
    names = []
    for init in SRC.rglob("__init__.py"):
        if "__all__" in init.read_text(encoding="utf-8"):
            names.append(_package_name(init))
    return sorted(names)


@pytest.mark.parametrize("package_name", _packages_with_all())
def test_every_packages_all_is_sorted_unique_and_resolves(package_name: str) -> None:
    package = importlib.import_module(package_name)
    names = package.__all__
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    # sorted as ruff's RUF022 sorts (SCREAMING_CASE, then CamelCase, then the rest) or plainly
    assert names in (sorted(names), sorted(names, key=lambda n: (not n.isupper(), not n[:1].isupper(), n)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a name in __all__ is never a deprecated alias
        for name in names:
            assert getattr(package, name) is not None, (package_name, name)


PROBE = """
import sys
import bench_nb, bench_nb.metrics, bench_nb.models, bench_nb.benchmarks, bench_nb.reports, bench_nb.runner
before = {m for m in sys.modules if m.startswith("bench_nb.")}
import bench_nb.models as models
settings = models.ClientSettings
import bench_nb.metrics as metrics
intervals = metrics.accuracy_intervals
print(sorted(before & {"bench_nb.models.settings", "bench_nb.metrics.clustered", "bench_nb.runner.run"}),
      "bench_nb.models.settings" in sys.modules, "bench_nb.metrics.clustered" in sys.modules,
      "ClientSettings" in vars(models), "numpy" in sys.modules)
"""


def test_a_lazy_name_is_imported_on_first_access_and_kept() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "True", "True", "True", "True"]


ROI_PROBE = """
import json, sys
import bench_nb.roi as roi
before = sorted(m for m in sys.modules if m.startswith("bench_nb.roi.") or m in ("polars", "numpy", "pydantic"))
run_roi = roi.run_roi
print(json.dumps([before, "bench_nb.roi.run" in sys.modules]))
"""


def test_bench_nb_roi_imported_its_modules_eagerly_beside_its_lazy_names() -> None:
    """``import bench_nb.roi`` imports none of its modules (nor polars, numpy, pydantic: half a second), like
    every other front: a name is imported when it is first asked for."""
    out = subprocess.run([sys.executable, "-c", ROI_PROBE], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [[], True]


def test_the_helper_on_a_package_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "lazy_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from bench_nb import lazy\n"
        "__getattr__, __dir__, __all__ = lazy.attach(\n"
        "    __name__,\n"
        "    {'lazy_probe.things': ['Thing', 'make'], 'lazy_probe.broken': ['broken']},\n"
        "    deprecated={'OldThing': ('Thing', 'OldThing is renamed Thing')},\n"
        "    listed=('__version__',),\n"
        ")\n"
        "__version__ = '1'\n"
    )
    (pkg / "things.py").write_text("class Thing: ...\ndef make(): return Thing()\n")
    (pkg / "broken.py").write_text("import lazy_probe_missing_dependency\nbroken = 1\n")
    (pkg / "extra.py").write_text("value = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        _check_probe_package()
    finally:
        for name in [m for m in sys.modules if m.startswith("lazy_probe")]:
            del sys.modules[name]


def _check_probe_package() -> None:
    import lazy_probe  # type: ignore[import-not-found]

    assert lazy_probe.__all__ == ["Thing", "broken", "make"]
    assert dir(lazy_probe) == ["Thing", "__version__", "broken", "make"]
    assert "lazy_probe.things" not in sys.modules
    assert isinstance(lazy_probe.make(), lazy_probe.Thing) and "lazy_probe.things" in sys.modules
    with pytest.warns(DeprecationWarning, match="OldThing is renamed Thing"):
        assert lazy_probe.OldThing is lazy_probe.Thing
    assert lazy_probe.extra.value == 3  # any submodule, as ``import lazy_probe.extra`` gives it
    with pytest.raises(ModuleNotFoundError, match="lazy_probe_missing_dependency"):
        lazy_probe.broken  # noqa: B018  (a failing import inside the module is not hidden)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        lazy_probe.nothing  # noqa: B018
    with pytest.raises(ValueError, match="'x' is exported from a and b"):
        lazy.attach("p", {"a": ["x"], "b": ["x"]})
    with pytest.raises(TypeError, match="does not declare its names"):
        lazy.exports_of(sys.modules["bench_nb.errors"])


def test_the_front_door_is_at_most_forty_names() -> None:
    assert len(bench_nb.__all__) <= 40, len(bench_nb.__all__)


def test_a_name_looked_up_at_the_wrong_level_says_where_it_lives() -> None:
    with pytest.raises(
        AttributeError, match=r"no attribute 'chart_memscore'; it lives at bench_nb\.charts\.chart_memscore"
    ):
        bench_nb.chart_memscore  # noqa: B018
    with pytest.raises(AttributeError, match=r"no attribute 'load_runs'; it lives at bench_nb\.load_runs"):
        bench_nb.metrics.load_runs  # noqa: B018
    with pytest.raises(AttributeError, match=r"has no attribute 'nothing_by_this_name'$"):
        bench_nb.nothing_by_this_name  # noqa: B018


def test_a_name_that_left_the_top_level_warns_with_its_new_spelling_and_still_works() -> None:
    from bench_nb.metrics.clustered_paired import tell_apart
    from bench_nb.runformat.load import Run

    with pytest.warns(DeprecationWarning, match=r"bench_nb\.Run moved to bench_nb\.runformat\.Run"):
        assert bench_nb.Run is Run
    with pytest.warns(
        DeprecationWarning, match=r"use bench_nb\.compare_runs\(questions, method='tell-apart'\)"
    ):
        assert bench_nb.tell_apart is tell_apart
    with pytest.warns(
        DeprecationWarning, match=r"bench_nb\.metrics\.tell_apart is deprecated: use bench_nb\.compare_runs"
    ):
        assert bench_nb.metrics.tell_apart is tell_apart
    with pytest.warns(DeprecationWarning, match=r"renamed bench_nb\.runner\.run_comparison"):
        assert bench_nb.compare is bench_nb.runner.run_comparison
    assert "Run" not in dir(bench_nb) and "Run" in dir(bench_nb.runformat)
