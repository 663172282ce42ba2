"""The public frame API's one rule (``bench_nb.frames.backend``): a table is computed once, by a polars core
``<name>_frame``; the public function is ``with_backend(core, name)`` (pandas by default, polars with
``backend="polars"``), and nothing is written twice: no ``typing.overload``, no hand-written pandas wrapper.
A function that returns a result object takes ``backend`` for the tables on it. What mypy sees is checked by
``make typecheck`` on ``backend_types.py``; this file checks it covers them all."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import pydoc
import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import bench_nb as bn
from bench_nb.frames.backend import BACKEND_DOC, to_backend, with_backend

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("bench_nb.frames", "bench_nb.metrics", "bench_nb.roi")

# Functions that return a result object whose tables follow ``backend``, and how the object holds them in
# polars whatever the backend.
RESULT_OBJECTS: dict[str, tuple[type, Callable[[Any], dict[str, pl.DataFrame]]]] = {
    "judge_agreement": (bn.metrics.JudgeAgreement, lambda r: dict(r.frames)),
    "paired_comparison": (bn.metrics.paired.PairedComparison, lambda r: {"by_type": r.by_type_frame}),
    "compare_runs": (bn.metrics.Comparison, lambda r: {"frame": r.polars}),
}


def _modules() -> list[types.ModuleType]:
    found = []
    for package in PACKAGES:
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__, package + "."):
            found.append(importlib.import_module(info.name))
    return found


def _public_frame_functions() -> dict[str, Callable[..., Any]]:
    """Every public function taking ``backend``: the facade's, and those of the packages that hold frames."""
    found: dict[str, Callable[..., Any]] = {}
    for name in bn.__all__:
        fn = getattr(bn, name)
        if inspect.isfunction(fn) and "backend" in inspect.signature(fn).parameters:
            found[f"{fn.__module__}.{name}"] = fn
    for module in _modules():
        for name, fn in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
                continue
            if name != "to_backend" and "backend" in inspect.signature(fn).parameters:
                found[f"{module.__name__}.{name}"] = fn
    return found


def rule_violations(module: types.ModuleType) -> list[str]:
    """What in ``module`` breaks the rule: a public function taking ``backend`` that is neither made by
    ``with_backend`` from a polars core of the same module nor one of the result-object functions; a core
    not typed ``-> pl.DataFrame`` (``with_backend`` refuses a core taking ``backend``); any ``typing.overload`` (but ``to_backend``'s)."""
    problems = []
    hints_ns = vars(module) | {"pd": pd, "pl": pl}
    for name, fn in vars(module).items():
        if not inspect.isfunction(fn) or fn.__module__ != module.__name__:
            continue
        if typing.get_overloads(fn) and (module.__name__, name) != ("bench_nb.frames.backend", "to_backend"):
            problems.append(f"{name}: typing.overload (write it once: with_backend)")
        if name.startswith("_") or "backend" not in inspect.signature(fn).parameters:
            continue
        if name in RESULT_OBJECTS or (module.__name__, name) == ("bench_nb.frames.backend", "to_backend"):
            continue
        core = getattr(fn, "__wrapped__", None)
        if core is None or fn.__doc__ is None or not fn.__doc__.endswith(BACKEND_DOC):
            problems.append(f"{name}: takes backend but is not with_backend(core, {name!r})")
            continue
        if getattr(module, core.__name__, None) is not core or not core.__name__.endswith("_frame"):
            problems.append(f"{name}: its core {core.__name__} is not a <name>_frame of {module.__name__}")
        if typing.get_type_hints(core, globalns=hints_ns).get("return") is not pl.DataFrame:
            problems.append(f"{name}: its core {core.__name__} is not typed -> pl.DataFrame")
    return problems


FUNCTIONS = _public_frame_functions()


def test_the_scan_finds_the_public_frame_functions() -> None:
    names = {key.rsplit(".", 1)[1] for key in FUNCTIONS}
    assert {"questions_df", "runs_df", "judgments_df", "memscore", "rank_intervals", "roi_runs_df"} <= names
    assert set(RESULT_OBJECTS) <= names
    assert len(FUNCTIONS) >= 35


@pytest.mark.parametrize("module", _modules(), ids=lambda m: m.__name__)
def test_every_module_follows_the_rule(module: types.ModuleType) -> None:
    assert rule_violations(module) == []


def test_the_rule_catches_a_hand_written_pair() -> None:
    """A module breaking the rule the two old ways (overloads and a hand-written wrapper) is caught."""
    source = '''
from __future__ import annotations
from typing import Literal, overload
import pandas as pd
import polars as pl
from bench_nb.frames.backend import Backend, to_backend, with_backend

def good_frame(data: int) -> pl.DataFrame:
    """A table."""
    return pl.DataFrame({"x": [data]})

good = with_backend(good_frame, "good")

def untyped_frame(data: int):
    """A core not typed -> pl.DataFrame."""
    return pl.DataFrame({"x": [data]})

untyped = with_backend(untyped_frame, "untyped")

@overload
def twice(data: int, *, backend: Literal["pandas"] = ...) -> pd.DataFrame: ...
@overload
def twice(data: int, *, backend: Literal["polars"]) -> pl.DataFrame: ...
def twice(data: int, *, backend: Backend = "pandas") -> pd.DataFrame | pl.DataFrame:
    """By hand."""
    return to_backend(good_frame(data), backend)

def wrapper(data: int, *, backend: Backend = "pandas") -> pd.DataFrame | pl.DataFrame:
    """By hand, no overloads."""
    return to_backend(good_frame(data), backend)
'''
    module = types.ModuleType("bench_nb_rule_probe")
    exec(compile(source, "<probe>", "exec"), module.__dict__)
    found = rule_violations(module)
    assert any(p.startswith("twice: typing.overload") for p in found)
    assert any(p.startswith("twice: takes backend but is not with_backend") for p in found)
    assert any(p.startswith("wrapper: takes backend but is not with_backend") for p in found)
    assert any(p.startswith("untyped: its core untyped_frame is not typed") for p in found)
    assert not any(p.startswith("good") for p in found)


@pytest.mark.parametrize("key", sorted(k for k in FUNCTIONS if k.rsplit(".", 1)[1] not in RESULT_OBJECTS))
def test_the_public_signature_is_the_cores_plus_backend(key: str) -> None:
    """What ``help()`` and Jupyter's ``?`` show: the core's parameters, then ``backend`` (keyword-only,
    pandas by default), the core's docstring and a line on ``backend``; the name is the public one."""
    fn = FUNCTIONS[key]
    core = fn.__wrapped__  # type: ignore[attr-defined]
    params = list(inspect.signature(fn).parameters.values())
    backend = inspect.signature(fn).parameters["backend"]
    assert backend.kind is inspect.Parameter.KEYWORD_ONLY and backend.default == "pandas"
    assert [p for p in params if p.name != "backend"] == list(inspect.signature(core).parameters.values())
    assert fn.__doc__ == inspect.cleandoc(core.__doc__) + "\n\n" + BACKEND_DOC
    assert fn.__name__ == key.rsplit(".", 1)[1] and fn.__module__ == core.__module__
    shown = pydoc.render_doc(fn, renderer=pydoc.plaintext)  # what help() prints
    assert f"{fn.__name__}(" in shown and "backend: 'Backend' = 'pandas'" in shown
    assert BACKEND_DOC in shown


# Cores that read runs through load_runs or the judgments (a frame or loadable runs, not every ``RunsLike``):
# their input stays ``Any`` until load_runs takes a run store's runs and run views.
UNTYPED_INPUT = {
    "disputed_questions_frame",
    "replicate_summary_frame",
    "judge_audit_frame",
    "judge_error_rates_frame",
    "judge_vs_human_frame",
    "corrected_accuracy_table_frame",
    "prompt_sweep_frame",
    "length_bias_frame",
    "failure_reasons_frame",
    "failure_summary_frame",
    "paired_comparisons_frame",
}


@pytest.mark.parametrize("key", sorted(k for k in FUNCTIONS if k.rsplit(".", 1)[1] not in RESULT_OBJECTS))
def test_the_cores_input_is_typed(key: str) -> None:
    """A core takes ``QuestionsLike`` (runs, or a questions frame in pandas or polars), ``RunsLike`` or
    another named type, not ``Any`` (but the cores listed, which read runs another way)."""
    core = FUNCTIONS[key].__wrapped__  # type: ignore[attr-defined]
    first = next(iter(inspect.signature(core).parameters.values()))
    if core.__name__ in UNTYPED_INPUT:
        assert first.annotation == "Any", f"{core.__name__} is typed now: take it off UNTYPED_INPUT"
    else:
        assert first.annotation != "Any", f"{core.__name__}({first.name}: Any): type it (QuestionsLike?)"


# ``by`` has two meanings, each with one type: the columns a table's rows are per (one name or several), or
# ``"question_type"`` for rows per question type as well. Two functions use the word otherwise (left for the
# 0.3 API): ``lafs`` (the column runs are pooled into one system by) and ``budget_curve`` (the measure).
BY_TYPES = {"str | Sequence[str]": "columns", "Literal['question_type'] | None": "per type"}
BY_OTHERWISE = {"lafs", "budget_curve"}


@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_by_is_the_columns_or_per_question_type(key: str) -> None:
    fn = FUNCTIONS[key]
    by = inspect.signature(fn).parameters.get("by")
    if by is None or fn.__name__ in BY_OTHERWISE:
        return
    assert str(by.annotation).replace('"', "'") in BY_TYPES, f"{key}: by: {by.annotation}"


def test_a_wrong_backend_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="backend must be 'pandas' or 'polars', not 'arrow'"):
        bn.memscore(RUNS, backend="arrow")


def test_a_core_taking_backend_is_refused() -> None:
    def both_frame(data: int, *, backend: str = "pandas") -> pl.DataFrame:
        """A core that takes backend."""
        return pl.DataFrame({"x": [data]})

    with pytest.raises(TypeError, match="both_frame takes backend itself"):
        with_backend(both_frame, "both")


def test_with_backend_keeps_a_var_keyword_last() -> None:
    def probe_frame(data: int, **options: Any) -> pl.DataFrame:
        """Probe."""
        return pl.DataFrame({"x": [data], **{k: [v] for k, v in options.items()}})

    probe = with_backend(probe_frame, "probe")
    assert list(inspect.signature(probe).parameters) == ["data", "backend", "options"]
    assert probe(1, y=2, backend="polars").columns == ["x", "y"]
    assert list(probe(1, y=2).columns) == ["x", "y"]


def test_the_typing_snippet_covers_every_facade_frame_function_and_is_type_checked() -> None:
    snippet = (Path(__file__).parent / "backend_types.py").read_text()
    facade = {fn.__name__ for key, fn in FUNCTIONS.items() if fn.__name__ in bn.__all__}
    for name in facade:
        kind = RESULT_OBJECTS[name][0].__name__ if name in RESULT_OBJECTS else "Frame"
        assert re.search(rf"assert_type\(bn\.{name}\([^\n]*\), [\w.]*{kind}\)", snippet), name
        if name not in RESULT_OBJECTS:
            core = FUNCTIONS[f"{getattr(bn, name).__module__}.{name}"].__wrapped__  # type: ignore[attr-defined]
            assert re.search(rf"assert_type\([\w.]*\b{core.__name__}\([^\n]*\), pl\.DataFrame\)", snippet), (
                name
            )
    pyproject = (REPO / "pyproject.toml").read_text()
    assert re.search(r'^files = \[[^\]]*"tests/frames/backend_types\.py"', pyproject, re.M)


# --- on real runs: the three synthetic runs of tests/fixtures (two judges that sometimes disagree) ------------


@pytest.fixture(scope="module")
def runs() -> bn.runformat.RunSet:
    return bn.load_runs(sorted(RUNS.iterdir()))


def _errata_args(locomo_audit: Path) -> tuple[Any, Any]:
    return bn.load_errata(locomo_audit / "errors.json"), bn.load_runs(
        locomo_audit / "fc-baseline" / "gpt-4o-mini-memos"
    )


# How to call each facade function on real data (anything not listed is called with the runs alone).
CALLS: dict[str, Callable[[bn.runformat.RunSet, Any], tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "answer_key_ceiling": lambda _, audit: (_errata_args(audit), {}),
    "regrade_with_errata": lambda _, audit: (_errata_args(audit), {}),
    "judge_agreement": lambda r, _: ((bn.judgments_df(r, backend="polars"),), {}),
}
FACADE = sorted({fn.__name__ for fn in FUNCTIONS.values() if fn.__name__ in bn.__all__})
NEEDS_AUDIT = {"answer_key_ceiling", "regrade_with_errata"}


def _no_camel_case(columns: list[str], name: str) -> None:
    camel = [c for c in columns if re.search(r"[a-z][A-Z]", c)]
    assert camel == [], f"{name}: camelCase columns {camel}"


@pytest.mark.parametrize("name", FACADE)
def test_on_real_runs_pandas_by_default_polars_on_request(
    name: str, runs: bn.runformat.RunSet, request: Any
) -> None:
    audit = request.getfixturevalue("locomo_audit") if name in NEEDS_AUDIT else None
    args, kwargs = CALLS.get(name, lambda r, _: ((r,), {}))(runs, audit)
    fn = getattr(bn, name)
    default, polars = fn(*args, **kwargs), fn(*args, **kwargs, backend="polars")
    if name in RESULT_OBJECTS:
        kind, tables = RESULT_OBJECTS[name]
        assert isinstance(default, kind) and isinstance(polars, kind)
        for table, frame in tables(polars).items():
            assert isinstance(getattr(polars, table), pl.DataFrame), table
            assert isinstance(getattr(default, table), pd.DataFrame), table
            assert_frame_equal(getattr(polars, table), frame)
            pd.testing.assert_frame_equal(getattr(default, table), to_backend(frame))
            _no_camel_case(frame.columns, f"{name}.{table}")
        if name == "judge_agreement":
            assert isinstance(default.summary(), pd.DataFrame)
            assert isinstance(polars.summary(backend="polars"), pl.DataFrame)
            assert len(polars.pairwise) == 1  # two judges
        if name == "compare_runs":
            assert len(polars.frame) == 3  # three runs, three pairs
        return
    assert isinstance(default, pd.DataFrame), type(default)
    assert isinstance(polars, pl.DataFrame), type(polars)
    assert list(default.columns) == polars.columns
    assert len(default) == len(polars)
    assert_frame_equal(fn.__wrapped__(*args, **kwargs), polars)
    pd.testing.assert_frame_equal(to_backend(polars), default)
    _no_camel_case(polars.columns, name)
    if name != "beam_scores":  # the fixture runs are not BEAM runs: an empty frame with BEAM's columns
        assert len(polars) > 0, f"{name} returned no rows on real runs"


def test_one_pair_hands_out_its_tables_in_the_backend_asked(runs: bn.runformat.RunSet) -> None:
    """``compare_runs(runs, a, b)``: the row and the pair's per-type table follow ``backend``; the pair's
    scalars are the row's."""
    a, b = [r.run_id for r in runs][:2]
    default, polars = bn.compare_runs(runs, a, b), bn.compare_runs(runs, a, b, backend="polars")
    assert isinstance(default.frame, pd.DataFrame) and isinstance(polars.frame, pl.DataFrame)
    assert default.pair is not None and polars.pair is not None
    assert isinstance(default.pair.by_type, pd.DataFrame) and isinstance(polars.pair.by_type, pl.DataFrame)
    assert polars.frame.columns == list(polars.pair.as_dict())
    assert polars.frame["p_value"][0] == polars.pair.p_value
    assert "backend" not in polars.pair.as_dict() and "by_type_frame" not in polars.pair.as_dict()
    pd.testing.assert_frame_equal(default.pair.by_type, to_backend(polars.pair.by_type_frame))


def test_calls_name_only_facade_functions() -> None:
    """A new facade frame function is checked on real runs as soon as it is in the facade (called with the
    runs alone unless CALLS says otherwise); a CALLS entry for a renamed function would silently go unused."""
    assert set(CALLS) <= set(FACADE)
