"""Charts rendered in a worker process (started by the report builder) while a report's notebook runs, and the cheap imports that keep a
report fast: each behaviour checked on real processes (the worker, papermill's kernel, a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from notebook_files import write_notebook

import bench_nb
from bench_nb import lazy
from bench_nb.errors import ReportError
from bench_nb.reports import build_report, export_html
from bench_nb.reports.notebook import CHART_MIME
from bench_nb.reports.svg import SvgWorker, spec_to_svg

FIXTURE_GLOB = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")

SPEC = {
    "data": {"values": [{"provider": "sqlite", "accuracy": 0.8}, {"provider": "mem0", "accuracy": 0.6}]},
    "mark": "bar",
    "encoding": {
        "x": {"field": "provider", "type": "nominal"},
        "y": {"field": "accuracy", "type": "quantitative"},
    },
}
BAD_SPEC = {"mark": "no-such-mark", "data": {"values": [{"a": 1}]}}


def test_worker_renders_in_order_and_reports_what_it_cannot_draw() -> None:
    worker = SvgWorker()
    try:
        first, bad, again = worker.submit(SPEC), worker.submit(BAD_SPEC), worker.submit(SPEC)
        svg = first.result(timeout=60)
        assert svg.startswith("<svg") and "sqlite" in svg and "mem0" in svg
        assert svg == spec_to_svg(SPEC)  # the same SVG as rendering in this process
        with pytest.raises(ReportError, match="vl-convert could not render the chart"):
            bad.result(timeout=60)
        assert again.result(timeout=60) == svg  # one bad chart does not stop the worker
    finally:
        worker.close()


def test_a_worker_that_dies_fails_the_charts_it_still_owed() -> None:
    worker = SvgWorker()
    try:
        worker._proc.kill()
        late = worker.submit(SPEC)
        with pytest.raises(ReportError, match=r"chart worker stopped \(exit code -9\)"):
            late.result(timeout=60)
    finally:
        worker.close()


GOOD_CHART = "alt.Chart(alt.Data(values=[{'p': 'sqlite', 'a': 0.8}])).mark_bar().encode(x='p:N', y='a:Q')"
# Valid Vega-Lite, but its expression calls a function Vega does not have: vl-convert fails on it.
BAD_CHART = (
    "alt.Chart(alt.Data(values=[{'a': 1}])).mark_point()"
    ".transform_calculate(b='nosuchfunction(datum.a)').encode(x='b:Q').properties(title='Broken')"
)


def _chart_notebook(path: Path, chart: str) -> Path:
    setup = "from bench_nb import reports\nreports.setup_notebook()\nimport altair as alt"
    return write_notebook(path, setup, chart, "print('after the chart')")


@pytest.mark.notebook
def test_charts_render_in_the_background_and_land_in_their_cells(tmp_path: Path) -> None:
    nb_path = _chart_notebook(tmp_path / "chart.ipynb", GOOD_CHART)
    built = build_report(nb_path, {}, tmp_path / "chart.html", index=False)
    page = built.path.read_text()
    assert page.count("<svg") == 1 and "sqlite" in page
    assert page.index("<svg") < page.index("after the chart")  # in the chart's own cell, not at the end
    assert CHART_MIME not in page and "vegaEmbed" not in page  # no Vega-Lite left for JavaScript to draw


@pytest.mark.notebook
def test_a_chart_that_cannot_render_fails_the_report_naming_it(tmp_path: Path) -> None:
    nb_path = _chart_notebook(tmp_path / "bad.ipynb", BAD_CHART)
    with pytest.raises(
        ReportError,
        match=r"bad\.ipynb failed rendering its charts: .*chart 'Broken' \(displayed by In \[2\], cell 2\): .*"
        r"Unrecognized function: nosuchfunction; the executed notebook is kept",
    ):
        build_report(nb_path, {}, tmp_path / "bad.html", index=False)
    assert not (tmp_path / "bad.html").exists()


def test_export_puts_an_html_output_in_the_page_as_it_was_displayed() -> None:
    # A table or a note goes in after nbconvert's parse of the page, byte for byte; an output with an image,
    # or one nbconvert shows as something else, stays in the page it parses (the image gets alt text).
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("tables")
    table = "<table><caption>it&#x27;s a &quot;table&quot;</caption><tr><td>1</td></tr></table>"
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": table, "text/plain": "frame"}),
        nbformat.v4.new_output("display_data", data={"text/html": "<img src='data:,'>"}),
        nbformat.v4.new_output(
            "display_data", data={"text/html": "<b>it&#x27;s</b>", "text/markdown": "**it's**"}
        ),
    ]
    nb.cells = [cell]
    page = export_html(nb, "t")
    assert table in page and "bnb-slot" not in page
    assert '<img alt="No description has been provided for this image" src="data:,"/>' in page
    assert "<b>it's</b>" in page  # nbconvert's own HTML (parsed and written again): as before
    assert page.count("No description has been provided") == 1


def test_export_renders_a_chart_left_as_vega_lite() -> None:
    # A notebook executed by plain papermill or JupyterLab keeps its charts as Vega-Lite: the export draws them.
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("chart")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={CHART_MIME: SPEC, "text/plain": "<chart>"}),
        nbformat.v4.new_output("stream", name="stdout", text="after\n"),
    ]
    nb.cells = [cell]
    page = export_html(nb, "t")
    assert page.count("<svg") == 1 and spec_to_svg(SPEC) in page and CHART_MIME not in page
    assert page.index("<svg") < page.index("<pre>after")


def test_setup_notebook_in_a_live_kernel_displays_vega_lite_5_for_jupyterlab(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import altair as alt

    from bench_nb.reports import setup_notebook
    from bench_nb.reports.svg import EMBED_OPTIONS

    monkeypatch.delenv("BENCH_NB_REPORT", raising=False)
    before = alt.renderers.active
    try:
        setup_notebook()
        chart = (
            alt.Chart(alt.Data(values=SPEC["data"]["values"]))
            .mark_bar()
            .encode(x="provider:N", y="accuracy:Q")
        )
        data, metadata = chart._repr_mimebundle_()
        # The MIME type JupyterLab 4 draws with its bundled Vega (v6, altair's own, it does not know), and no
        # HTML fallback that would load Vega from a CDN.
        assert set(data) == {CHART_MIME, "text/plain"} and CHART_MIME == "application/vnd.vegalite.v5+json"
        assert data[CHART_MIME]["$schema"] == "https://vega.github.io/schema/vega-lite/v5.json"
        assert data[CHART_MIME]["config"]["range"]["category"][0] == "#0072B2"  # the theme applied
        assert metadata[CHART_MIME]["embed_options"] == EMBED_OPTIONS
        assert data["text/plain"] == "<chart 'bar'>"
        setup_notebook(static=True)
        html = chart._repr_mimebundle_()["text/html"]
        assert html.startswith('<figure class="bnb-chart"') and "<svg" in html and "sqlite" in html
    finally:
        alt.renderers.enable(before)


def test_charts_display_as_vega_lite_5_without_any_setup_call() -> None:
    # A fresh kernel that only imports bench_nb: altair's default would ask for Vega-Lite 6 (unknown to
    # JupyterLab 4) with an HTML fallback loading Vega from a CDN, blank offline.
    code = (
        "import bench_nb as bn\n"
        "from bench_nb import charts\n"
        f"data, metadata = charts.chart_memscore({FIXTURE_GLOB!r})._repr_mimebundle_()\n"
        "print(sorted(data))\n"
        "import altair as alt\n"
        "alt.renderers.enable('html')\n"  # a renderer the user chose is kept
        f"bundle = charts.chart_memscore({FIXTURE_GLOB!r})._repr_mimebundle_()\n"
        "print(sorted(bundle[0] if isinstance(bundle, tuple) else bundle))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    first, chosen = out.strip().splitlines()
    assert first == str(sorted([CHART_MIME, "text/plain"]))
    assert "text/html" in chosen


def test_import_bench_nb_loads_no_heavy_library() -> None:
    code = (
        "import sys, bench_nb\n"
        "from bench_nb import reports\n"
        "heavy = sorted(m for m in ('pandas', 'polars', 'altair', 'scipy', 'statsmodels', 'bench_nb.runner')"
        " if m in sys.modules)\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_public_name_resolves_lazily() -> None:
    assert bench_nb.__all__ == sorted(lazy.exports_of(bench_nb).names)
    for name in bench_nb.__all__:
        assert getattr(bench_nb, name) is not None, name
    assert bench_nb.load_runs.__module__ == "bench_nb.frames.store"  # a store, or runformat.load.load_runs
    assert bench_nb.charts.__name__ == "bench_nb.charts"  # subpackages too
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bench_nb.nope  # noqa: B018
    from bench_nb import reports

    for name in reports.__all__:
        assert getattr(reports, name) is not None, name


def test_reports_share_one_worker_and_a_dead_one_is_replaced() -> None:
    from bench_nb.reports.svg import NotebookCharts, shared_worker

    first = shared_worker()
    assert NotebookCharts().worker is first  # every report of this process renders on it
    first._proc.kill()
    first._proc.wait()
    second = shared_worker()
    assert second is not first and second.alive
    assert second.submit(SPEC).result(timeout=60) == spec_to_svg(SPEC)


def test_dir_of_bench_nb_lists_the_public_api_only() -> None:
    names = dir(bench_nb)
    assert set(bench_nb.__all__) <= set(names) and {"charts", "tables", "reports", "__version__"} <= set(
        names
    )
    assert not {"Any", "TYPE_CHECKING", "importlib", "annotations", "_EXPORTS"} & set(names)


def test_a_chart_with_missing_numbers_displays_as_valid_json() -> None:
    import json

    from bench_nb.reports.notebook import chart_bundle

    spec = {"data": {"values": [{"a": float("nan"), "b": float("inf"), "c": 1.5}]}, "mark": "point"}
    data, _ = chart_bundle(spec)
    text = json.dumps(data, allow_nan=False)  # what Jupyter's messages need: no NaN
    assert json.loads(text)[CHART_MIME]["data"]["values"] == [{"a": None, "b": None, "c": 1.5}]


def test_a_report_kernel_matches_altairs_chart_class_by_name() -> None:
    import altair as alt

    from bench_nb.reports.notebook import ALTAIR_CHART

    assert (alt.TopLevelMixin.__module__, alt.TopLevelMixin.__name__) == ALTAIR_CHART


@pytest.mark.notebook
def test_a_report_kernel_draws_bench_nb_charts_without_importing_altair(tmp_path: Path) -> None:
    setup = "import sys\nfrom bench_nb import reports, charts\nreports.setup_notebook()\nimport polars as pl"
    chart = (
        "charts.chart_judge_kappa(pl.DataFrame({'judge_a': ['f1'], 'judge_b': ['llm-judge'], 'n': [9],"
        " 'cohen_kappa': [0.5]}))"
    )
    probe = "print('loaded:', [m for m in ('altair', 'jsonschema') if m in sys.modules], type(_).__name__)"
    nb_path = write_notebook(tmp_path / "kappa.ipynb", setup, chart, probe)
    page = build_report(nb_path, {}, tmp_path / "kappa.html", index=False).path.read_text()
    assert page.count("<svg") == 1 and "llm-judge" in page and "0.50" in page
    assert "loaded: [] VegaLiteChart" in page
