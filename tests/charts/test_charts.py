from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

import bench_nb
from bench_nb import charts
from bench_nb.charts.save import chart_spec
from synthetic_runs import write_synthetic_runs

FIXTURE_RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


@pytest.fixture(scope="session")
def fixture_runs() -> list[str]:
    return sorted(str(p) for p in FIXTURE_RUNS.iterdir() if p.is_dir())


@pytest.fixture(scope="session")
def questions(fixture_runs: list[str]) -> pl.DataFrame:
    q = bench_nb.questions_df(fixture_runs, backend="polars")
    assert isinstance(q, pl.DataFrame)
    return q


@pytest.fixture(scope="session")
def large_questions(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """3 runs x 2,000 questions = 6,000 rows, above altair's 5,000-row limit."""
    runs = write_synthetic_runs(tmp_path_factory.mktemp("large"), n_questions=2000)
    q = bench_nb.questions_df(runs, backend="polars")
    assert isinstance(q, pl.DataFrame)
    return q


def _values(spec: dict) -> list[dict]:
    """Every inline data row of a Vega-Lite spec (top level and datasets)."""
    rows: list[dict] = []
    for ds in spec.get("datasets", {}).values():
        rows.extend(ds)
    return rows


def _all_charts(q: pl.DataFrame, runs: list[str]) -> dict[str, object]:
    agreement = bench_nb.judge_agreement(bench_nb.judgments_df(runs))
    return {
        "memscore": charts.chart_memscore(q),
        "accuracy": charts.chart_accuracy_by_type(q),
        "latency": charts.chart_latency(q),
        "tokens": charts.chart_context_tokens(q),
        "kappa": charts.chart_judge_kappa(agreement),
        "outcomes": charts.chart_outcome_matrix(q),
        "intervals": charts.chart_accuracy_intervals(q),
        "pareto": charts.chart_pareto(q),
    }


def test_every_chart_spec_is_strict_json(questions: pl.DataFrame, fixture_runs: list[str]) -> None:
    # A NaN in a spec is not JSON: Jupyter's message serialisation warns and JupyterLab may not draw the chart.
    for name, chart in _all_charts(questions, fixture_runs).items():
        assert json.dumps(chart_spec(chart), allow_nan=False), name  # ValueError on NaN or infinity


def test_memscore_chart_plots_the_memscore_numbers(questions: pl.DataFrame) -> None:
    spec = chart_spec(charts.chart_memscore(questions))
    rows = {r["run_id"]: r for r in _values(spec)}
    scores = bench_nb.memscore(questions, backend="polars")
    assert set(rows) == set(scores["run_id"].to_list())
    for s in scores.iter_rows(named=True):
        row = rows[s["run_id"]]
        assert row["accuracy"] == pytest.approx(s["accuracy"])
        assert row["accuracy_ci_low"] == pytest.approx(s["accuracy_ci_low"])
        assert row["latency_ms"] == s["latency_ms"]
        assert row["memscore"] == s["memscore"]
    enc = json.dumps(spec)
    assert '"provider"' in enc and "tooltip" in enc and '"size"' in enc


def test_accuracy_chart_carries_wilson_intervals(questions: pl.DataFrame) -> None:
    rows = _values(chart_spec(charts.chart_accuracy_by_type(questions)))
    acc = bench_nb.accuracy_by_type(questions, backend="polars").filter(pl.col("scored") > 0)
    assert len(rows) == len(acc)
    want = {(r["run_id"], r["question_type_norm"]): r for r in acc.iter_rows(named=True)}
    for r in rows:
        w = want[(r["run_id"], r["type"])]
        assert (r["ci_low"], r["ci_high"]) == pytest.approx((w["ci_low"], w["ci_high"]))


def test_kappa_heatmap_shows_the_pairwise_table(fixture_runs: list[str]) -> None:
    agreement = bench_nb.judge_agreement(bench_nb.judgments_df(fixture_runs))
    rows = _values(chart_spec(charts.chart_judge_kappa(agreement)))
    kappa = float(agreement.pairwise["cohen_kappa"].iloc[0])
    off = [r for r in rows if r["judge_a"] != r["judge_b"]]
    assert len(off) == 2 and all(r["value"] == pytest.approx(kappa) for r in off)
    assert {r["text"] for r in off} == {f"{kappa:.2f}"}
    with pytest.raises(ValueError, match="cohen_kappa"):
        charts.chart_judge_kappa(agreement.summary())


def test_outcome_matrix_puts_differing_questions_first_and_caps_rows(questions: pl.DataFrame) -> None:
    spec = chart_spec(charts.chart_outcome_matrix(questions, max_questions=10))
    rows = _values(spec)
    assert len({r["question_id"] for r in rows}) == 10
    by_q: dict[str, set[str]] = {}
    for r in rows:
        by_q.setdefault(r["question_id"], set()).add(r["outcome"])
    assert all(len(v) > 1 for v in by_q.values())  # the fixtures have more than 10 differing questions
    failed = questions.filter(pl.col("status") == "failed")["question_id"].unique().to_list()
    full = _values(chart_spec(charts.chart_outcome_matrix(questions, max_questions=1000)))
    assert {r["outcome"] for r in full if r["question_id"] in failed} == {"failed"}


def test_large_runs_stay_under_altairs_row_limit(
    large_questions: pl.DataFrame, fixture_runs: list[str]
) -> None:
    assert len(large_questions) > 5000
    for name, chart in _all_charts(large_questions, fixture_runs).items():
        spec = chart.to_dict()  # the default transformer raises MaxRowsError past 5,000 rows
        assert len(_values(spec)) < 5000, name
    rows = _values(charts.chart_context_tokens(large_questions).to_dict())
    evaluated = large_questions.filter(pl.col("status") == "evaluated")
    assert sum(r["questions"] for r in rows if r["kind"] == "bin") == evaluated["context_tokens"].count()


def test_every_chart_saves_offline_to_png_svg_and_html(
    tmp_path: Path, questions: pl.DataFrame, fixture_runs: list[str]
) -> None:
    for name, chart in _all_charts(questions, fixture_runs).items():
        png = charts.save(chart, tmp_path / f"{name}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000, name
        svg = charts.save(chart, tmp_path / f"{name}.svg").read_text()
        assert svg.startswith("<svg") and "<text" in svg, name
    html = charts.save(charts.chart_memscore(questions), tmp_path / "m.html").read_text()
    assert not re.findall(r"""(?:src|href)\s*=\s*["']https?://""", html)
    assert "vega" in html.lower() and "<script" in html  # the JavaScript is inlined
    svg = (tmp_path / "memscore.svg").read_text()
    for provider in ("sqlite", "full-context", "no-memory"):
        assert provider in svg
    with pytest.raises(ValueError, match="cannot save"):
        charts.save(charts.chart_memscore(questions), tmp_path / "x.gif")


def test_theme_is_registered_and_used_when_saving(questions: pl.DataFrame) -> None:
    import altair as alt

    spec = chart_spec(charts.chart_memscore(questions))  # registered when altair is first handed a chart
    assert charts.THEME in alt.theme.names()
    assert spec["config"]["range"]["category"] == list(charts.PALETTE)


def test_long_axis_labels_end_in_an_ellipsis_at_the_themes_length() -> None:
    import altair as alt

    from bench_nb.charts.theme import AXIS_LABEL_CHARS

    long_id, short_id = "q-" + "x" * 70, "q-short"
    chart = (
        alt.Chart(alt.Data(values=[{"q": long_id, "n": 1}, {"q": short_id, "n": 2}]))
        .mark_bar()
        .encode(y="q:N", x="n:Q")
    )
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", charts.to_svg(chart))
    assert short_id in labels
    assert long_id[: AXIS_LABEL_CHARS - 1] + "…" in labels
    assert not any(long_id[:AXIS_LABEL_CHARS] in label for label in labels)


def test_memscore_labels_go_left_of_points_in_the_axis_right_quarter(questions: pl.DataFrame) -> None:
    from bench_nb.charts.memscore import _decades, _in_right_quarter

    # The symlog axis runs from 0 to the decade above the slowest run: 0-100 ms here, so 52 ms is at 86% of it.
    assert _decades(52) == [0, 1, 10, 100] and _decades(0) == [0, 1]
    assert _in_right_quarter([0, 1, 22, 52], 100) == [False, False, False, True]
    assert _in_right_quarter([150, 450], 1000) == [False, True]  # log10(151) / log10(1001) = 0.73; 451: 0.88
    rows = [r for r in _values(chart_spec(charts.chart_memscore(questions))) if "label_left" in r]
    assert rows and all(isinstance(r["label_left"], bool) for r in rows)


def test_a_0_ms_run_sits_at_0_and_a_0_percent_label_clears_the_axis(questions: pl.DataFrame) -> None:
    # issue 37: a 0 ms run was drawn at 1 ms on a log axis; a label at 0% lay over the x axis's tick labels
    sqlite = pl.col("run_id") == "synthetic-sqlite"
    q = questions.with_columns(
        search_ms=pl.when(sqlite).then(0.2).otherwise(pl.col("search_ms")),
        score=pl.when(sqlite).then(0.0).otherwise(pl.col("score")),
        correct=pl.when(sqlite).then(False).otherwise(pl.col("correct")),
    )
    spec = chart_spec(charts.chart_memscore(q))
    row = next(r for r in _values(spec) if r["run_id"] == "synthetic-sqlite")
    assert row["latency_ms"] == 0 and row["low"]
    x = spec["layer"][1]["encoding"]["x"]
    assert x["scale"] == {"type": "symlog", "domain": [0, 10]} and x["axis"]["values"] == [0, 1, 10]
    above = [v for v in spec["layer"][2:] if v["transform"][0]["filter"].endswith("&& datum.low")]
    assert above and all(v["mark"]["baseline"] == "bottom" and v["mark"]["dy"] < 0 for v in above)


def test_charts_with_nothing_to_draw_say_so_instead_of_an_empty_box(questions: pl.DataFrame) -> None:
    # issue 37: a MemScore chart for runs with no recorded latency was an empty box; a Pareto cost panel had
    # every run at $0
    spec = chart_spec(charts.chart_memscore(questions.with_columns(search_ms=pl.lit(None, pl.Float64))))
    assert "layer" not in spec and spec["mark"]["type"] == "text"
    assert "no run records both an accuracy and a search latency" in _values(spec)[0]["note"]
    timeless = questions.with_columns(
        **{
            f"{p}_ms": pl.lit(None, pl.Float64)
            for p in ("ingest", "indexing", "search", "answer", "evaluate", "total")
        }
    )
    spec = chart_spec(charts.chart_latency(timeless))
    assert "layer" not in spec and "no run records a duration" in _values(spec)[0]["note"]
    tokenless = questions.with_columns(
        context_tokens=pl.lit(None, pl.Int64)
    )  # the LoCoMo-audit runs: an empty box
    spec = chart_spec(charts.chart_context_tokens(tokenless))
    assert "facet" not in spec and "no run records context tokens" in _values(spec)[0]["note"]
    free = questions.with_columns(cost_usd=pl.lit(0.0), total_cost_usd=pl.lit(0.0))
    spec = chart_spec(charts.chart_pareto(free))
    titles = [p["layer"][0]["encoding"]["x"]["title"] for p in spec["concat"]]
    assert not any("cost" in t for t in titles) and len(titles) == 2
    assert "left out, the same for every run: cost per question" in " ".join(spec["title"]["subtitle"])


@pytest.mark.slow  # twelve renders: 3-9 s
def test_every_chart_draws_under_the_vega_lite_jupyterlab_bundles(
    questions: pl.DataFrame, fixture_runs: list[str]
) -> None:
    # JupyterLab 4 draws application/vnd.vegalite.v5+json with its own Vega-Lite 5 (no network); altair 6
    # writes Vega-Lite 6. Each chart, as setup_notebook() displays it, renders under Vega-Lite 5 (vl-convert's
    # oldest, 5.8) with the same marks as under the Vega-Lite it was written for.
    import vl_convert as vlc

    from bench_nb.reports.notebook import chart_bundle
    from bench_nb.reports.svg import CHART_MIME

    for name, chart in _all_charts(questions, fixture_runs).items():
        data, metadata = chart_bundle(chart_spec(chart))
        spec = data[CHART_MIME]
        assert spec["$schema"].endswith("/vega-lite/v5.json") and CHART_MIME.endswith("v5+json")
        assert metadata[CHART_MIME] == {"embed_options": {"renderer": "svg"}}
        v5 = vlc.vegalite_to_svg(spec, vl_version="5.8")
        v6 = vlc.vegalite_to_svg(chart_spec(chart))
        marks = re.compile(r'class="mark-(\w+)')
        assert sorted(marks.findall(v5)) == sorted(marks.findall(v6)), name
        assert v5.count("<path") == v6.count("<path") > 3, name


def _colors(spec: dict) -> dict[str, str]:
    """Every colour scale of a spec (its layers and facets too): domain value -> colour."""
    found: dict[str, str] = {}

    def walk(node: object) -> None:
        if isinstance(node, dict):
            color = node.get("color")
            if isinstance(color, dict) and isinstance(color.get("scale"), dict) and "range" in color["scale"]:
                found.update(zip(color["scale"]["domain"], color["scale"]["range"], strict=True))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec)
    return found


def test_each_provider_keeps_its_colour_whatever_order_the_runs_come_in(fixture_runs: list[str]) -> None:
    # Two builds of the same runs, listed in opposite orders (a glob, and the demo's own order).
    first = bench_nb.questions_df(fixture_runs, backend="polars")
    second = bench_nb.questions_df(list(reversed(fixture_runs)), backend="polars")
    assert (
        first["provider"].unique(maintain_order=True).to_list()
        != second["provider"].unique(maintain_order=True).to_list()
    )
    for make in (
        charts.chart_memscore,
        charts.chart_latency,
        charts.chart_accuracy_by_type,
        charts.chart_context_tokens,
    ):
        a, b = _colors(chart_spec(make(first))), _colors(chart_spec(make(second)))
        assert a == b and set(a) == {"sqlite", "full-context", "no-memory"}, make.__name__
        assert len(set(a.values())) == 3
    assert (
        _colors(chart_spec(charts.chart_memscore(first)))["sqlite"] == charts.theme.PROVIDER_COLORS["sqlite"]
    )


def test_unknown_providers_get_a_colour_from_their_name_and_never_share_one() -> None:
    from bench_nb.charts.labels import provider_colors

    alone = provider_colors(["acme-memory"])
    assert provider_colors(["sqlite", "acme-memory", "zep"])["acme-memory"] in charts.PALETTE
    assert provider_colors(["zep", "acme-memory"]) == {
        "zep": "#56B4E9",
        "acme-memory": provider_colors(["acme-memory", "zep"])["acme-memory"],
    }
    assert alone == provider_colors(["acme-memory"])  # the same in every build
    many = provider_colors([f"vendor-{i}" for i in range(8)])
    assert len(set(many.values())) == 8  # eight providers, eight colours


def test_two_runs_of_one_provider_get_two_colours() -> None:
    from bench_nb.charts.labels import run_colors, run_labels

    frame = pl.DataFrame({"run_id": ["b-run", "a-run", "c"], "provider": ["sqlite", "sqlite", "zep"]})
    colors = run_colors(frame, run_labels(frame))
    assert colors["sqlite · a-run"] == "#0072B2" and colors["zep"] == "#56B4E9"
    assert colors["sqlite · b-run"] not in ("#0072B2", "#56B4E9")


def test_the_intervals_chart_names_the_method_each_clustered_interval_used(questions: pl.DataFrame) -> None:
    """The chart's rows carry the method ``accuracy_intervals`` used (and its effective haystacks and
    warning), and its subtitle names it."""
    spec = chart_spec(charts.chart_accuracy_intervals(questions))
    rows = next(iter(spec["datasets"].values()))
    clustered = [r for r in rows if r["kind"] == "clustered (haystacks)" and r["question_type"] == "overall"]
    expected = bench_nb.accuracy_intervals(questions, backend="polars")
    assert sorted(r["interval"] for r in clustered) == sorted(expected["interval"].to_list())
    assert {r["interval"] for r in rows if r["kind"] == "Wilson (independent)"} == {"Wilson"}
    assert "design-adjusted Wilson, CR2 variance, Bell-McCaffrey df" in spec["title"]["subtitle"]
    assert sorted(r["effective_clusters"] for r in clustered) == sorted(
        expected["effective_clusters"].to_list()
    )


def test_charts_list_runs_in_the_leaderboards_order(questions: pl.DataFrame) -> None:
    """Issue 37: charts listed runs in the order they were loaded (by name in a notebook) while the leaderboard
    ranks them by accuracy; now every chart follows the leaderboard."""
    from bench_nb import tables

    board = re.findall(r'<td class="run" title="[^"]+">([^<]+)</td>', tables.table_memscore(questions).html)
    loaded = [
        questions.filter(pl.col("run_id") == r)["provider"][0]
        for r in questions["run_id"].unique(maintain_order=True)
    ]
    assert (
        board == ["full-context", "sqlite", "no-memory"] and loaded != board
    )  # the fixture tells them apart
    assert (
        chart_spec(charts.chart_accuracy_by_type(questions))["layer"][0]["encoding"]["yOffset"]["sort"]
        == board
    )
    assert chart_spec(charts.chart_latency(questions))["spec"]["layer"][0]["encoding"]["y"]["sort"] == board
    assert chart_spec(charts.chart_outcome_matrix(questions))["encoding"]["x"]["sort"] == board


def test_a_kappa_statistic_with_a_typo_is_named_with_the_nearest_and_the_statistics() -> None:
    """``chart_judge_kappa(agreement, statistic="cohen")`` said "expected a JudgeAgreement or a pairwise table
    with a 'cohen' column", as if the agreement were at fault."""
    agreement = bench_nb.judge_agreement(sorted(FIXTURE_RUNS.iterdir()))
    with pytest.raises(ValueError) as raised:
        charts.chart_judge_kappa(agreement, statistic="cohen")
    assert str(raised.value) == (
        "statistic='cohen': not a column of the pairwise table (did you mean 'cohen_kappa'?); "
        "one of: percent_agreement, cohen_kappa, gwet_ac1"
    )
    with pytest.raises(ValueError, match=r"expected a JudgeAgreement .* not str"):
        charts.chart_judge_kappa("agreement.json")
