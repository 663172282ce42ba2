"""Answerers by name: ``get_answerer("extractive")`` (offline, no model) or an LLM answerer by model alias.

Any name other than ``extractive`` is a model alias handed to
``bench_nb.models.llm.make_llm_answerer(alias, **opts)``.
"""

from __future__ import annotations

from typing import Any

from bench_nb.errors import ModelError
from bench_nb.models.aliases import unknown_name
from bench_nb.models.base import Answerer
from bench_nb.models.extractive import ExtractiveAnswerer

BUILTIN_ANSWERERS: tuple[str, ...] = ("extractive",)
# answerer names that call no model: their cost is known to be 0 (frames.usage)
OFFLINE_ANSWERERS = frozenset({"extractive"})


def get_answerer(spec: str, **opts: Any) -> Answerer:
    """The answerer named ``spec`` (see the module docstring).

    Raises:
        ModelError: the name is not built in and LLM answerers are not available, or the options do not fit.
    """
    name = spec.strip()
    if name == "extractive":
        try:
            return ExtractiveAnswerer(**opts)
        except (TypeError, ValueError) as err:
            raise ModelError(f"answerer {spec!r}: {err}") from None
    try:
        from bench_nb.models.llm import make_llm_answerer
    except ImportError as err:
        raise ModelError(
            f"unknown answerer {spec!r}: built in is {', '.join(BUILTIN_ANSWERERS)}; LLM answerers by "
            f"model alias need bench_nb.models.llm, which cannot be imported ({err})"
        ) from None
    try:
        return make_llm_answerer(name, **opts)  # type: ignore[no-any-return,unused-ignore]
    except ModelError as err:
        if not str(err).startswith("unknown model"):
            raise
        raise ModelError(unknown_name("answerer", spec, BUILTIN_ANSWERERS)) from None
