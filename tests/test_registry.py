"""One registry shape (``bench_nb.registry.Registry``) for benchmarks, providers, judges, answerers and run
importers: names and aliases without regard to case, a taken name refused unless replaced, an unknown name
answered with the nearest known one."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from bench_nb.benchmarks import get_benchmark_spec
from bench_nb.errors import DatasetError, JudgeError, ModelError, ProviderError
from bench_nb.judges.deterministic import ContainsJudge
from bench_nb.judges.registry import calls_no_model, get_judge, list_judges, register_judge, unregister_judge
from bench_nb.models.answerers import get_answerer, list_answerers
from bench_nb.providers import get_provider
from bench_nb.registry import Registry
from bench_nb.runformat.harnesses import HarnessFormat, list_importers
from bench_nb.runformat.load import OWN_FORMATS, RunFormatName


def test_names_and_aliases_are_found_without_regard_to_case() -> None:
    reg: Registry[int] = Registry("thing", KeyError)
    reg.register("Alpha", 1, aliases=("a",))
    assert (reg.get("ALPHA"), reg.get(" A "), reg.names()) == (1, 1, ["alpha"])
    assert "a" in reg and "b" not in reg and reg.find("b") is None


def test_a_taken_name_or_alias_is_refused_unless_replaced() -> None:
    reg: Registry[int] = Registry("thing", ValueError)
    reg.register("alpha", 1, aliases=("a",))
    for name, aliases in (("alpha", ()), ("beta", ("A",))):
        with pytest.raises(ValueError, match="already registered"):
            reg.register(name, 2, aliases=aliases)
    reg.register("alpha", 3, aliases=("al",), replace=True)
    assert (reg.get("al"), reg.find("a")) == (3, None)
    reg.unregister("al")
    assert reg.names() == []
    with pytest.raises(ValueError, match="must not be empty"):
        reg.register(" ", 1)


@pytest.mark.parametrize(
    ("lookup", "error", "message"),
    [
        (
            lambda: get_benchmark_spec("locmo"),
            DatasetError,
            "unknown benchmark 'locmo' (did you mean 'locomo'?)",
        ),
        (
            lambda: get_provider("sqlit", run_dir="x"),
            ProviderError,
            "unknown provider 'sqlit' (did you mean 'sqlite'?)",
        ),
    ],
)
def test_an_unknown_name_says_the_nearest(lookup: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        lookup()
    assert str(raised.value).startswith(message)


def test_a_registered_judge_takes_a_parameter_or_a_model() -> None:
    seen: list[Any] = []

    def exact(arg: str | None, **opts: Any) -> ContainsJudge:
        seen.append(arg)
        return ContainsJudge(**opts)

    register_judge("exact", exact)
    try:
        assert "exact" in list_judges()
        get_judge("exact"), get_judge("exact@strict"), get_judge("EXACT:gpt-4o")
        assert seen == [None, "strict", "gpt-4o"]
        assert calls_no_model("exact@strict") and not calls_no_model("exact:gpt-4o")
        with pytest.raises(JudgeError, match="already registered"):
            register_judge("exact", exact)
        with pytest.raises(JudgeError, match="holds no ':' or '@'"):
            register_judge("ex:act", exact)
    finally:
        unregister_judge("exact")
    assert "exact" not in list_judges()


def test_the_built_in_judges_and_answerers() -> None:
    assert list_judges() == ["f1", "contains", "overlap", "rubric", "lme-v2"]
    assert get_judge("f1@0.6").name == "f1@0.6" and calls_no_model("f1@0.6") and not calls_no_model("gpt-4o")
    with pytest.raises(JudgeError, match="judge 'contains:gpt-4o': it takes no"):
        get_judge("contains:gpt-4o")
    assert list_answerers() == ["extractive"] and get_answerer("Extractive").name == "extractive"
    with pytest.raises(ModelError, match="did you mean 'extractive'"):
        get_answerer("extractiv")


def test_the_importers_are_the_harness_formats_once() -> None:
    """The one spelled-out list of harness names (``HarnessFormat``) is what is registered, and the run
    formats ``load_runs`` takes are derived from it (``RunFormatName`` once listed them again and drifted)."""
    assert list_importers() == list(get_args(HarnessFormat))
    assert get_args(RunFormatName) == (*get_args(HarnessFormat), *OWN_FORMATS)
