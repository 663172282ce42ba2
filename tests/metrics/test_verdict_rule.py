"""One rule for null, NaN and unscored verdicts through every public metric (issue 27, item 7).

On one frame, each run has 100 evaluated questions in 10 haystacks: 80 with a verdict and 20 without one
(10 with no score and no ``correct`` recorded, 5 with a NaN score, 5 marked unscored). Every function must
say the same thing: 80 scored, 20 unscored, none of the 20 counted as wrong. Before the rule ``accuracy`` and
``memscore`` said 40% of 100 for run a while ``accuracy_intervals`` said 50% of 80, and a NaN score raised in
some functions and counted as wrong in others.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from metric_frames import frame, row

import bench_nb
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.metrics.judge_quality import prompt_sweep

CORRECT = {"a": 40, "b": 50}  # of the 80 questions with a verdict


def _questions() -> pl.DataFrame:
    rows = []
    for run, right in CORRECT.items():
        for i in range(100):
            values = {"run_id": run, "provider": run, "question_id": f"q{i}", "haystack_id": f"h{i % 10}"}
            values["graded"] = False
            if i < 80:
                rows.append(row(i < right, **values))
            elif i < 90:  # evaluated, but no score and no correct recorded
                rows.append(row(None, **values))
            elif i < 95:  # a NaN score
                rows.append(row(None, **values) | {"score": math.nan})
            else:  # the judge could not score it
                rows.append(row(None, unscored=True, **values))
    return frame(*rows)


def _judgments(q: pl.DataFrame) -> pl.DataFrame:
    one = q.select("run_id", "question_id", "haystack_id", "score", "unscored", "question_type_norm")
    return pl.concat(
        [
            one.with_columns(judge=pl.lit("j1"), primary=True, replicate=pl.lit(1, pl.Int64)),
            one.with_columns(judge=pl.lit("j2"), primary=False, replicate=pl.lit(1, pl.Int64)),
        ]
    )


@pytest.fixture(scope="module")
def q() -> pl.DataFrame:
    return _questions()


def test_the_rule_itself(q: pl.DataFrame) -> None:
    v = with_verdicts(q)
    a = v.filter(pl.col("run_id") == "a")
    assert a["score"].null_count() == 20 and not a["score"].is_nan().any()
    assert a["unscored"].sum() == 20 and a["correct"].sum() == 40
    assert with_verdicts(pl.DataFrame({"correct": [True, None, False]}))["unscored"].to_list() == [
        False,
        True,
        False,
    ]
    with pytest.raises(ValueError, match=r"run 'a', question 'q0': score inf is not in \[0, 1\]"):
        with_verdicts(
            q.with_columns(score=pl.when(pl.col("question_id") == "q0").then(math.inf).otherwise("score"))
        )


@pytest.mark.parametrize("backend", ["polars", "pandas"])
def test_every_metric_counts_80_scored_and_20_unscored(q: pl.DataFrame, backend: str) -> None:
    data = q if backend == "polars" else q.to_pandas()

    def rows(df: object, key: str = "run_id") -> dict:
        out = df if isinstance(df, pl.DataFrame) else pl.from_pandas(df)
        return {r[key]: r for r in out.iter_rows(named=True)}

    ms = rows(bench_nb.memscore(data, backend="polars"))
    acc = rows(bench_nb.metrics.accuracy(data, backend="polars"))
    by_type = rows(bench_nb.accuracy_by_type(data, backend="polars"))
    success = rows(bench_nb.success_rate(data, backend="polars"))
    intervals = rows(bench_nb.accuracy_intervals(data, backend="polars"))
    ranks = rows(bench_nb.rank_intervals(data, backend="polars"))
    pareto = rows(bench_nb.pareto_frontier(data, backend="polars"))
    for run, right in CORRECT.items():
        assert (ms[run]["accuracy"], ms[run]["evaluated"], ms[run]["correct"]) == (right / 80, 80, right)
        assert ms[run]["unscored"] == 20 and ms[run]["quality"] == math.floor(100 * right / 80 + 0.5)
        for r in (acc[run], by_type[run]):
            assert (r["scored"], r["correct"], r["unscored"], r["accuracy"]) == (80, right, 20, right / 80)
        assert (success[run]["evaluated"], success[run]["unscored"]) == (100, 20)
        assert (intervals[run]["accuracy"], intervals[run]["n"]) == (right / 80, 80)
        assert ranks[run]["accuracy"] == right / 80
        assert pareto[run]["accuracy"] == right / 80
    pair = bench_nb.metrics.paired.paired_comparison(data, "a", "b")
    assert (pair.n_pairs, pair.n_dropped) == (80, 20)
    assert pair.difference == pytest.approx((40 - 50) / 80)
    assert (pair.accuracy_a, pair.accuracy_b) == (0.5, 0.625)
    tell = (
        bench_nb.metrics.clustered_paired.tell_apart(data, backend="polars")
        .filter(pl.col("question_type") == "all")
        .row(0, named=True)
    )
    assert tell["n"] == 80 and tell["difference"] == pytest.approx(-0.125)
    clustered = bench_nb.metrics.clustered_paired.clustered_paired_comparisons(data, backend="polars").row(
        0, named=True
    )
    assert clustered["n"] == 80 and clustered["difference"] == pytest.approx(-0.125)
    plan = bench_nb.metrics.detectable_differences(data, backend="polars").row(0, named=True)
    assert plan["n"] == 80 and plan["accuracy"] == pytest.approx((0.5 + 0.625) / 2)


def test_judgments_metrics_follow_the_same_rule(q: pl.DataFrame) -> None:
    j = _judgments(q)
    agreement = bench_nb.judge_agreement(j, backend="polars")
    per_judge = {r["judge"]: r for r in agreement.accuracy.iter_rows(named=True)}
    assert (per_judge["j1"]["scored"], per_judge["j1"]["correct"], per_judge["j1"]["unscored"]) == (
        160,
        90,
        40,
    )
    assert per_judge["j1"]["accuracy"] == pytest.approx(90 / 160)
    assert agreement.n_items == 160 and agreement.n_dropped == 40
    by_run = {
        r["run_id"]: r
        for r in agreement.accuracy_by_run.filter(pl.col("judge") == "j1").iter_rows(named=True)
    }
    assert by_run["a"]["accuracy"] == 0.5 and by_run["b"]["accuracy"] == 0.625
    summary = {r["run_id"]: r for r in bench_nb.replicate_summary(j, backend="polars").iter_rows(named=True)}
    assert (summary["a"]["accuracy_mean"], summary["a"]["n"]) == (50.0, 80)
    pair = bench_nb.metrics.paired.paired_comparison(j.with_columns(provider=pl.col("run_id")), "a", "b")
    assert (pair.n_pairs, pair.n_dropped, pair.difference) == (80, 20, pytest.approx(-0.125))
    prompts = j.with_columns(
        provider=pl.col("run_id"),
        judge=pl.when(pl.col("judge") == "j1").then(pl.lit("m[strict]")).otherwise(pl.lit("m")),
    )
    sweep = prompt_sweep(prompts, backend="polars").filter(pl.col("run_id") == "a")
    assert sweep["scored"].to_list() == [80, 80] and sweep["accuracy"].to_list() == [50.0, 50.0]


def _split_case(question: str, *verdicts: dict) -> list[dict]:
    base = {
        "run_id": "a",
        "provider": "a",
        "question_id": question,
        "question_type_norm": "t",
        "run_path": "a",
    }
    return [base | {"judge": f"j{i}", "correct": None, "unscored": False} | v for i, v in enumerate(verdicts)]


def test_disputed_questions_apply_the_one_verdict_rule() -> None:
    # split_verdicts (the frames layer's rule behind disputed_questions and failure_reasons' judge_disputed)
    # read score == 1 / score == 0 and the unscored flag alone: a NaN score, an evaluated verdict with no score
    # and a null score beside correct = true vanished, and a graded 0.5 was not a scored verdict. Now it
    # applies with_verdicts first, the rule every metric applies.
    from bench_nb.frames.judgments import split_verdicts

    rows = [
        *_split_case("nan", {"score": 1.0}, {"score": 0.0}, {"score": math.nan}),
        *_split_case("null", {"score": 1.0}, {"score": 0.0}, {"score": None}),
        *_split_case("correct", {"score": None, "correct": True}, {"score": 0.0}),
        *_split_case("graded", {"score": 1.0}, {"score": 0.5}),
        *_split_case("graded-unscored", {"score": 0.5}, {"score": None, "unscored": True}),
        *_split_case("agree", {"score": 1.0}, {"score": 1.0}, {"score": math.nan}),
    ]
    judgments = pl.DataFrame(rows, schema_overrides={"score": pl.Float64, "correct": pl.Boolean})
    ruled = with_verdicts(judgments)
    for include in (False, True):
        got = {
            r["question_id"]: r
            for r in split_verdicts(judgments, include_unscored=include).iter_rows(named=True)
        }
        want = set()
        for (qid,), part in ruled.group_by("question_id"):
            right, wrong = int((part["score"] == 1).sum()), int((part["score"] == 0).sum())
            scored, unscored = int(part["score"].is_not_null().sum()), int(part["unscored"].sum())
            if (right and wrong) or (include and unscored and scored):
                want.add(qid)
                r = got[qid]
                assert (r["n_correct"], r["n_incorrect"], r["n_unscored"]) == (right, wrong, unscored), qid
                assert r["split"] == pytest.approx(min(right, wrong) / scored), qid
        assert set(got) == want
    assert set(got) == {"nan", "null", "correct", "graded-unscored", "agree"}
    nan = got["nan"]
    assert (nan["n_correct"], nan["n_incorrect"], nan["n_unscored"], nan["split"]) == (1, 1, 1, 0.5)


def test_with_verdicts_of_frames_made_and_dropped_in_turn_is_each_ones_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # In a report kernel results are shared by frame identity while a frame lives; a frame made after another
    # was dropped may get its id, and must still get its own verdicts.
    monkeypatch.setenv("BENCH_NB_REPORT", "1")
    ids = set()
    for i in range(50):
        scores = pl.DataFrame({"run_id": ["r"], "question_id": ["q"], "score": [i / 49]})
        ids.add(id(scores))
        assert with_verdicts(scores)["score"].to_list() == [i / 49]
        del scores
    assert len(ids) < 50  # ids were reused: the case this checks


def _two_runs() -> pl.DataFrame:
    rows = [
        row(i < right, run_id=run, provider=run, question_id=f"q{i}", haystack_id=f"h{i}")
        for run, right in (("a", 6), ("b", 4))
        for i in range(10)
    ]
    return frame(*rows)


def test_a_frame_changed_in_place_is_not_served_what_was_worked_out_from_its_old_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # d2c28cd, 1a481f2, eed4c22 remembered verdicts, accuracy, MemScore and the leaderboard's order by the
    # frame's id in every process; a user's frame changed in place (df[i, c] = v) keeps its id, and got the
    # numbers of its old values.
    from bench_nb.charts.labels import leaderboard_order
    from bench_nb.metrics.accuracy import accuracy_frame
    from bench_nb.metrics.memscore import memscore_frame

    monkeypatch.delenv("BENCH_NB_REPORT", raising=False)
    q = _two_runs()
    assert with_verdicts(q)["score"].sum() == 10
    assert accuracy_frame(q)["accuracy"].to_list() == [0.6, 0.4]
    assert memscore_frame(q)["quality"].to_list() == [60, 40]
    assert leaderboard_order(q) == ["a", "b"]
    for i in range(3):  # run a's first three answers judged wrong after all: 3 of 10
        q[i, "score"], q[i, "correct"] = 0.0, False
    assert with_verdicts(q)["score"].sum() == 7
    assert accuracy_frame(q)["accuracy"].to_list() == [0.3, 0.4]
    assert memscore_frame(q)["quality"].to_list() == [30, 40]
    assert leaderboard_order(q) == ["b", "a"]


def test_a_result_changed_in_place_is_not_handed_out_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1a481f2 handed every caller the one remembered MemScore frame: a caller that changed it changed the next.
    from bench_nb.metrics.memscore import memscore_frame

    monkeypatch.delenv("BENCH_NB_REPORT", raising=False)
    q = _two_runs()
    mine = memscore_frame(q)
    mine[0, "quality"] = 99
    assert memscore_frame(q)["quality"].to_list() == [60, 40]


def test_a_report_kernel_works_out_the_verdicts_once_per_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_NB_REPORT", "1")  # the report's notebook never changes a frame in place
    q = _two_runs()
    assert with_verdicts(q) is with_verdicts(q)
