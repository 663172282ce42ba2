"""A package's public names declared once and imported on first use (PEP 562's module ``__getattr__``).

    __getattr__, __dir__, __all__ = attach(__name__, {"bench_nb.frames.store": ["load_runs"]})

The mapping (defining module -> names) is the one list of the package's public names: ``__all__`` is its
names sorted, ``__dir__`` lists them (and the subpackages given), and ``__getattr__`` imports a name's module
the first time the name is asked for and keeps the value in the package; any other name (not starting with an
underscore) is looked for as a submodule, and a name that is neither is an ``AttributeError`` saying where
the name lives when another package of the same root declares it (``bench_nb.chart_memscore`` -> "it lives at
bench_nb.charts.chart_memscore"). A name the package imports eagerly is listed too (its ``__getattr__`` is
then never asked). A type checker does not run ``attach``: each package keeps an
``if TYPE_CHECKING:`` block importing the same names from the same modules, and ``tests/test_lazy_exports.py``
checks that block, the mapping and ``__all__`` agree; its ``# mypy: implicit-reexport`` line makes mypy take
those imports for exports in a user's ``--strict`` check too (wherever the package is installed). A deprecated alias resolves to its new name with a
``DeprecationWarning`` and is left out of ``__all__``; its new name may be another package's
(``"bench_nb.runformat.Run"``: a name moved off the top level).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any


class Exports:
    """The public names of ``package``: ``names`` maps each to the module defining it."""

    def __init__(
        self,
        package: str,
        modules: Mapping[str, Iterable[str]],
        *,
        submodules: Iterable[str] = (),
        deprecated: Mapping[str, tuple[str, str]] | None = None,
        listed: Iterable[str] = (),
    ) -> None:
        self.package = package
        self.names: dict[str, str] = {}
        for module, names in modules.items():
            for name in names:
                if name in self.names:
                    raise ValueError(f"{package}: {name!r} is exported from {self.names[name]} and {module}")
                self.names[name] = module
        self.all = sorted(self.names)
        self.submodules = tuple(submodules)
        self.deprecated = dict(deprecated or {})  # old name -> (new name, warning text)
        self._listed = sorted({*self.all, *self.submodules, *listed})

    def getattr(self, name: str) -> Any:
        """A public name, a deprecated alias (warning), or a submodule, imported on first access."""
        namespace = sys.modules[self.package].__dict__
        module = self.names.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        elif name in self.deprecated:
            new, message = self.deprecated[name]
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            if "." in new:  # moved to another package: ``bench_nb.charts.chart_memscore``
                home, _, attr = new.rpartition(".")
                return getattr(importlib.import_module(home), attr)
            return namespace[new] if new in namespace else self.getattr(new)
        elif not name.startswith("_"):  # a submodule (``bench_nb.charts``), as ``import`` would give it
            try:
                value = importlib.import_module(f"{self.package}.{name}")
            except ModuleNotFoundError as err:
                if err.name != f"{self.package}.{name}":
                    raise
                raise self.missing(name) from None
        else:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def missing(self, name: str) -> AttributeError:
        """The error for a name this package does not have, saying where it lives when another package of the
        same root declares it (``bench_nb.chart_memscore`` -> ``bench_nb.charts.chart_memscore``)."""
        where = lives_at(name, self.package.partition(".")[0])
        hint = f"; it lives at {where}" if where and where != f"{self.package}.{name}" else ""
        return AttributeError(f"module {self.package!r} has no attribute {name!r}{hint}")

    def dir(self) -> list[str]:
        """What tab completion offers: the public names and subpackages, nothing imported for internal use."""
        return list(self._listed)


def attach(
    package: str,
    modules: Mapping[str, Iterable[str]],
    *,
    submodules: Iterable[str] = (),
    deprecated: Mapping[str, tuple[str, str]] | None = None,
    listed: Iterable[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package`` (its ``__name__``) from ``modules``
    (defining module, absolute -> the names it gives). ``submodules``: the subpackages ``dir`` lists (any
    submodule is reached as an attribute); ``deprecated``: old name -> (new name, or the dotted path of a name moved elsewhere, and the warning
    text); ``listed``: more names for
    ``dir`` (``__version__``)."""
    exports = Exports(package, modules, submodules=submodules, deprecated=deprecated, listed=listed)
    return exports.getattr, exports.dir, exports.all


def exports_of(package: ModuleType) -> Exports:
    """The ``Exports`` behind a package's ``__getattr__`` (for the tests that check the declarations)."""
    getattr_ = package.__dict__.get("__getattr__")
    owner = getattr(getattr_, "__self__", None)
    if not isinstance(owner, Exports):
        raise TypeError(f"{package.__name__} does not declare its names with bench_nb.lazy.attach")
    return owner


def lives_at(name: str, root: str) -> str | None:
    """Where ``name`` is public under the package ``root``: ``root.name`` or ``root.<subpackage>.name`` for the
    subpackages its declaration lists, else ``None`` (a subpackage that cannot be imported is skipped)."""
    try:
        exports = exports_of(importlib.import_module(root))
    except (ImportError, TypeError):
        return None
    if name in exports.names or name in exports.deprecated:
        return f"{root}.{name}"
    for sub in exports.submodules:
        try:
            package = importlib.import_module(f"{root}.{sub}")
        except ImportError:
            continue
        if name in getattr(package, "__all__", ()):
            return f"{root}.{sub}.{name}"
    return None
