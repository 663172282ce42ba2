"""The public frame API's one rule (``bench_nb.frames.backend``): every public function that takes ``backend``
has two overloads (pandas by default, polars with ``backend="polars"``), a polars twin ``<name>_frame`` in its
own module with the same parameters, and returns what the overloads say on real runs, in snake_case columns.
What mypy sees is checked by ``make typecheck`` on ``backend_types.py``; this file checks it covers them all."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import bench_nb as bn
from bench_nb.frames.backend import to_backend

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
REPO = Path(__file__).resolve().parents[2]

# Functions that return a result object whose tables follow ``backend`` (no polars twin: the object's
# ``frames`` / ``by_type`` are the polars side).
RESULT_OBJECTS = {
    "judge_agreement": bn.metrics.JudgeAgreement,
    "paired_comparison": bn.metrics.paired.PairedComparison,
    "compare_runs": bn.metrics.Comparison,
}


def _public_frame_functions() -> dict[str, Callable[..., Any]]:
    """Every public function taking ``backend``: the facade's, and those of the packages that hold frames."""
    found: dict[str, Callable[..., Any]] = {}
    for name in bn.__all__:
        fn = getattr(bn, name)
        if inspect.isfunction(fn) and "backend" in inspect.signature(fn).parameters:
            found[f"{fn.__module__}.{name}"] = fn
    for package in ("bench_nb.frames", "bench_nb.metrics", "bench_nb.roi"):
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__, package + "."):
            module = importlib.import_module(info.name)
            for name, fn in vars(module).items():
                if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
                    continue
                if name != "to_backend" and "backend" in inspect.signature(fn).parameters:
                    found[f"{module.__name__}.{name}"] = fn
    return found


FUNCTIONS = _public_frame_functions()


def _twin_name(name: str) -> str:
    return name.removesuffix("_df") + "_frame"


def test_the_scan_finds_the_public_frame_functions() -> None:
    names = {key.rsplit(".", 1)[1] for key in FUNCTIONS}
    assert {"questions_df", "runs_df", "judgments_df", "memscore", "rank_intervals", "roi_runs_df"} <= names
    assert len(FUNCTIONS) >= 35


@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_two_overloads_pandas_by_default_polars_on_request(key: str) -> None:
    fn = FUNCTIONS[key]
    module = importlib.import_module(fn.__module__)
    hints_ns = vars(module) | {"pd": pd, "pl": pl}
    overloads = typing.get_overloads(fn)
    assert len(overloads) == 2, f"{key}: {len(overloads)} overloads"
    pandas_sig, polars_sig = (inspect.signature(o) for o in overloads)
    hints = [typing.get_type_hints(o, globalns=hints_ns) for o in overloads]
    assert hints[0]["backend"] == Literal["pandas"]
    assert pandas_sig.parameters["backend"].default is Ellipsis  # the default: pandas
    assert hints[1]["backend"] == Literal["polars"]
    assert polars_sig.parameters["backend"].default is inspect.Parameter.empty
    assert pandas_sig.parameters["backend"].kind is inspect.Parameter.KEYWORD_ONLY
    name = key.rsplit(".", 1)[1]
    if name in RESULT_OBJECTS:
        assert hints[0]["return"] == RESULT_OBJECTS[name][pd.DataFrame]
        assert hints[1]["return"] == RESULT_OBJECTS[name][pl.DataFrame]
    else:
        assert hints[0]["return"] is pd.DataFrame
        assert hints[1]["return"] is pl.DataFrame
    # the overloads name the same parameters as the function itself
    assert (
        list(pandas_sig.parameters) == list(inspect.signature(fn).parameters) == list(polars_sig.parameters)
    )


@pytest.mark.parametrize("key", sorted(k for k in FUNCTIONS if k.rsplit(".", 1)[1] not in RESULT_OBJECTS))
def test_each_has_a_polars_twin_in_its_module_with_the_same_parameters(key: str) -> None:
    fn = FUNCTIONS[key]
    module = importlib.import_module(fn.__module__)
    twin = getattr(module, _twin_name(fn.__name__), None)
    assert twin is not None, f"{key} has no {_twin_name(fn.__name__)} in {module.__name__}"
    public = [p for p in inspect.signature(fn).parameters.values() if p.name != "backend"]
    assert list(inspect.signature(twin).parameters.values()) == public
    assert typing.get_type_hints(twin, globalns=vars(module) | {"pd": pd, "pl": pl})["return"] is pl.DataFrame


def test_the_typing_snippet_covers_every_facade_frame_function_and_is_type_checked() -> None:
    snippet = (Path(__file__).parent / "backend_types.py").read_text()
    facade = {fn.__name__ for key, fn in FUNCTIONS.items() if fn.__name__ in bn.__all__}
    for name in facade:
        assert re.search(
            rf"assert_type\(bn\.{name}\([^\n]*\), (pd\.DataFrame|(bn\.)?[\w.]+\[pd\.DataFrame\])\)", snippet
        )
        assert re.search(rf'assert_type\(bn\.{name}\([^\n]*backend="polars"\)', snippet), name
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
    if name == "judge_agreement":
        assert isinstance(default.pairwise, pd.DataFrame) and isinstance(polars.pairwise, pl.DataFrame)
        assert isinstance(default.summary(), pd.DataFrame) and isinstance(
            polars.summary_frame(), pl.DataFrame
        )
        for table, frame in polars.frames.items():
            assert_frame_equal(polars.table(table), frame)
            assert_frame_equal(pl.from_pandas(default.table(table)), frame, check_dtypes=False)
            _no_camel_case(frame.columns, f"{name}.{table}")
        assert len(polars.pairwise) == 1  # two judges
        return
    if name == "compare_runs":
        assert isinstance(default.frame, pd.DataFrame) and isinstance(polars.frame, pl.DataFrame)
        pd.testing.assert_frame_equal(to_backend(polars.frame), default.frame)
        assert len(polars.frame) == 3  # three runs, three pairs
        _no_camel_case(polars.frame.columns, name)
        return
    assert isinstance(default, pd.DataFrame), type(default)
    assert isinstance(polars, pl.DataFrame), type(polars)
    assert list(default.columns) == polars.columns
    assert len(default) == len(polars)
    twin = getattr(importlib.import_module(fn.__module__), _twin_name(name))
    assert_frame_equal(twin(*args, **kwargs), polars)
    pd.testing.assert_frame_equal(to_backend(polars), default)
    _no_camel_case(polars.columns, name)
    if name != "beam_scores":  # the fixture runs are not BEAM runs: an empty frame with BEAM's columns
        assert len(polars) > 0, f"{name} returned no rows on real runs"


def test_calls_name_only_facade_functions() -> None:
    """A new facade frame function is checked on real runs as soon as it is in the facade (called with the
    runs alone unless CALLS says otherwise); a CALLS entry for a renamed function would silently go unused."""
    assert set(CALLS) <= set(FACADE)
