from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import bench_nb
from bench_nb import tables
from synthetic_runs import write_synthetic_run

FIXTURE_GLOB = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")


@pytest.fixture(scope="session")
def fixture_glob() -> str:
    return FIXTURE_GLOB


@pytest.mark.parametrize(
    ("acc", "band"),
    [
        (0.80, "excellent"),
        (0.7999, "good"),
        (0.70, "good"),
        (0.6999, "adequate"),
        (0.60, "adequate"),
        (0.5999, "investigate"),
        (0.0, "investigate"),
        (None, None),
        (float("nan"), None),
    ],
)
def test_accuracy_bands(acc: float | None, band: str | None) -> None:
    assert tables.accuracy_band(acc) == band


@pytest.mark.parametrize(
    ("ms", "band"),
    [
        (0, "excellent"),
        (99.9, "excellent"),
        (100, "good"),
        (299, "good"),
        (300, "adequate"),
        (500, "adequate"),
        (500.1, "slow"),
        (None, None),
    ],
)
def test_latency_bands(ms: float | None, band: str | None) -> None:
    assert tables.latency_band(ms) == band


def test_leaderboard_numbers_bands_and_escaping(fixture_glob: str) -> None:
    q = bench_nb.questions_df(fixture_glob, backend="polars")
    t = tables.table_memscore(q)
    scores = bench_nb.memscore(q, backend="polars")
    for r in scores.iter_rows(named=True):
        assert r["memscore"] in t.html
        lo, hi = r["accuracy_ci_low"] * 100, r["accuracy_ci_high"] * 100
        assert f"{r['accuracy'] * 100:.1f}% [{lo:.1f}–{hi:.1f}]" in t.html
    assert t.data["accuracy"].is_monotonic_decreasing
    assert 'class="bnb-band bnb-investigate"' in t.html  # no-memory
    assert "bnb-flag" not in t.html.split("</style>", 1)[1] and not t.warnings


def test_custom_prompt_runs_are_flagged_and_warned(tmp_path: Path) -> None:
    write_synthetic_run(tmp_path, "sqlite")
    write_synthetic_run(tmp_path, "full-context", custom_prompt=True)
    t = tables.table_memscore(str(tmp_path / "*"))
    assert '<span class="bnb-flag">provider&#x27;s own judge prompt</span>' in t.html
    assert any("full-context" in w for w in t.warnings) and "bnb-warning" in t.html


def test_runs_that_are_not_like_for_like_carry_a_warning(tmp_path: Path) -> None:
    a = write_synthetic_run(tmp_path, "sqlite")
    b = write_synthetic_run(tmp_path, "full-context")
    assert tables.table_settings([a, b]).warnings == ()
    ck = json.loads((b / "checkpoint.json").read_text())
    ck["benchNb"]["k"] = 30
    (b / "checkpoint.json").write_text(json.dumps(ck))
    warnings = tables.table_settings([a, b]).warnings
    assert warnings and "30" in warnings[0]
    html = tables.table_memscore([a, b], warnings=warnings).html
    assert html.count('class="bnb-warning"') == len(warnings)


def test_disputed_table_escapes_run_text(fixture_glob: str) -> None:
    t = tables.table_disputed(fixture_glob, limit=100)
    assert "conv-1-q2" in t.data["question_id"].to_list()
    assert "<script>" not in t.html and "<img" not in t.html
    assert "&lt;script&gt;alert(&quot;bench_nb&quot;)&lt;/script&gt;" in t.html


def test_what_to_fix_names_the_weak_type_and_failures(fixture_glob: str) -> None:
    q = bench_nb.questions_df(fixture_glob, backend="polars")
    readings = tables.what_to_fix(q)
    sqlite = [r for r in readings if r.run_id == "synthetic-sqlite"]
    acc = bench_nb.accuracy_by_type(q, backend="polars").filter(
        (pl.col("run_id") == "synthetic-sqlite") & (pl.col("question_type_norm") == "temporal")
    )
    assert acc["accuracy"][0] < 0.6  # the sqlite profile is weak on temporal questions
    temporal = [r for r in sqlite if r.topic == "temporal"]
    assert temporal and temporal[0].advice == tables.ADVICE["temporal"]
    assert any(r.topic == "failures" and r.finding.startswith("1 of 50") for r in sqlite)
    html = tables.table_what_to_fix(q).html
    assert "question date" in html


def test_other_tables_render(fixture_glob: str) -> None:
    q = bench_nb.questions_df(fixture_glob, backend="polars")
    success = tables.table_success(q)
    assert "98.0%" in success.html  # 49 of 50 evaluated in each fixture run
    lat = tables.table_latency(q)
    sr = bench_nb.latency_stats(q, backend="polars").filter(
        (pl.col("run_id") == "synthetic-sqlite") & (pl.col("phase") == "search")
    )
    assert f"{sr['p50_linear'][0]:,.0f} / {sr['p95_linear'][0]:,.0f}" in lat.html
    assert "synthetic" in tables.table_tokens(q).html
    paired = tables.table_paired(fixture_glob)
    assert len(paired.data) == 3 and "CR2 cluster-robust t" in paired.html  # clustered, as tell-apart's
    assert "McNemar" not in paired.html
    independent = tables.table_paired(fixture_glob, method="independent")
    assert "McNemar" in independent.html and "overstate certainty" in independent.html
    agreement = bench_nb.judge_agreement(bench_nb.judgments_df(fixture_glob))
    assert "f1 × contains" in tables.table_agreement(agreement).html


def test_an_interval_below_zero_reads_as_two_numbers(fixture_glob: str) -> None:
    """A dash between two minus signs ("[-24.1–-3.6]") misreads: negative bounds are joined by "to"."""
    paired = tables.table_paired(fixture_glob)
    negative = paired.data[paired.data["ci_high"] < 0]
    assert len(negative), "the fixture runs have a pair whose whole interval is below zero"
    r = negative.iloc[0]
    assert f"[{r['ci_low'] * 100:.1f} to {r['ci_high'] * 100:.1f}]" in paired.html
    assert "–-" not in paired.html
    positive = paired.data[paired.data["ci_low"] > 0]
    for _, r in positive.iterrows():  # no sign to confuse: the dash stays
        assert f"[{r['ci_low'] * 100:.1f}–{r['ci_high'] * 100:.1f}]" in paired.html


def test_what_to_fix_on_a_run_at_zero_percent_says_so(fixture_glob: str) -> None:
    # issue 37: a run at 0% with no type of 5+ questions and no failure read "no question type stands out;
    # nothing failed". The overall score is read first.
    q = bench_nb.questions_df(fixture_glob, backend="polars").filter(
        (pl.col("run_id") == "synthetic-sqlite") & (pl.col("status") == "evaluated") & ~pl.col("unscored")
    )
    zero = q.with_columns(
        correct=pl.lit(False),
        score=pl.lit(0.0),
        question_type_norm=pl.col("question_id"),  # every type of 1
    )
    readings = tables.what_to_fix(zero)
    assert readings[0].topic == "overall" and readings[0].finding == f"overall 0% of {zero.height} scored"
    assert readings[0].advice == tables.readings.NOTHING_RIGHT_ADVICE
    html = tables.table_what_to_fix(zero).html
    assert "nothing failed" not in html and "no answer was right" in html
    # a weak run (under 60%) is said to be weak overall, before its types; a good run is not
    half = q.with_columns(correct=pl.col("correct") & (pl.col("question_id").str.len_chars() % 3 == 0))
    half = half.with_columns(score=pl.col("correct").cast(pl.Float64))
    assert tables.what_to_fix(half)[0].topic == "overall"
    assert all(
        r.topic != "overall"
        for r in tables.what_to_fix(bench_nb.questions_df(fixture_glob, backend="polars"))
    )


def test_a_tables_text_form_is_its_numbers_not_its_html_again(fixture_glob: str) -> None:
    # A notebook's text/plain of a table (and a console's view) was the dataclass repr: the frame and then
    # the whole HTML again, escaped, doubling what a report's kernel sent and its notebook held.
    table = tables.table_memscore(bench_nb.questions_df(fixture_glob, backend="polars"))
    assert repr(table) == repr(table.frame)
    assert "<table" not in repr(table) and "<table" in table._repr_html_()


def test_table_paired_names_a_pairs_value_it_does_not_know() -> None:
    """``pairs="neighbors"`` (or any other word) showed every pair, as ``"all"`` does, without a word."""
    with pytest.raises(ValueError, match="pairs must be 'all' or 'neighbours', not 'neighbors'"):
        tables.table_paired(FIXTURE_GLOB, pairs="neighbors")  # type: ignore[arg-type]
