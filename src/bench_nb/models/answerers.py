"""Answerers by name: ``get_answerer("extractive")`` (offline, no model) or an LLM answerer by model alias.

A registered answerer (``register_answerer``; built in: ``extractive``) is made as ``factory(**opts)``; any
other name is a model alias handed to ``bench_nb.models.llm.make_llm_answerer(alias, **opts)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench_nb.errors import BenchNbError, ModelError
from bench_nb.models.aliases import unknown_name
from bench_nb.models.base import Answerer
from bench_nb.models.extractive import ExtractiveAnswerer
from bench_nb.registry import Registry

AnswererFactory = Callable[..., Answerer]
"""Makes an answerer: ``factory(**opts)``."""

_ANSWERERS: Registry[AnswererFactory] = Registry("answerer", ModelError)
_OFFLINE: set[str] = set()


def register_answerer(
    name: str, factory: AnswererFactory, *, offline: bool = False, replace: bool = False
) -> None:
    """Register ``factory`` as the answerer ``name``; ``offline``: it calls no model (its cost is known to be 0,
    ``frames.usage``).

    Raises:
        ModelError: the name is taken and ``replace`` is False.
    """
    _ANSWERERS.register(name, factory, replace=replace)
    (_OFFLINE.add if offline else _OFFLINE.discard)(name.strip().lower())


def list_answerers() -> list[str]:
    """The registered answerer names (any other name is a model alias)."""
    return _ANSWERERS.names()


def is_registered_answerer(name: str) -> bool:
    """Whether ``name`` is a registered answerer, not a model alias."""
    return name in _ANSWERERS


def calls_no_model(name: object) -> bool:
    """Whether the answerer named ``name`` in a run is a registered one that calls no model (``extractive``)."""
    return isinstance(name, str) and name.strip().lower() in _OFFLINE


def get_answerer(spec: str, **opts: Any) -> Answerer:
    """The answerer named ``spec`` (see the module docstring).

    Raises:
        ModelError: the name is not registered and LLM answerers are not available, or the options do not fit.
    """
    name = spec.strip()
    factory = _ANSWERERS.find(name)
    if factory is not None:
        try:
            return factory(**opts)
        except BenchNbError:
            raise
        except (TypeError, ValueError) as err:
            raise ModelError(f"answerer {spec!r}: {err}") from None
    try:
        from bench_nb.models.llm import make_llm_answerer
    except ImportError as err:
        raise ModelError(
            f"unknown answerer {spec!r}: registered are {', '.join(list_answerers())}; LLM answerers by "
            f"model alias need bench_nb.models.llm, which cannot be imported ({err})"
        ) from None
    try:
        return make_llm_answerer(name, **opts)  # type: ignore[no-any-return,unused-ignore]
    except ModelError as err:
        if not str(err).startswith("unknown model"):
            raise
        raise ModelError(unknown_name("answerer", spec, tuple(list_answerers()))) from None


register_answerer("extractive", ExtractiveAnswerer, offline=True)
