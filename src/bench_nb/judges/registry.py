"""Judges by name: ``get_judge("f1")``, ``get_judge("contains")``, or an LLM judge by model alias.

Built in (no model, offline): ``f1`` (token F1 >= 0.5; ``f1@0.6`` or ``threshold=0.6`` for another
threshold), ``contains``, the deliberately lenient ``overlap`` (for judge audits) and ``rubric`` (BEAM's
rubric by word overlap). ``rubric:<model alias>`` grades BEAM's rubric with a model
(``bench_nb.judges.beam``). ``lme-v2`` applies LongMemEval-V2's per-question ``eval_function``; ``lme-v2:<model
alias>`` also grades its two LLM-judged rules (``bench_nb.judges.lmev2``). Any other name is a model alias handed to
``bench_nb.judges.llm.make_llm_judge(alias, **opts)``.
"""

from __future__ import annotations

from typing import Any

from bench_nb.errors import JudgeError, ModelError
from bench_nb.judges.base import Judge
from bench_nb.judges.deterministic import ContainsJudge, F1Judge, OverlapJudge
from bench_nb.models.aliases import unknown_name

BUILTIN_JUDGES: tuple[str, ...] = ("f1", "contains", "overlap", "rubric", "lme-v2")


def calls_no_model(name: str) -> bool:
    """Whether the judge named ``name`` in a run (``Judge.name``, as ``benchNb.judges`` records it) is a
    built-in one that calls no model: ``f1`` (any threshold), ``contains``, ``overlap``, ``rubric`` and
    ``lme-v2`` without a model alias. Their cost is known to be 0 (``frames.usage``)."""
    return name in BUILTIN_JUDGES or name.startswith("f1@")


def get_judge(spec: str, **opts: Any) -> Judge:
    """The judge named ``spec`` (see the module docstring).

    Raises:
        JudgeError: the name is not built in and LLM judges are not available, or the options do not fit.
    """
    name = spec.strip()
    try:
        if name == "f1" or name.startswith("f1@"):
            if name.startswith("f1@"):
                opts = {"threshold": float(name[3:]), **opts}
            return F1Judge(**opts)
        if name == "contains":
            return ContainsJudge(**opts)
        if name == "overlap":
            return OverlapJudge(**opts)
    except (TypeError, ValueError) as err:
        raise JudgeError(f"judge {spec!r}: {err}") from None
    if name == "rubric" or name.startswith("rubric:"):
        from bench_nb.judges.beam import make_rubric_judge

        alias = name.partition(":")[2].strip() or None
        return make_rubric_judge(alias, **opts)
    if name == "lme-v2" or name.startswith("lme-v2:"):
        from bench_nb.judges.lmev2 import make_lmev2_judge

        return make_lmev2_judge(name.partition(":")[2].strip() or None, **opts)
    try:
        from bench_nb.judges.llm import make_llm_judge
    except ImportError as err:
        raise JudgeError(
            f"unknown judge {spec!r}: built-in judges are {', '.join(BUILTIN_JUDGES)}; "
            f"LLM judges by model alias need bench_nb.judges.llm, which cannot be imported ({err})"
        ) from None
    try:
        return make_llm_judge(name, **opts)  # type: ignore[no-any-return,unused-ignore]
    except JudgeError as err:
        cause = err.__cause__
        if not (isinstance(cause, ModelError) and str(cause).startswith("unknown model")):
            raise
        raise JudgeError(unknown_name("judge", spec, BUILTIN_JUDGES)) from None
