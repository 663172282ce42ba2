"""Every public chart function writes the Vega-Lite spec altair wrote for it (tests/fixtures/chart_specs.json,
made by tests/fixtures/chart_specs.py from the charts as they were built with altair), in both of its forms:
outside a report kernel an altair chart (its spec validated against Vega-Lite's schema by altair), in a report
kernel (``BENCH_NB_REPORT=1``) the wrapper of its themed dict, which altair reads back to the same spec."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench_nb import charts
from fixtures.chart_specs import SPECS, cases

REFERENCE: dict[str, Any] = json.loads(SPECS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def makers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return cases(tmp_path_factory.mktemp("chart-inputs"))


def test_every_public_chart_function_has_a_reference_spec(makers: dict[str, Any]) -> None:
    public = {name for name in charts.__all__ if name.startswith("chart_") and name != "chart_spec"}
    assert len(public) == 12
    source = SPECS.with_suffix(".py").read_text(encoding="utf-8")
    missing = sorted(name for name in public if f"charts.{name}(" not in source)
    assert not missing, f"tests/fixtures/chart_specs.py makes no {missing}"
    assert set(makers) == set(REFERENCE)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_the_altair_chart_writes_the_reference_spec(
    name: str, makers: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import altair as alt

    monkeypatch.delenv("BENCH_NB_REPORT", raising=False)
    chart = makers[name]()
    assert isinstance(chart, alt.TopLevelMixin)
    assert charts.chart_spec(chart) == REFERENCE[name]  # altair validates it against the schema here
