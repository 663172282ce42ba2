"""The provider registry: names -> factories called as ``factory(run_dir=..., **settings)``.

Built in: ``sqlite`` (default), ``full-context``, ``no-memory``, and, with the optional ``mem0`` extra
installed, ``mem0-local`` and ``hybrid``. A factory is a callable (usually the provider class) or a
``"module:attribute"`` string imported on first use, so optional dependencies are only imported by the
provider that needs them.

    >>> from bench_nb.providers import get_provider
    >>> provider = get_provider("full-context", run_dir="runs/r1", max_context_tokens=50_000)
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_nb.errors import ProviderError
from bench_nb.providers.base import Provider
from bench_nb.registry import Registry

ProviderFactory = Callable[..., Provider]

#: The extra that brings a built-in provider's dependencies, and the command that installs it.
EXTRA_INSTALL = (
    "pip install torch==2.13.0 && pip install 'bench_nb[mem0]' "
    "(torch first: a plain torch requirement pulls a multi-GB CUDA build)"
)

_BUILTIN: dict[str, str] = {
    "sqlite": "bench_nb.providers.sqlite:SqliteProvider",
    "full-context": "bench_nb.providers.baselines:FullContextProvider",
    "no-memory": "bench_nb.providers.baselines:NoMemoryProvider",
    "mem0-local": "bench_nb.providers.mem0_local:Mem0LocalProvider",
    "hybrid": "bench_nb.providers.hybrid:HybridProvider",
    # cloud providers (SDKs in the optional 'cloud' extra; owned by providers/cloud/)
    "supermemory": "bench_nb.providers.cloud.supermemory:SupermemoryProvider",
    "mem0": "bench_nb.providers.cloud.mem0_platform:Mem0PlatformProvider",
    "zep": "bench_nb.providers.cloud.zep:ZepProvider",
}
_NEEDS_EXTRA = frozenset({"mem0-local", "hybrid"})

_PROVIDERS: Registry[ProviderFactory | str] = Registry("provider", ProviderError)


def register_provider(name: str, factory: ProviderFactory | str, *, replace: bool = False) -> None:
    """Register ``factory`` under ``name``.

    Args:
        name: what users pass to ``-p`` / ``get_provider``.
        factory: called as ``factory(run_dir=Path, **settings)`` and returning a ``Provider``; or a
            ``"module:attribute"`` string naming one, imported on first use.
        replace: allow replacing an existing registration.

    Raises:
        ProviderError: ``name`` is taken (and ``replace`` is False) or empty.
    """
    _PROVIDERS.register(name, factory, replace=replace)


def unregister_provider(name: str) -> None:
    """Remove a registration (built-ins come back as they were)."""
    if name in _BUILTIN:
        _PROVIDERS.register(name, _BUILTIN[name], replace=True)
    elif name in _PROVIDERS:
        _PROVIDERS.unregister(name)


def list_providers() -> list[str]:
    """The registered provider names, sorted."""
    return sorted(_PROVIDERS.names())


def get_provider(name: str, *, run_dir: str | Path, **settings: Any) -> Provider:
    """A provider by registered name, made with the run directory and its settings.

    Raises:
        ProviderError: unknown name (the message lists the known ones), a setting the provider does not
            take (the message lists those it takes), or an optional dependency that is not installed.
    """
    factory = _PROVIDERS.get(name)
    if isinstance(factory, str):
        factory = _resolve(name, factory)
    _check_settings(name, factory, settings)
    provider = factory(run_dir=Path(run_dir), **settings)
    if not isinstance(provider, Provider):
        raise ProviderError(
            f"provider {name!r}: its factory returned {type(provider).__name__}, which lacks the Provider "
            "methods (name, ingest, await_indexing, search, clear)"
        )
    return provider


def _resolve(name: str, spec: str) -> ProviderFactory:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        if name in _NEEDS_EXTRA:
            raise ProviderError(
                f"provider {name!r} needs the optional 'mem0' extra ({err}); install it with: {EXTRA_INSTALL}"
            ) from err
        raise ProviderError(f"provider {name!r}: cannot import {module_name!r}: {err}") from err
    try:
        factory: ProviderFactory = getattr(module, attr)
    except AttributeError:
        raise ProviderError(f"provider {name!r}: {module_name!r} has no attribute {attr!r}") from None
    return factory


def _check_settings(name: str, factory: ProviderFactory, settings: dict[str, Any]) -> None:
    accepted: list[str] = []
    # A class whose ``__init__`` passes ``**settings`` on to its base's takes the base's settings too.
    for part in (factory, *getattr(factory, "__mro__", ())[1:]):
        try:
            params = inspect.signature(part).parameters
        except (TypeError, ValueError):
            return  # builtins and some C callables have no signature: let the call decide
        accepted += [
            p.name
            for p in params.values()
            if p.name != "run_dir"
            and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            break
    else:  # **settings all the way: anything goes
        return
    unknown = sorted(set(settings) - set(accepted))
    if unknown:
        takes = ", ".join(accepted) if accepted else "no settings"
        raise ProviderError(
            f"provider {name!r} does not take setting(s) {', '.join(unknown)}; it takes: {takes}"
        )


for _name, _spec in _BUILTIN.items():
    register_provider(_name, _spec)
