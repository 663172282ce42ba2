"""LAFS against hand computations from LongMemEval-V2's ``leaderboard/compute_lafs.py`` definition, and budget
curves against their definition (accuracy with over-budget questions counted as not answered)."""

from __future__ import annotations

import math

import polars as pl
import pytest

from bench_nb.metrics.budget import OperatingPoint, budget_curve, lafs, lafs_of
from bench_nb.metrics.clustered import accuracy_intervals

LN200 = math.log(200.0)


def run_rows(
    run_id: str, correct: int, n: int, search_ms: float | None, provider: str = "sqlite", haystacks: int = 5
) -> list[dict]:
    return [
        {
            "run_id": run_id,
            "provider": provider,
            "question_id": f"q{i}",
            "haystack_id": f"h{i % haystacks}",
            "status": "evaluated",
            "unscored": False,
            "correct": i < correct,
            "search_ms": search_ms,
        }
        for i in range(n)
    ]


def frame(*runs: list[dict]) -> pl.DataFrame:
    return pl.DataFrame([r for run in runs for r in run], schema_overrides={"search_ms": pl.Float64})


def lafs_rows(df: pl.DataFrame, **kw) -> dict[str, dict]:
    return {r["system"]: r for r in lafs(df, backend="polars", **kw).iter_rows(named=True)}


def test_one_point_is_its_accuracy_times_the_log_share_of_budgets_it_fits() -> None:
    out = lafs_rows(frame(run_rows("a", 31, 50, 15_000.0)))  # 62% at 15 s
    assert out["a"]["lafs"] == pytest.approx(62.0 * math.log(200 / 15) / LN200, rel=1e-12)
    assert out["a"]["points"] == "62.0% @ 15s"


def test_ties_keep_the_better_or_faster_point() -> None:
    # same latency: the more accurate counts; same accuracy: the faster counts from its own latency
    same_latency = [OperatingPoint("x", 50.0, 10.0), OperatingPoint("y", 60.0, 10.0)]
    assert lafs_of(same_latency) == pytest.approx(60.0 * math.log(20) / LN200, rel=1e-12)
    same_accuracy = [OperatingPoint("x", 60.0, 5.0), OperatingPoint("y", 60.0, 10.0)]
    assert lafs_of(same_accuracy) == pytest.approx(60.0 * math.log(40) / LN200, rel=1e-12)
    # two runs of one system (by=provider) are its operating points: 50% @ 2 s then 70% @ 20 s
    df = frame(run_rows("fast", 10, 20, 2_000.0, "p"), run_rows("slow", 14, 20, 20_000.0, "p"))
    got = lafs_rows(df, by="provider")["p"]
    want = (50.0 * math.log(20 / 2) + 70.0 * math.log(200 / 20)) / LN200
    assert got["lafs"] == pytest.approx(want, rel=1e-12) and got["runs"] == 2


def test_budgets_beyond_every_run_and_runs_beyond_every_budget() -> None:
    # faster than t_min: its accuracy over the whole range; slower than t_max: the floor
    assert lafs_of([OperatingPoint("fast", 40.0, 0.5)]) == pytest.approx(40.0)
    assert lafs_of([OperatingPoint("slow", 90.0, 300.0)]) == 0.0
    assert lafs_of([OperatingPoint("slow", 90.0, 300.0)], floor=10.0) == pytest.approx(10.0)
    # budgets that reach past every run: the step function is flat at its best from the last latency on
    assert lafs_of([OperatingPoint("a", 80.0, 4.0)], (1.0, 1000.0)) == pytest.approx(
        80.0 * math.log(250) / math.log(1000), rel=1e-12
    )
    # discrete budgets: the plain average of the step function at each
    assert lafs_of([OperatingPoint("a", 80.0, 4.0)], (1.0, 4.0, 10.0, 500.0)) == pytest.approx(60.0)


def test_a_run_without_search_latency_is_left_out_and_named() -> None:
    df = frame(run_rows("timed", 15, 20, 1_000.0), run_rows("untimed", 20, 20, None))
    out = lafs_rows(df)
    assert out["untimed"]["lafs"] is None and "no search latency" in out["untimed"]["note"]
    assert out["timed"]["lafs"] == pytest.approx(75.0)
    # in a system, the untimed run is named and the rest still counts
    sys = lafs_rows(df.with_columns(provider=pl.lit("p")), by="provider")["p"]
    assert sys["lafs"] == pytest.approx(75.0) and "untimed: no search latency" in sys["note"]


def test_gain_against_the_released_reference_frontier() -> None:
    # compute_lafs.py's reference LAFS for small, and its printed gains for two of its examples
    small = (51.0 * math.log(26.9) + 58.6 * math.log(108.3 / 26.9) + 74.9 * math.log(200 / 108.3)) / LN200
    rows = lafs_rows(
        frame(run_rows("rag", 31, 50, 15_000.0), run_rows("dominated", 35, 50, 150_000.0)), reference="small"
    )
    assert (
        rows["rag"]["reference_lafs"]
        == pytest.approx(small, rel=1e-12)
        == pytest.approx(55.7648469, abs=1e-6)
    )
    assert rows["rag"]["lafs_gain"] == pytest.approx(2.11, abs=0.005)  # "Fast RAG++ | 62 @ 15s | +2.11"
    assert rows["dominated"]["lafs_gain"] == pytest.approx(0.0, abs=1e-12)


def test_lafs_refuses_bad_budgets_and_references() -> None:
    with pytest.raises(ValueError, match="budgets"):
        lafs_of([OperatingPoint("a", 1.0, 1.0)], (200.0, 1.0))
    with pytest.raises(ValueError, match="reference"):
        lafs(frame(run_rows("a", 1, 2, 1.0)), reference="huge")


def test_budget_curve_counts_over_budget_questions_as_not_answered() -> None:
    rows = run_rows("a", 8, 10, None)
    for i, r in enumerate(rows):
        r["search_ms"] = float(100 * (i + 1))  # q0 100 ms ... q9 1000 ms; q0-q7 correct
    df = frame(rows)
    curve = budget_curve(df, budgets=[50, 300, 750, 1000], backend="polars").sort("budget")
    assert curve["accuracy"].to_list() == pytest.approx([0.0, 0.3, 0.7, 0.8])
    assert curve["n"].to_list() == [10] * 4  # the question set does not shrink
    # each budget's interval is accuracy_intervals' on the capped outcomes
    capped = df.with_columns(correct=pl.col("correct") & (pl.col("search_ms") <= 750))
    ref = accuracy_intervals(capped, backend="polars")
    row = curve.filter(pl.col("budget") == 750)
    assert row["ci_low"][0] == pytest.approx(ref["ci_low"][0]) and row["ci_high"][0] == pytest.approx(
        ref["ci_high"][0]
    )


def test_budget_curve_break_even_against_full_context() -> None:
    # memory: fast, 60%; full context: slow, 90%. Full context reaches 60% only once its 900 ms fit.
    mem = run_rows("mem", 6, 10, 100.0, "sqlite")
    fc = run_rows("fc", 9, 10, 900.0, "full-context")
    # at 50 ms both are at 0: full context is not behind there, but it falls behind after, so it counts
    # only from 900 ms on
    curve = budget_curve(frame(mem, fc), budgets=[50, 100, 500, 900], backend="polars")
    m = curve.filter(pl.col("run_id") == "mem").sort("budget")
    assert m["full_context_accuracy"].to_list() == pytest.approx([0.0, 0.0, 0.0, 0.9])
    assert m["break_even"].unique().to_list() == [900]
    assert curve.filter(pl.col("run_id") == "fc")["break_even"].null_count() == 4
    # never caught up on the grid: null
    late = budget_curve(frame(mem, fc), budgets=[100, 500], backend="polars")
    assert late.filter(pl.col("run_id") == "mem")["break_even"].null_count() == 2


def test_budget_curve_default_grid_ends_at_ordinary_accuracy_and_leaves_out_runs_without_values() -> None:
    timed = run_rows("t", 7, 10, 200.0)
    untimed = run_rows("u", 10, 10, None)
    with pytest.warns(UserWarning, match="left out"):
        curve = budget_curve(frame(timed, untimed), backend="polars")
    assert set(curve["run_id"]) == {"t"}
    assert curve.sort("budget")["accuracy"][-1] == pytest.approx(0.7)
    with pytest.raises(ValueError, match="no 'nope' column"):
        budget_curve(frame(timed), by="nope")


def test_budget_table_escapes_run_text_and_gives_baselines_no_break_even() -> None:
    from bench_nb.tables import table_budget

    mem = run_rows("<b>mem</b>", 6, 10, 100.0, "sqlite")
    fc = run_rows("fc", 9, 10, 900.0, "full-context")
    nomem = run_rows("nm", 1, 10, 0.0, "no-memory")
    table = table_budget(frame(mem, fc, nomem))
    assert "&lt;b&gt;mem&lt;/b&gt;" in table.html and "<b>mem</b>" not in table.html
    rows = {r["run_id"]: r for r in table.frame.iter_rows(named=True)}
    assert rows["<b>mem</b>"]["break_even_ms"] == 900.0 and rows["<b>mem</b>"]["lafs"] == pytest.approx(60.0)
    assert rows["nm"]["lafs"] is None  # a latency of 0 cannot be placed
    body = table.html.split("<tbody>")[1].split("</tbody>")[0]
    nm_row = next(
        tr for tr in body.split("<tr") if 'title="nm"' in tr
    )  # labelled no-memory, its id the tooltip
    assert nm_row.count('<td class="num">—</td>') == 2


def _costed(run_id: str, answer_cost: float, memory_cost: float | None) -> list[dict]:
    rows = run_rows(run_id, 10, 10, 100.0)
    for r in rows:
        r["cost_usd"] = answer_cost
        r["total_cost_usd"] = None if memory_cost is None else answer_cost + memory_cost
    return rows


def test_budget_curve_by_cost_charges_memory_side_cost_only_when_every_run_reports_it() -> None:
    # a: cheap to answer, expensive to ingest (LLM extraction); b: no memory-side calls
    a, b = _costed("a", 0.001, 0.009), _costed("b", 0.002, 0.0)
    curve = budget_curve(frame(a, b), by="cost", budgets=[0.005], backend="polars")
    acc = dict(zip(curve["run_id"], curve["accuracy"], strict=True))
    assert acc == pytest.approx({"a": 0.0, "b": 1.0})  # a's total (0.01) is over the budget, b's (0.002) not
    # a run that does not report its memory side: answer and judge cost for all, and a warning naming it
    silent = _costed("z", 0.004, None)
    with pytest.warns(UserWarning, match=r"\['z'\] do not report"):
        curve = budget_curve(frame(a, b, silent), by="cost", budgets=[0.005], backend="polars")
    acc = dict(zip(curve["run_id"], curve["accuracy"], strict=True))
    assert acc == pytest.approx({"a": 1.0, "b": 1.0, "z": 1.0})


def _on(benchmark: str, *runs: list[dict]) -> pl.DataFrame:
    return frame(*runs).with_columns(benchmark=pl.lit(benchmark))


def test_a_released_reference_is_refused_for_another_benchmarks_runs() -> None:
    locomo = _on("locomo", run_rows("sqlite-locomo", 31, 50, 15_000.0))
    with pytest.raises(
        ValueError, match=r"reference='small' is LongMemEval-V2's.*'sqlite-locomo' is on 'locomo'"
    ):
        lafs(locomo, reference="small")
    # without a reference, or with points of its own, LAFS of the runs themselves is still computed
    assert lafs_rows(locomo)["sqlite-locomo"]["lafs"] == pytest.approx(62.0 * math.log(200 / 15) / LN200)
    assert lafs_rows(locomo, reference=[(60.0, 10.0)])["sqlite-locomo"]["lafs_gain"] is not None
    lme = _on("longmemeval-v2-small", run_rows("rag", 31, 50, 15_000.0))
    assert lafs_rows(lme, reference="small")["rag"]["lafs_gain"] == pytest.approx(2.11, abs=0.005)


def test_the_budget_table_marks_lafs_of_another_benchmark_as_no_leaderboard_score() -> None:
    from bench_nb.tables import table_budget

    runs = (run_rows("a", 6, 10, 100.0), run_rows("fc", 9, 10, 900.0, "full-context"))
    locomo = table_budget(_on("locomo", *runs)).html
    assert "LAFS formula †" in locomo and "† Not a leaderboard score: these runs are on locomo" in locomo
    lme = table_budget(_on("longmemeval-v2-small", *runs)).html
    assert "LAFS formula" not in lme and "Not a leaderboard score" not in lme and "<th>LAFS</th>" in lme


def test_lafs_full_set_counts_every_record_as_longmemeval_v2s_overall_full_set() -> None:
    # Issue 39, item 8: 60 right, 30 wrong, 10 failed (and the same with 10 unscored), 2 s a query.
    # LongMemEval-V2's overall_full_set counts every record: 60.0%, LAFS 60 · (1 − ln 2 / ln 200) = 52.15;
    # the default counts the questions with a verdict: 66.7%, LAFS 57.95.
    rows = run_rows("r", 60, 100, 2000.0)
    for i, r in enumerate(rows[90:]):
        r.update({"status": "failed", "correct": None} if i % 2 else {"unscored": True, "correct": None})
    q = frame(rows)
    default, full = lafs(q, backend="polars"), lafs(q, full_set=True, backend="polars")
    assert default["points"][0] == "66.7% @ 2s" and full["points"][0] == "60.0% @ 2s"
    assert default["lafs"][0] == pytest.approx(200 / 3 * (1 - math.log(2) / LN200))
    assert round(default["lafs"][0], 2) == 57.95
    assert full["lafs"][0] == pytest.approx(60 * (1 - math.log(2) / LN200))
    assert round(full["lafs"][0], 2) == 52.15
    # a NaN score is no verdict under the one rule (frames.verdicts): left out, or wrong in the full set
    nan = frame(run_rows("r", 2, 4, 1000.0)).with_columns(
        score=pl.Series([1.0, 1.0, float("nan"), 0.0]), correct=pl.Series([True, True, None, False])
    )
    assert lafs(nan, backend="polars")["points"][0] == "66.7% @ 1s"
    assert lafs(nan, full_set=True, backend="polars")["points"][0] == "50.0% @ 1s"


def test_budget_curve_at_every_budget_is_accuracy_intervals_of_the_capped_outcomes() -> None:
    # the budgets are computed together (issue 41): each must still be the intervals of its own capped frame,
    # on lopsided haystacks, with a question of no latency (over every budget) and two runs
    rows = run_rows("a", 40, 60, None, haystacks=3) + run_rows("b", 25, 60, None, haystacks=7)
    for i, r in enumerate(rows):
        r["haystack_id"] = "h0" if i % 60 < 40 else r["haystack_id"]
        r["search_ms"] = None if i % 17 == 0 else float(10 * ((i * 7) % 50 + 1))
    df = frame(rows)
    # 1 and 5, 1000 and 2000: the same questions within (each run's interval computed once for both)
    budgets = [1, 5, 60, 200, 480, 1000, 2000]
    curve = budget_curve(df, budgets=budgets, backend="polars")
    assert curve["budget"].to_list() == [float(b) for b in budgets for _ in ("a", "b")]
    for b in budgets:
        capped = df.with_columns(correct=pl.col("correct") & (pl.col("search_ms") <= b).fill_null(False))
        ref = accuracy_intervals(capped, backend="polars").sort("run_id")
        got = curve.filter(pl.col("budget") == b).sort("run_id")
        for column in ("accuracy", "ci_low", "ci_high"):
            assert got[column].to_list() == pytest.approx(ref[column].to_list(), rel=1e-12), (b, column)
        assert (
            got["n"].to_list() == ref["n"].to_list()
            and got["clusters"].to_list() == ref["clusters"].to_list()
        )


def test_budget_curves_computed_once_per_report_shared_by_table_and_charts(monkeypatch) -> None:
    # issue 41: the compare report computed each curve four times (the table's break-even columns, then each
    # chart again); given a ClusterBootstrap, the table and the charts share one curve per budget kind
    import bench_nb.metrics.uncertainty as uncertainty
    from bench_nb.charts import chart_budget_curve
    from bench_nb.metrics.uncertainty import ClusterBootstrap
    from bench_nb.tables import table_budget

    mem = run_rows("mem", 6, 10, 100.0, "sqlite")
    fc = run_rows("fc", 9, 10, 900.0, "full-context")
    for r in mem + fc:
        r["context_tokens"] = 50 if r["provider"] == "sqlite" else 4000
    df = frame(mem, fc)
    real, calls = uncertainty.budget_curve_frame, []

    def counted(*args, **kwargs):
        calls.append(args[1:])
        return real(*args, **kwargs)

    monkeypatch.setattr(uncertainty, "budget_curve_frame", counted)
    boot = ClusterBootstrap(df)
    table = table_budget(boot)
    charts = [chart_budget_curve(boot, by=by) for by in ("latency_ms", "context_tokens")]
    assert sorted(calls) == [("context_tokens",), ("latency_ms",)]
    # the same table and charts as from the frame itself
    assert table.html == table_budget(df).html
    again = [chart_budget_curve(df, by=by) for by in ("latency_ms", "context_tokens")]
    assert [c.to_dict() for c in charts] == [c.to_dict() for c in again]


def test_lafs_takes_no_points_of_another_full_set_or_frame(monkeypatch) -> None:
    # 8189279 gave lafs_frame a public points= (run_points(questions, full_set) "when the caller has them"):
    # points of the other full_set, or of another frame, gave a wrong LAFS with no word. The budget table's
    # points and LAFS's are now one computation per frame in a report kernel instead.
    from bench_nb.metrics.budget import run_points
    from bench_nb.tables import table_budget

    rows = run_rows("r", 60, 100, 2000.0)
    for r in rows[90:]:
        r.update({"status": "failed", "correct": None})
    q = frame(rows)
    with pytest.raises(TypeError, match="points"):
        lafs(q, full_set=True, points=run_points(q))
    monkeypatch.setenv("BENCH_NB_REPORT", "1")
    assert run_points(q) is run_points(q) and run_points(q, full_set=True) is not run_points(q)
    assert lafs(q, full_set=True, backend="polars")["lafs"][0] == pytest.approx(
        60 * (1 - math.log(2) / LN200)
    )
    assert lafs(q, backend="polars")["lafs"][0] == pytest.approx(200 / 3 * (1 - math.log(2) / LN200))
    html = table_budget(q).html
    monkeypatch.delenv("BENCH_NB_REPORT")
    assert table_budget(q).html == html
