"""The layer order of src/bench_nb, checked over its real import graph (docs/architecture.md, "Layers").

Every module is read with ``ast`` (nothing is imported), and every ``import`` it makes of the package counts,
wherever it stands: at module top, inside a function, or under ``if TYPE_CHECKING``. A package may import its
own layer or lower ones. Besides the order, the write side (``runner``) and the read side (``frames`` and all
above it) meet only in the run-format package: no read-side package imports the runner, except ``demo`` and
``cli``, which run benchmarks. A package that is in no layer is itself a failure, so a new one must be placed.
"""

from __future__ import annotations

import ast
import graphlib
from dataclasses import dataclass
from pathlib import Path

import bench_nb

# Lowest first. The names are the top-level modules and packages of bench_nb.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(layer)
    for layer in (
        {
            "errors",
            "records",
            "taxonomy",
            "text",
            "fast_imports",
            "retry_after",
            "retry_policy",
            "chart_output",
            "gc_pause",
            "redaction",
            "lazy",
            "registry",
        },
        {"benchmarks", "providers", "models"},
        {"runformat"},
        {"judges"},
        {"runner"},
        {"frames"},
        {"metrics"},
        {"tables", "charts", "roi", "receipts"},
        {"widgets", "reports"},
        {"demo"},
        {"cli", "__main__"},
    )
)
WRITE_SIDE = frozenset({"runner"})
READ_SIDE = frozenset({"frames", "metrics", "tables", "charts", "roi", "receipts", "widgets", "reports"})


@dataclass(frozen=True)
class Violation:
    module: str  # the importing module, dotted
    line: int
    imported: str  # the imported module, dotted
    reason: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported}: {self.reason}"


def _module_name(package: str, root: Path, path: Path) -> tuple[str, bool]:
    parts = path.relative_to(root).with_suffix("").parts
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join((package, *parts)), is_package


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:  # relative: resolve against the importing module's package
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    # ``from bench_nb import roi`` imports the subpackage ``bench_nb.roi``
    return [prefix] if node.module else [f"{prefix}.{alias.name}" for alias in node.names]


def layer_violations(
    root: Path,
    package: str = "bench_nb",
    layers: tuple[frozenset[str], ...] = LAYERS,
    write_side: frozenset[str] = WRITE_SIDE,
    read_side: frozenset[str] = READ_SIDE,
) -> list[Violation]:
    """Every import in the package at ``root`` that breaks the layer order or the write/read split."""
    level = {name: i for i, layer in enumerate(layers) for name in layer}
    out: list[Violation] = []
    for path in sorted(root.rglob("*.py")):
        module, is_package = _module_name(package, root, path)
        parts = module.split(".")
        if len(parts) == 1:
            continue  # the package's __init__: the public facade, which may name anything
        source = parts[1]
        if source not in level:
            out.append(Violation(module, 0, module, "its package is in no layer"))
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for name in _imported(node, module, is_package):
                target = name.split(".")
                if target[0] != package:
                    continue
                if len(target) == 1:
                    out.append(Violation(module, node.lineno, name, "imports the facade, not a module"))
                    continue
                dest = target[1]
                if dest not in level:
                    out.append(Violation(module, node.lineno, name, "imports a package that is in no layer"))
                elif level[dest] > level[source]:
                    out.append(
                        Violation(
                            module,
                            node.lineno,
                            name,
                            f"{source} (layer {level[source]}) may not import {dest} (layer {level[dest]})",
                        )
                    )
                elif source in read_side and dest in write_side:
                    out.append(
                        Violation(
                            module,
                            node.lineno,
                            name,
                            f"the read side ({source}) meets the write side ({dest}) only in the run format",
                        )
                    )
    return out


def test_the_package_imports_only_its_own_layer_or_lower_ones() -> None:
    root = Path(bench_nb.__file__).parent
    assert layer_violations(root) == []


def test_every_top_level_module_of_the_package_is_in_a_layer() -> None:
    root = Path(bench_nb.__file__).parent
    names = {p.stem if p.is_file() else p.name for p in root.iterdir() if p.suffix == ".py" or p.is_dir()}
    names -= {"__init__", "__pycache__"}
    placed = set().union(*LAYERS)
    assert names - placed == set()


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _check(root: Path) -> list[str]:
    layers = (frozenset({"low"}), frozenset({"runner"}), frozenset({"frames"}), frozenset({"cli"}))
    return [
        str(v)
        for v in layer_violations(
            root, "pkg", layers, write_side=frozenset({"runner"}), read_side=frozenset({"frames"})
        )
    ]


def test_the_check_catches_a_lower_layer_importing_a_higher_one_wherever_the_import_stands(
    tmp_path: Path,
) -> None:
    root = _package(
        tmp_path,
        {
            "low/__init__.py": "",
            "low/a.py": "from pkg.frames.view import X\n",
            "low/b.py": "def f():\n    from ..cli import main\n",
            "low/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.runner.run\n",
            "frames/__init__.py": "",
            "frames/view.py": "from pkg.low import a\nfrom . import view\n",
            "runner/__init__.py": "",
            "runner/run.py": "from pkg.low.a import X\n",
            "cli/__init__.py": "from pkg.runner.run import go\nfrom pkg.frames import view\n",
        },
    )
    assert _check(root) == [
        "pkg.low.a:1 imports pkg.frames.view: low (layer 0) may not import frames (layer 2)",
        "pkg.low.b:2 imports pkg.cli: low (layer 0) may not import cli (layer 3)",
        "pkg.low.c:3 imports pkg.runner.run: low (layer 0) may not import runner (layer 1)",
    ]


def test_the_check_catches_the_read_side_importing_the_write_side(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "frames/__init__.py": "",
            "frames/questions.py": "from pkg.runner import journal\n",
            "runner/__init__.py": "",
            "runner/journal.py": "",
        },
    )
    assert _check(root) == [
        "pkg.frames.questions:1 imports pkg.runner: "
        "the read side (frames) meets the write side (runner) only in the run format"
    ]


def test_the_check_catches_a_package_in_no_layer_and_imports_of_the_facade(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "extras.py": "",
            "low/__init__.py": "import pkg\nfrom pkg.extras import thing\n",
        },
    )
    assert _check(root) == [
        "pkg.extras:0 imports pkg.extras: its package is in no layer",
        "pkg.low:1 imports pkg: imports the facade, not a module",
        "pkg.low:2 imports pkg.extras: imports a package that is in no layer",
    ]


def import_cycle(root: Path, package: str = "bench_nb") -> list[str]:
    """A cycle in the import graph between the package's files (every import that runs, at module top or
    inside a function; not one under ``if TYPE_CHECKING``), or ``[]``. ``from pkg.sub import mod`` counts as
    an import of the module ``pkg.sub.mod`` when there is one."""
    files = {}
    for path in sorted(root.rglob("*.py")):
        module, is_package = _module_name(package, root, path)
        files[module] = (path, is_package)
    graph: dict[str, set[str]] = {module: set() for module in files}
    for module, (path, is_package) in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in typing_only:
                continue
            names = _imported(node, module, is_package)
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [
                    f"{names[0]}.{a.name}" if f"{names[0]}.{a.name}" in files else names[0]
                    for a in node.names
                ]
            for name in names:
                while name and name not in files:  # ``pkg.mod.attr`` is an import of ``pkg.mod``
                    name = name.rpartition(".")[0]
                if name and name != module:
                    graph[module].add(name)
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as err:
        return list(err.args[1])
    return []


def test_no_import_cycles_between_the_packages_files() -> None:
    """A cycle broken by an import inside a function is still a cycle (docs/architecture.md: imports inside
    functions are there for import time only)."""
    assert import_cycle(Path(bench_nb.__file__).parent) == []


def test_the_cycle_check_sees_an_import_inside_a_function_and_skips_type_checking(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "low/__init__.py": "",
            "low/a.py": "from pkg.low.b import f\n",
            "low/b.py": "def f():\n    from pkg.low import a\n",
        },
    )
    assert sorted(set(import_cycle(root, "pkg"))) == ["pkg.low.a", "pkg.low.b"]
    (root / "low" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
    )
    assert import_cycle(root, "pkg") == []
