"""The frames' view structs are a projection of the run format's: every field a view reads has the run
format's name, type and default, so the two cannot drift apart (one format, two ways to decode it)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from bench_nb.runformat import format as fmt
from bench_nb.runformat import view

# view struct -> the run-format struct it projects
PROJECTIONS: dict[type, type] = {
    view.PhaseView: fmt.Phase,
    view.SearchView: fmt.SearchPhase,
    view.AnswerView: fmt.AnswerPhase,
    view.EvaluateView: fmt.EvaluatePhase,
    view.PhasesView: fmt.Phases,
    view.QuestionView: fmt.Question,
    view.CheckpointView: fmt.Checkpoint,
}
# The one field a view decodes another way on purpose (view.SkippedResult's docstring says why).
DELIBERATE = {(view.SearchView, "results")}


def _matches(mine: Any, theirs: Any) -> bool:
    """Whether a view's field type reads the run format's: the same type, with each view struct standing
    for the run-format struct it projects or one derived from it (``PhaseView`` reads ``IngestPhase``)."""
    if isinstance(mine, type) and mine in PROJECTIONS:
        return isinstance(theirs, type) and issubclass(theirs, PROJECTIONS[mine])
    mine_args, their_args = getattr(mine, "__args__", None), getattr(theirs, "__args__", None)
    if mine_args is None or their_args is None:
        return bool(mine == theirs)
    return (
        getattr(mine, "__origin__", type(mine)) == getattr(theirs, "__origin__", type(theirs))
        and len(mine_args) == len(their_args)
        and all(_matches(a, b) for a, b in zip(mine_args, their_args, strict=True))
    )


def _default(field: msgspec.structs.FieldInfo) -> Any:
    """A field's default; a struct made by a default factory stands for its type (projected to the format)."""
    if field.default is not msgspec.NODEFAULT:
        return field.default
    if field.default_factory is not msgspec.NODEFAULT:
        made = field.default_factory()
        if isinstance(made, msgspec.Struct):
            return PROJECTIONS.get(type(made), type(made))
        return made
    return msgspec.NODEFAULT


def _drift(view_type: type, format_type: type) -> list[str]:
    """Each way ``view_type`` reads a field other than ``format_type`` declares it."""
    formats = {f.name: f for f in msgspec.structs.fields(format_type)}
    out = []
    for field in msgspec.structs.fields(view_type):
        where = f"{view_type.__name__}.{field.name}"
        if field.name not in formats:
            out.append(f"{where} is not a field of {format_type.__name__}")
            continue
        if (view_type, field.name) in DELIBERATE:
            continue
        theirs = formats[field.name]
        if not _matches(field.type, theirs.type):
            out.append(f"{where}: type {field.type} vs {theirs.type}")
        mine, expected = _default(field), _default(theirs)
        same = (
            issubclass(expected, mine)
            if isinstance(mine, type) and isinstance(expected, type)
            else mine == expected
        )
        if not same or field.required != theirs.required:
            out.append(f"{where}: default {mine!r} vs {expected!r}")
    return out


@pytest.mark.parametrize("projection", list(PROJECTIONS.items()), ids=lambda p: p[0].__name__)
def test_each_view_field_has_the_run_formats_name_type_and_default(projection: tuple[type, type]) -> None:
    assert _drift(*projection) == []


def test_a_view_that_drifts_from_the_format_is_caught() -> None:
    class Drifted(view.AnswerView):
        contextTokens: float | None = None  # the format says int
        hypothesis: str | None = ""  # the format's default is None
        startedAtt: str | None = None  # a typo: the format has no such field

    assert _drift(Drifted, fmt.AnswerPhase) == [
        "Drifted.hypothesis: default '' vs None",
        "Drifted.contextTokens: type float | None vs int | None",
        "Drifted.startedAtt is not a field of AnswerPhase",
    ]
