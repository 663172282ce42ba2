"""Every public chart function writes the Vega-Lite spec altair wrote for it (tests/fixtures/chart_specs.json,
made by tests/fixtures/chart_specs.py from the charts as they were built with altair), in both of its forms:
outside a report kernel an altair chart (its spec validated against Vega-Lite's schema by altair), in a report
kernel (``BENCH_NB_REPORT=1``) the wrapper of its themed dict, which altair reads back to the same spec."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from bench_nb import charts
from bench_nb.charts.spec import SCHEMA_URL, VegaLiteChart, field, in_report_kernel, values
from fixtures.chart_specs import SPECS, cases

REFERENCE: dict[str, Any] = json.loads(SPECS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def makers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return cases(tmp_path_factory.mktemp("chart-inputs"))


def test_every_public_chart_function_has_a_reference_spec(makers: dict[str, Any]) -> None:
    public = {name for name in charts.__all__ if name.startswith("chart_") and name != "chart_spec"}
    assert len(public) == 13
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


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_a_report_kernels_chart_holds_the_reference_spec(
    name: str, makers: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_NB_REPORT", "1")
    chart = makers[name]()
    assert isinstance(chart, VegaLiteChart)
    assert chart.to_dict() == REFERENCE[name]  # the same datasets' names, theme and $schema as altair's
    assert charts.chart_spec(chart) == REFERENCE[name]
    assert chart.to_dict() is not chart.to_dict()  # a copy: what a caller changes stays out of the chart


def test_a_report_kernel_writes_altairs_schema_and_reads_the_builders_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import altair as alt

    from bench_nb.reports.notebook import in_report

    assert SCHEMA_URL == alt.SCHEMA_URL
    for value, expected in (("1", True), ("0", False), (None, False)):
        if value is None:
            monkeypatch.delenv("BENCH_NB_REPORT", raising=False)
        else:
            monkeypatch.setenv("BENCH_NB_REPORT", value)
        assert in_report_kernel() is in_report() is expected


def test_field_shorthands_and_chart_data() -> None:
    assert field("run:N", title=None) == {"field": "run", "type": "nominal", "title": None}
    assert field("ms:Q") == {"field": "ms", "type": "quantitative"}
    assert field("ci_high") == {"field": "ci_high"}
    frame = pl.DataFrame({"a": [1, None], "b": ["x", "y"], "ok": [True, False]})
    assert values(frame) == {"values": [{"a": 1, "b": "x", "ok": True}, {"a": None, "b": "y", "ok": False}]}
    with pytest.raises(TypeError, match=r"\['when'\]"):
        values(pl.DataFrame({"when": [date(2026, 1, 1)]}))


def test_a_report_kernels_chart_saves_and_renders_without_altair(tmp_path: Path) -> None:
    code = f"""
import sys
from bench_nb import charts
import polars as pl
pairwise = pl.DataFrame({{"judge_a": ["f1"], "judge_b": ["llm"], "n": [9], "cohen_kappa": [0.5]}})
chart = charts.chart_judge_kappa(pairwise)
svg = charts.to_svg(chart)
png = charts.save(chart, {str(tmp_path / "k.png")!r}).read_bytes()
print(type(chart).__name__, svg.startswith("<svg") and "0.50" in svg, png[:4] == b"\\x89PNG",
      [m for m in ("altair", "jsonschema") if m in sys.modules])
"""
    env = os.environ | {"BENCH_NB_REPORT": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split("\n")[-2] == "VegaLiteChart True True []"


def test_a_report_kernels_chart_used_as_an_altair_chart_becomes_one() -> None:
    """A report notebook that calls ``.properties()`` on a chart works as it does in JupyterLab: the
    altair chart is built then (altair imported at that moment, not before, and not by displaying it)."""
    code = """
import sys
from IPython.core.formatters import DisplayFormatter
from bench_nb import charts
import polars as pl
pairwise = pl.DataFrame({"judge_a": ["f1"], "judge_b": ["llm"], "n": [9], "cohen_kappa": [0.5]})
chart = charts.chart_judge_kappa(pairwise)
DisplayFormatter().format(chart)  # what IPython looks up to display it
before = "altair" in sys.modules
wider = chart.properties(width=600)
print(type(chart).__name__, before, type(wider).__module__.split(".")[0], wider.to_dict()["width"])
"""
    env = os.environ | {"BENCH_NB_REPORT": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split("\n")[-2] == "VegaLiteChart False altair 600"
