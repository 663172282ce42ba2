"""The compare report's BEAM section: per-ability scores in both readings, intervals, partial runs flagged."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from beam_tier import write_tier
from bench_nb import charts, tables
from bench_nb.benchmarks import DatasetWarning
from bench_nb.reports import build_report
from bench_nb.runner.run import run_benchmark


@pytest.fixture(scope="module")
def beam_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("beam")
    tier = write_tier(root / "100K", chats=3)
    runs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        for provider, limit in (("sqlite", None), ("no-memory", 12)):
            result = run_benchmark(
                provider,
                "beam",
                dataset=tier,
                runs_dir=root / "runs",
                run_id=provider,
                limit=limit,
                progress=False,
            )
            runs.append(result.run_dir)
    return runs


def test_the_table_shows_each_ability_in_both_readings_with_intervals(beam_runs: list[Path]) -> None:
    t = tables.table_beam(beam_runs)
    assert "sqlite · 0.5 as 0.5" in t.html and "no-memory · as published" in t.html
    assert t.html.count("<tr>") == 1 + 11  # header, ten abilities, overall
    assert "contradiction resolution" in t.html and "Judged by rubric (offline" in t.html
    data = t.data
    assert set(data["partial_credit"]) == {"float", "as-published"} and len(data) == 2 * 2 * 11
    # no-memory asked 12 of 30 questions: abilities partial. Both runs cover 3 of the tier's 20 chats: neither
    # overall compares with a full run, and the warning names both.
    assert "partial: not comparable" in t.html and "no-memory" in t.warnings[0] and "sqlite" in t.warnings[0]
    sqlite = data[(data["run_id"] == "sqlite") & (data["ability"] != "overall")]
    assert not sqlite["partial"].any() and data[data["run_id"] == "no-memory"]["partial"].any()
    assert tables.has_beam(beam_runs)


def test_the_chart_has_a_point_and_an_interval_per_ability(beam_runs: list[Path]) -> None:
    spec = charts.chart_spec(charts.chart_beam(beam_runs))
    rows = next(iter(spec["datasets"].values()))
    assert {r["ability"] for r in rows} >= {"event ordering", "overall"}
    assert all(r["ci_low"] <= r["score"] <= r["ci_high"] for r in rows if r["ci_low"] is not None)
    assert any(r["ci_low"] is None for r in rows)  # one chat: no interval


def test_memscore_and_accuracy_tables_say_mean_score_for_beam(beam_runs: list[Path]) -> None:
    from statsmodels.stats.weightstats import DescrStatsW

    import bench_nb
    from bench_nb.metrics import js_round

    q = bench_nb.questions_df(beam_runs[0], backend="polars")
    scores = q["score"].to_list()
    ms = bench_nb.memscore(q, backend="polars").row(0, named=True)
    assert ms["quality_measure"] == "mean score" and ms["accuracy"] == pytest.approx(
        sum(scores) / len(scores)
    )
    assert ms["quality"] == js_round(sum(scores) / len(scores) * 100)
    lo, hi = DescrStatsW(scores).zconfint_mean(alpha=0.05)
    assert (ms["accuracy_ci_low"], ms["accuracy_ci_high"]) == pytest.approx((max(lo, 0), min(hi, 1)))
    by_type = bench_nb.accuracy_by_type(q, backend="polars")
    assert set(by_type["measure"]) == {"mean score"}
    assert "accuracy or mean score [95% CI]" in tables.table_memscore(q).html
    assert "Mean score per question type" in tables.table_accuracy_by_type(q).html


@pytest.mark.notebook
def test_the_compare_report_of_beam_runs_has_its_beam_section(beam_runs: list[Path], tmp_path: Path) -> None:
    # The section is shown by its code cell only for BEAM runs (tests/reports/test_build.py: none otherwise).
    out = tmp_path / "compare.html"
    build_report("compare", {"runs": [str(r) for r in beam_runs]}, out, index=False)
    html = out.read_text()
    assert html.count("<h2>BEAM: mean score per ability</h2>") == 1
    assert "BEAM is scored by its own rules" in html
    assert "sqlite · 0.5 as 0.5" in html  # the table under it
