"""Judges by name: ``get_judge("f1")``, ``get_judge("contains")``, or an LLM judge by model alias.

A registered judge is named ``<name>``, ``<name>@<parameter>`` or ``<name>:<model alias>``; its factory is called
as ``factory(arg, **opts)`` with what follows the ``@`` or ``:`` (None when nothing does). Built in (no model,
offline): ``f1`` (token F1 >= 0.5; ``f1@0.6`` or ``threshold=0.6`` for another threshold), ``contains``, the
deliberately lenient ``overlap`` (for judge audits) and ``rubric`` (BEAM's rubric by word overlap).
``rubric:<model alias>`` grades BEAM's rubric with a model (``bench_nb.judges.beam``). ``lme-v2`` applies
LongMemEval-V2's per-question ``eval_function``; ``lme-v2:<model alias>`` also grades its two LLM-judged rules
(``bench_nb.judges.lmev2``). Any other name is a model alias handed to
``bench_nb.judges.llm.make_llm_judge(alias, **opts)``. ``register_judge`` adds one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bench_nb.errors import BenchNbError, JudgeError, ModelError
from bench_nb.judges.base import Judge
from bench_nb.judges.deterministic import ContainsJudge, F1Judge, OverlapJudge
from bench_nb.models.aliases import unknown_name
from bench_nb.registry import Registry

JudgeFactory = Callable[..., Judge]
"""Makes a judge: ``factory(arg, **opts)``, ``arg`` what follows the name's ``@`` or ``:`` (None: nothing)."""

_JUDGES: Registry[JudgeFactory] = Registry("judge", JudgeError)
_NAME = re.compile(r"^(?P<base>[^:@]+)(?:(?P<sep>[:@])(?P<arg>.*))?$")


def register_judge(name: str, factory: JudgeFactory, *, replace: bool = False) -> None:
    """Register ``factory`` as the judge ``name`` (also reached as ``name@<parameter>`` and
    ``name:<model alias>``, see ``JudgeFactory``).

    Raises:
        JudgeError: the name is taken and ``replace`` is False, or it holds ``:`` or ``@``.
    """
    if ":" in name or "@" in name:
        raise JudgeError(f"a judge name holds no ':' or '@', not {name!r}")
    _JUDGES.register(name, factory, replace=replace)


def unregister_judge(name: str) -> None:
    """Remove a registered judge."""
    _JUDGES.unregister(name)


def list_judges() -> list[str]:
    """The registered judge names, in registration order (any other name is a model alias)."""
    return _JUDGES.names()


def _split(name: str) -> tuple[JudgeFactory | None, str, str | None]:
    """The registered factory a judge name reaches (None: a model alias), its separator and argument."""
    m = _NAME.match(name.strip())
    if m is None:
        return None, "", None
    return _JUDGES.find(m["base"]), m["sep"] or "", (m["arg"] or "").strip() or None


def is_registered_judge(name: str) -> bool:
    """Whether ``name`` reaches a registered judge (``f1``, ``f1@0.6``, ``rubric:gpt-4o``), not a model alias."""
    return _split(name)[0] is not None


def calls_no_model(name: str) -> bool:
    """Whether the judge named ``name`` in a run (``Judge.name``, as ``benchNb.judges`` records it) is a
    registered one that calls no model: named without a ``:<model alias>`` (``f1``, ``f1@0.6``, ``contains``,
    ``overlap``, ``rubric``, ``lme-v2``). Their cost is known to be 0 (``frames.usage``)."""
    factory, sep, _ = _split(name)
    return factory is not None and sep != ":"


def get_judge(spec: str, **opts: Any) -> Judge:
    """The judge named ``spec`` (see the module docstring).

    Raises:
        JudgeError: the name is neither registered nor a model alias, or the options do not fit.
    """
    name = spec.strip()
    factory, _, arg = _split(name)
    if factory is not None:
        try:
            return factory(arg, **opts)
        except BenchNbError:
            raise
        except (TypeError, ValueError) as err:
            raise JudgeError(f"judge {spec!r}: {err}") from None
    from bench_nb.judges.llm import make_llm_judge  # the model clients: imported when a model judges

    try:
        return make_llm_judge(name, **opts)
    except JudgeError as err:
        cause = err.__cause__
        if not (isinstance(cause, ModelError) and str(cause).startswith("unknown model")):
            raise
        raise JudgeError(unknown_name("judge", spec, tuple(list_judges()))) from None


def _no_arg(cls: Callable[..., Judge]) -> JudgeFactory:
    def factory(arg: str | None, **opts: Any) -> Judge:
        if arg is not None:
            raise ValueError(f"it takes no ':<model>' or '@<parameter>' (got {arg!r})")
        return cls(**opts)

    return factory


def _f1(arg: str | None, **opts: Any) -> Judge:
    return F1Judge(**({"threshold": float(arg)} if arg else {}), **opts)


def _rubric(arg: str | None, **opts: Any) -> Judge:
    from bench_nb.judges.beam import make_rubric_judge

    return make_rubric_judge(arg, **opts)


def _lmev2(arg: str | None, **opts: Any) -> Judge:
    from bench_nb.judges.lmev2 import make_lmev2_judge

    return make_lmev2_judge(arg, **opts)


for _name, _factory in (
    ("f1", _f1),
    ("contains", _no_arg(ContainsJudge)),
    ("overlap", _no_arg(OverlapJudge)),
    ("rubric", _rubric),
    ("lme-v2", _lmev2),
):
    register_judge(_name, _factory)
