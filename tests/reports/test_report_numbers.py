"""The compare report's numbers over a mix of native and imported runs: what a file does not record is never
read as zero, advice only where it applies, ceilings and detectable differences per question set."""

from __future__ import annotations

import html
import re
from pathlib import Path

import polars as pl
import pytest

import bench_nb
from bench_nb import tables

FIXTURE_GLOB = str(Path(__file__).parents[1] / "fixtures" / "runs" / "*")


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return bench_nb.questions_df(FIXTURE_GLOB, backend="polars")


def _imported(q: pl.DataFrame, run_id: str) -> pl.DataFrame:
    """``run_id`` as an imported run records it: no search, no result count, no tokens."""
    blank = ("search_ms", "search_result_count", "context_tokens", "recall_at_k", "hit_at_k")
    return q.with_columns(
        [pl.when(pl.col("run_id") == run_id).then(None).otherwise(pl.col(c)).alias(c) for c in blank]
    )


def test_a_run_that_records_no_search_is_not_read_as_retrieving_nothing(frame: pl.DataFrame) -> None:
    q = _imported(frame, "synthetic-sqlite")
    assert "synthetic-sqlite" not in tables.runs.retrieved_nothing(q)
    assert "synthetic-sqlite" in tables.runs.retrieval_not_recorded(q)
    assert "synthetic-sqlite" not in tables.readings.baselines(q)
    row = next(r for r in tables.table_memscore(q).html.split("<tr") if "synthetic-sqlite" in r)
    assert "not recorded" in row and "nothing retrieved" not in row
    fix = tables.table_what_to_fix(q).html
    sqlite = fix[fix.index("<b>sqlite</b>") :]
    assert not sqlite.split("</li>")[0].endswith("no advice.")


def test_a_run_whose_search_returned_nothing_still_reads_nothing_retrieved(frame: pl.DataFrame) -> None:
    q = frame.with_columns(
        search_result_count=pl.when(pl.col("provider") == "sqlite")
        .then(0)
        .otherwise(pl.col("search_result_count"))
    )
    assert tables.runs.retrieved_nothing(q) == {"synthetic-sqlite"}
    assert not tables.runs.retrieval_not_recorded(q)


def test_a_run_at_full_recall_gets_no_retrieval_advice(frame: pl.DataFrame) -> None:
    q = frame.with_columns(recall_at_k=pl.when(pl.col("provider") == "full-context").then(1.0).otherwise(0.5))
    assert tables.readings.full_recall(q) == {"synthetic-full-context"}
    readings = tables.what_to_fix(q)
    full = [
        r
        for r in readings
        if r.run_id == "synthetic-full-context" and r.topic in tables.readings.MEMORY_TYPES
    ]
    assert full and all(r.advice == tables.readings.READER_ADVICE for r in full)
    sqlite = [
        r for r in readings if r.run_id == "synthetic-sqlite" and r.topic in tables.readings.MEMORY_TYPES
    ]
    assert sqlite and all(r.advice == tables.readings.ADVICE[r.topic] for r in sqlite)
    assert (
        "retrieve more"
        not in tables.table_what_to_fix(q).html.split("<b>full-context</b>")[1].split("<b>")[0]
    )


def _key_frame() -> pl.DataFrame:
    """Two runs on different questions: ``a`` holds q1-q4 (one wrong gold, single-hop), ``b`` q1-q10 (wrong gold
    on q1 and q9: one single-hop, one temporal)."""
    rows = []
    for rid, n in (("run-a", 4), ("run-b", 10)):
        for i in range(1, n + 1):
            rows.append(
                {
                    "run_id": rid,
                    "provider": rid.split("-")[1],
                    "question_id": f"q{i}",
                    "question_type_norm": "single-hop" if i % 2 else "temporal",
                    "status": "evaluated",
                    "unscored": False,
                    "correct": i % 3 != 0,
                    "gold_wrong": i in (1, 9),
                    "gold_error_type": "HALLUCINATION" if i in (1, 9) else None,
                }
            )
    return pl.DataFrame(rows)


def test_answer_key_ceilings_are_per_question_set() -> None:
    from bench_nb.metrics.errata import answer_key_ceiling_frame

    q = _key_frame()
    overall = answer_key_ceiling_frame(None, q)  # type: ignore[arg-type]
    per_type = answer_key_ceiling_frame(None, q, by="question_type")  # type: ignore[arg-type]
    groups = tables.harnesses.ceiling_groups(overall, per_type)
    assert [members for _, members in groups] == [["run-a"], ["run-b"]]
    a, b = (ceiling for ceiling, _ in groups)
    assert a == pytest.approx({"all": 75.0, "single-hop": 50.0, "temporal": 100.0})
    assert b == pytest.approx({"all": 80.0, "single-hop": 60.0, "temporal": 100.0})


def _two_benchmarks() -> pl.DataFrame:
    """Runs a1, a2 on 40 questions in 8 haystacks; run b1 on 2 other questions in 2 other haystacks."""
    rows = []
    for rid, seed in (("a1", 3), ("a2", 5)):
        for i in range(40):
            rows.append((rid, f"q{i}", f"h{i % 8}", "single-hop", (i * seed) % 7 < 4))
    rows += [("b1", "p0", "x0", "abstention", True), ("b1", "p1", "x1", "abstention", False)]
    frame = pl.DataFrame(
        rows, schema=["run_id", "question_id", "haystack_id", "question_type_norm", "correct"], orient="row"
    )
    return frame.with_columns(
        provider=pl.col("run_id"), status=pl.lit("evaluated"), unscored=pl.lit(False), score=pl.lit(None)
    )


def test_detectable_differences_are_planned_per_question_set() -> None:
    out = bench_nb.metrics.detectable_differences(_two_benchmarks(), backend="polars")
    overall = out.filter(pl.col("question_type") == "all")
    assert overall.select("question_set", "runs", "n", "clusters").rows() == [
        (1, "a1, a2", 40, 8),
        (2, "b1", 2, 2),
    ]
    assert out.filter(pl.col("question_set") == 1)["question_type"].to_list() == ["all", "single-hop"]


def test_a_detectable_difference_over_the_scale_reads_cannot_detect() -> None:
    table = tables.table_detectable(_two_benchmarks())
    big = table.frame.filter(pl.col("question_set") == 2)["mde"].max()
    assert big is not None and big > 1  # 2 questions: no difference of accuracy could be detected
    text = table.html
    assert "cannot detect any difference" in text
    assert not any(float(x) > 100 for x in __import__("re").findall(r"([\d.]+) pts<", text))
    assert "1: a1, a2" in text and "2: b1" in text


def test_judge_agreement_over_runs_with_their_own_judges_says_why_it_is_na() -> None:
    j = bench_nb.judgments_df(FIXTURE_GLOB, backend="polars")
    # the no-memory run as an imported file: graded once, by a judge of its own harness
    own = pl.col("run_id") == "synthetic-no-memory"
    j = j.filter(~own | (pl.col("judge") == "f1")).with_columns(
        judge=pl.when(own).then(pl.lit("unknown (zep)")).otherwise(pl.col("judge"))
    )
    agreement = bench_nb.judge_agreement(j, backend="polars")
    assert agreement.n_items == 0
    text = " ".join(tables.table_agreement(agreement).html.split())
    assert "No answer was graded by all 3 judges" in text
    assert "n/a when every verdict is the same" not in text
    assert "f1 × contains" in text
    assert "× unknown (zep)" not in text  # pairs with no answer in common are left out, and counted
    assert "2 pairs of judges that graded no answer in common left out" in text


def _one_short_run() -> pl.DataFrame:
    """Three runs on 40 questions in 8 haystacks, and ``short`` on 12 of them."""
    rows = []
    for rid, seed in (("a1", 3), ("a2", 5), ("a3", 2), ("short", 4)):
        for i in range(12 if rid == "short" else 40):
            rows.append((rid, f"q{i}", f"h{i % 8}", "single-hop", (i * seed) % 7 < 4))
    frame = pl.DataFrame(
        rows, schema=["run_id", "question_id", "haystack_id", "question_type_norm", "correct"], orient="row"
    )
    return frame.with_columns(provider=pl.col("run_id"), status=pl.lit("evaluated"), unscored=pl.lit(False))


def test_a_run_on_other_questions_is_left_out_of_ranks_and_verdicts_not_all_runs() -> None:
    from bench_nb.metrics.uncertainty import ClusterBootstrap

    boot = ClusterBootstrap(_one_short_run())
    unc = tables.table_uncertainty(boot)
    ranks = dict(unc.frame.filter(pl.col("question_type") == "all").select("run_id", "rank").iter_rows())
    assert ranks["short"] is None and all(ranks[r] is not None for r in ("a1", "a2", "a3"))
    apart = tables.table_tell_apart(boot)
    pairs = set(apart.frame.select("run_a", "run_b").iter_rows())
    assert pairs == {("a1", "a2"), ("a1", "a3"), ("a2", "a3")}
    for page in (unc.html, apart.html):
        assert "Left out of ranks and paired verdicts: short (12 questions)" in page
        assert "No ranks or paired verdicts" not in page


def test_no_two_runs_on_one_question_set_give_a_warning_and_no_empty_table() -> None:
    frame = _one_short_run().filter(pl.col("run_id").is_in(["a1", "short"]))
    html = tables.table_tell_apart(frame).html
    assert "No ranks or paired verdicts" in html
    assert "<table" not in html and "<caption" not in html


def test_every_section_names_a_run_by_its_one_label(frame: pl.DataFrame) -> None:
    from bench_nb.charts.labels import run_labels

    second = frame.filter(pl.col("run_id") == "synthetic-sqlite").with_columns(
        run_id=pl.lit("synthetic-sqlite-2")
    )
    q = pl.concat([frame, second])
    labels = run_labels(q)
    assert labels["synthetic-sqlite"] != labels["synthetic-sqlite-2"]  # unique within the report
    judgments = bench_nb.judgments_df(FIXTURE_GLOB, backend="polars")
    judgments = pl.concat(
        [
            judgments,
            judgments.filter(pl.col("run_id") == "synthetic-sqlite").with_columns(
                run_id=pl.lit("synthetic-sqlite-2")
            ),
        ]
    )
    for table in (
        tables.table_budget(q),
        tables.table_failures(q),
        tables.table_disputed(judgments, limit=500),
    ):
        cells = re.findall(r'<td class="run"[^>]*>(.*?)</td>', table.html)
        assert cells, table.html[-300:]
        for rid in ("synthetic-sqlite", "synthetic-sqlite-2"):
            assert html.escape(labels[rid]) in cells, (rid, cells)


def test_the_harness_table_names_runs_by_their_labels() -> None:
    from bench_nb.charts.labels import run_labels

    runs = bench_nb.load_runs(FIXTURE_GLOB)
    labels = run_labels(bench_nb.questions_df(runs, backend="polars"))
    cells = re.findall(r'<td class="run"[^>]*>(.*?)</td>', tables.table_harnesses(runs).html)
    assert cells == [html.escape(labels[r.run_id]) for r in runs]


def _three_question_sets() -> pl.DataFrame:
    """full-context on 40 questions, sqlite on 30 of them, supermemory on 40 others (8 haystacks each)."""
    rows = []
    for rid, provider, ids in (
        ("c1-full-context", "full-context", range(40)),
        ("c1-sqlite", "sqlite", range(30)),
        ("zep_locomo_grades", "supermemory", range(100, 140)),
    ):
        rows += [(rid, provider, f"q{i}", f"h{i % 8}", "single-hop", i % (len(rid) % 4 + 2) > 0) for i in ids]
    frame = pl.DataFrame(
        rows,
        schema=["run_id", "provider", "question_id", "haystack_id", "question_type_norm", "correct"],
        orient="row",
    )
    return frame.with_columns(status=pl.lit("evaluated"), unscored=pl.lit(False))


def test_the_paired_table_leaves_out_pairs_with_no_shared_question_and_names_runs_by_label() -> None:
    table = tables.table_paired(_three_question_sets())
    text = " ".join(re.sub(r"<style>.*?</style>", "", table.html, flags=re.S).split())
    assert "full-context vs sqlite" in text
    assert "supermemory" not in text and "0 / 0" not in text  # both pairs with it share no question
    assert "2 pairs of runs that share no question both scored left out" in text
    assert "10 only in full-context, 0 only in sqlite" in text  # labels in the pair's warning, not run ids
    assert "c1-full-context" not in re.sub(r'title="[^"]*"', "", text)
    none = tables.table_paired(_three_question_sets().filter(pl.col("run_id") != "c1-sqlite")).html
    assert "no two runs share a question both scored" in none and "<table" not in none


def test_the_paired_table_of_one_run_says_there_is_no_pair() -> None:
    # one run has no pair: the frame of pairs has no n_pairs column to filter (the compare report failed); the
    # summary of the compare report showed the table's headings over nothing (issue 37)
    html = tables.table_paired(_three_question_sets().filter(pl.col("run_id") == "c1-sqlite")).html
    assert "Paired comparisons: one run, so no pair of runs to test." in html
    assert "<table" not in html and "left out" not in html


def test_the_summary_pairs_only_leaderboard_neighbours() -> None:
    # The compare report's summary grew one row per pair of runs (45 rows for 10 runs): it shows each run
    # against the next one down the leaderboard, one row fewer than runs (issue 37)
    accuracy = {"mem-c": 0.9, "mem-a": 0.7, "mem-d": 0.5, "mem-b": 0.3}  # the leaderboard: c, a, d, b
    rows = [
        (rid, rid, f"q{i}", f"h{i % 8}", "single-hop", i < acc * 40)
        for rid, acc in sorted(accuracy.items())  # listed a, b, c, d: not the leaderboard's order
        for i in range(40)
    ]
    schema = ["run_id", "provider", "question_id", "haystack_id", "question_type_norm", "correct"]
    q = pl.DataFrame(rows, schema=schema, orient="row").with_columns(
        status=pl.lit("evaluated"), unscored=pl.lit(False), score=pl.col("correct").cast(pl.Float64)
    )
    every = tables.table_paired(q)
    assert every.frame.height == 6
    near = tables.table_paired(q, pairs="neighbours")
    pairs = re.findall(r'<td title="[^"]*">(mem-\w) vs (mem-\w)</td>', near.html)
    assert [frozenset(p) for p in pairs] == [{"mem-c", "mem-a"}, {"mem-a", "mem-d"}, {"mem-d", "mem-b"}]
    assert near.frame.height == 3
    assert "next one down the leaderboard" in near.html
    # the p-values are those of the full table: adjusted for every pair, not only the three shown
    holm = {(a, b): p for a, b, p in every.frame.select("run_a", "run_b", "p_value_holm").rows()}
    assert all(holm[(a, b)] == p for a, b, p in near.frame.select("run_a", "run_b", "p_value_holm").rows())


def test_the_budget_warnings_name_runs_by_their_labels(frame: pl.DataFrame) -> None:
    # a run that records no search latency is left out of the budget curves: the note names its label
    from bench_nb import charts

    q = _imported(frame, "synthetic-sqlite")
    with pytest.warns(UserWarning, match=r"left out \['sqlite'\], which record no") as caught:
        tables.table_budget(q)
    with pytest.warns(UserWarning, match=r"left out \['sqlite'\]"):
        charts.chart_budget_curve(q)
    assert not any("synthetic-sqlite" in str(w.message) for w in caught)
