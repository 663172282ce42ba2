"""judgments_df, judge_agreement on run frames, and disputed_questions on fixture runs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import bench_nb
from bench_nb import disputed_questions, judge_agreement, judgments_df, load_runs
from bench_nb.errors import RunFormatError, RunFormatWarning

ANSWERS = {
    "q1": "Biscuit",
    "q2": "London",
    "q3": "in March 2024",
    "q4": "cello",
    "q5": None,
    "q6": "I do not know",
}


@pytest.fixture
def three_judges(make_run):
    return make_run(
        "run-a",
        answers=ANSWERS,
        primary="contains",
        bench_nb={"k": 10},
        primary_scores={"q1": 1, "q2": 0, "q3": 1, "q4": 1, "q6": 1},
        verdicts={
            "f1": {"q1": 1, "q2": 0, "q3": 0, "q4": 1, "q6": 0},
            "strict": {"q1": 1, "q2": 0, "q3": 0, "q4": 1, "q6": None},
        },
    )


def test_one_row_per_run_question_judge(three_judges: Path) -> None:
    df = judgments_df(three_judges, backend="polars")
    assert df.height == 15  # 5 answered questions × 3 judges (q5's answer failed: no verdict)
    assert df.select("question_id", "judge").is_duplicated().sum() == 0
    primary = df.filter(pl.col("primary"))
    assert set(primary["judge"]) == {"contains"} and set(primary["source"]) == {"checkpoint"}
    row = df.filter((pl.col("judge") == "strict") & (pl.col("question_id") == "q6")).row(0, named=True)
    assert row["unscored"] and row["score"] is None and row["label"] == "unscored"
    assert row["question_type"] == "adversarial" and row["question_type_norm"] == "abstention"
    assert set(df["provider"]) == {"sqlite"}


def test_primary_from_judgments_file_wins_over_checkpoint(make_run) -> None:
    run = make_run(
        "run-p",
        answers={"q1": "Biscuit", "q2": "Leeds"},
        primary="contains",
        bench_nb={},
        primary_scores={"q1": 1, "q2": 1},
        verdicts={"contains": {"q1": 1, "q2": 0}},  # a later re-grade of the primary judge
    )
    df = judgments_df(run, backend="polars").filter(pl.col("judge") == "contains")
    assert df.height == 2 and set(df["source"]) == {"judgments"}
    assert df.filter(pl.col("question_id") == "q2")["score"][0] == 0


def test_memorybench_run_without_judgments_file(make_run) -> None:
    run = make_run(
        "mb",
        answers={"q1": "Biscuit", "q2": "Leeds", "q3": "x"},
        primary="gpt-4o",
        bench_nb=None,
        primary_scores={"q1": 1, "q2": 1},
        evaluate_failed=("q3",),
    )
    df = judgments_df(run, backend="polars")
    assert df["judge"].to_list() == ["gpt-4o", "gpt-4o"]  # the failed evaluation has no verdict
    assert df["primary"].all()


def test_real_memorybench_example(mb_example: Path) -> None:
    run_dir = mb_example / "data" / "runs" / "fx-compare-supermemory"
    df = judgments_df(run_dir, backend="polars")
    assert df.height == 19  # 19 evaluated of 20 (one judge 429)
    assert set(df["judge"]) == {"gpt-4o"} and int(df["score"].sum()) == 16


def test_bad_judgments_line_is_a_problem_or_an_error(three_judges: Path) -> None:
    with open(three_judges / "judgments.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"questionId": "q1", "judge": "f1", "score": 1, "label": "correct"\n')  # torn line
    runs = load_runs(three_judges)
    with pytest.warns(RunFormatWarning, match="line 11"):
        df = judgments_df(runs, backend="polars")
    assert df.height == 15
    assert any("line 11" in str(p) for p in runs.all_problems)
    with pytest.raises(RunFormatError, match=r"judgments\.jsonl"):
        judgments_df(three_judges, strict=True)


def test_score_outside_zero_one_is_reported(three_judges: Path) -> None:
    line = {"questionId": "q2", "judge": "weird", "score": 1.5, "label": "correct", "explanation": ""}
    graded = {"questionId": "q2", "judge": "rubric", "score": 0.5, "label": "incorrect", "explanation": ""}
    with open(three_judges / "judgments.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n" + json.dumps(graded) + "\n")
    runs = load_runs(three_judges)
    with pytest.warns(RunFormatWarning, match=r"score 1\.5 of judge 'weird' is not in \[0, 1\]"):
        frame = judgments_df(runs, backend="polars")
    assert "weird" not in set(frame["judge"])
    assert any("1.5" in str(p) and p.question_id == "q2" for p in runs.all_problems)
    assert frame.filter(frame["judge"] == "rubric")["score"].to_list() == [0.5]  # a graded score (BEAM) loads
    with pytest.raises(RunFormatError, match=r"not in \[0, 1\]"):
        judgments_df(three_judges, strict=True)


def test_agreement_on_judgments_frame(three_judges: Path) -> None:
    ag = judge_agreement(judgments_df(three_judges))
    assert ag.judges == ("f1", "strict", "contains")
    assert (ag.n_items, ag.n_dropped) == (4, 1)  # strict left q6 unscored
    pairs = ag.pairwise.set_index(["judge_a", "judge_b"])
    assert pairs.loc[("f1", "strict"), "percent_agreement"] == 1.0
    assert pairs.loc[("f1", "contains"), "n"] == 5 and pairs.loc[("f1", "contains"), "n_dropped"] == 0
    assert pairs.loc[("f1", "contains"), "percent_agreement"] == pytest.approx(3 / 5)
    cm = ag.confusion_matrix("contains", "f1")
    assert cm.loc[1, 0] == 2 and cm.loc[1, 1] == 2 and cm.loc[0, 0] == 1 and cm.values.sum() == 5
    assert ag.confusion_matrix("f1", "contains").loc[0, 1] == 2  # the same pair, transposed
    acc = ag.accuracy.set_index("judge")
    assert acc.loc["contains", "accuracy"] == pytest.approx(0.8)
    assert acc.loc["strict", "scored"] == 4 and acc.loc["strict", "unscored"] == 1
    by_type = ag.by_type.set_index("question_type_norm")
    assert by_type.loc["single-hop", "n_items"] == 2 and by_type.loc["single-hop", "percent_agreement"] == 1.0
    assert by_type.loc["abstention", "n_dropped"] == 1
    summary = ag.summary().set_index("statistic")
    assert summary.loc["krippendorff_alpha", "items"] == 5 and summary.loc["fleiss_kappa", "dropped"] == 1
    with pytest.raises(KeyError):
        ag.confusion_matrix("f1", "nobody")


def test_ranking_changes_with_the_judge(make_run) -> None:
    answers = {q: "a" for q in ("q1", "q2", "q3", "q4")}
    # Under the lenient judge A beats B; under the strict one B beats A.
    a = make_run(
        "a",
        provider="alpha",
        answers=answers,
        bench_nb={},
        primary_scores={"q1": 1, "q2": 1, "q3": 1, "q4": 0},
        verdicts={"strict": {"q1": 1, "q2": 0, "q3": 0, "q4": 0}},
    )
    b = make_run(
        "b",
        provider="beta",
        answers=answers,
        bench_nb={},
        primary_scores={"q1": 1, "q2": 1, "q3": 0, "q4": 0},
        verdicts={"strict": {"q1": 1, "q2": 1, "q3": 0, "q4": 0}},
    )
    ag = judge_agreement([a, b], backend="polars")
    ranks = {(r["run_id"], r["judge"]): r["rank"] for r in ag.accuracy_by_run.iter_rows(named=True)}
    assert ranks == {("a", "contains"): 1, ("b", "contains"): 2, ("a", "strict"): 2, ("b", "strict"): 1}
    assert ag.ranking_changes is True
    assert set(ag.accuracy_by_run["provider"]) == {"alpha", "beta"}
    same = judge_agreement([a, b], judges=["contains"])
    assert same.ranking_changes is None and len(same.pairwise) == 0 and same.n_items == 8


def test_agreement_input_errors() -> None:
    with pytest.raises(ValueError, match="missing"):
        judge_agreement(pl.DataFrame({"question_id": ["q"], "judge": ["j"]}))
    with pytest.raises(ValueError, match=r"in \[0, 1\] \(0 or 1, or a graded score\) or null"):
        judge_agreement(pl.DataFrame({"question_id": ["q"], "judge": ["j"], "score": [2]}))
    dup = pl.DataFrame({"question_id": ["q", "q"], "judge": ["j", "j"], "score": [1, 0]})
    with pytest.raises(ValueError, match="more than one verdict"):
        judge_agreement(dup)
    ok = pl.DataFrame({"question_id": ["q", "q"], "judge": ["j", "k"], "score": [1, 0]})
    with pytest.raises(ValueError, match="no verdict"):
        judge_agreement(ok, judges=["j", "x"])


def test_run_column_is_part_of_the_item() -> None:
    df = pl.DataFrame(
        {
            "run": ["r1", "r1", "r2", "r2"],
            "question_id": ["q", "q", "q", "q"],
            "judge": ["j", "k", "j", "k"],
            "score": [1, 1, 0, 1],
        }
    )
    ag = judge_agreement(df)
    assert ag.n_items == 2 and ag.percent_agreement == 0.5


def test_disputed_questions_most_split_first(three_judges: Path) -> None:
    d = disputed_questions(three_judges, backend="polars")
    assert d["question_id"].to_list() == ["q6", "q3"]  # q6: 1 vs 1 (+1 unscored); q3: 1 vs 2
    top = d.row(0, named=True)
    assert top["split"] == 0.5 and top["n_unscored"] == 1
    assert top["correct_judges"] == "contains" and top["incorrect_judges"] == "f1"
    assert top["label:strict"] == "unscored" and top["explanation:f1"] == "f1 says 0"
    assert top["question"] == "What is Priya's favourite colour?" and top["hypothesis"] == "I do not know"
    assert top["context"].startswith("1. memory about nothing for q6\n2. <b>second</b> hit of q6")
    only_two = disputed_questions(judgments_df(three_judges), judges=["f1", "strict"], n_hits=1)
    assert len(only_two) == 0  # f1 and strict never split on a scored answer
    with_unscored = disputed_questions(three_judges, judges=["f1", "strict"], include_unscored=True)
    assert with_unscored["question_id"].tolist() == ["q6"]
    assert with_unscored["context"][0].count("\n") == 1  # both hits of the fixture (n_hits=3)
    one_hit = disputed_questions(three_judges, n_hits=1)
    assert one_hit["context"].tolist() == [
        "1. memory about nothing for q6",
        "1. memory about March 2024 for q3",
    ]


def test_disputed_context_from_results_file(make_run) -> None:
    run = make_run(
        "r",
        answers={"q1": "dog"},
        bench_nb={},
        primary_scores={"q1": 1},
        verdicts={"strict": {"q1": 0}},
    )
    ck = json.loads((run / "checkpoint.json").read_text())
    del ck["questions"]["q1"]["phases"]["search"]["results"]  # only results/<qid>.json left
    (run / "checkpoint.json").write_text(json.dumps(ck))
    d = disputed_questions(run, backend="polars")
    assert d["context"][0].startswith("1. memory about Biscuit for q1")


FIXTURE_RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


@pytest.mark.parametrize(
    "call",
    [
        lambda runs: judge_agreement(runs, judges=["contains", "f1x"]),
        lambda runs: disputed_questions(runs, judges=["contains", "f1x"]),
        lambda runs: bench_nb.failure_reasons(runs, judges=["contains", "f1x"]),
        lambda runs: bench_nb.judge_audit(runs, judge="f1x"),
    ],
    ids=["judge_agreement", "disputed_questions", "failure_reasons", "judge_audit"],
)
def test_a_judge_with_no_verdict_is_named_with_the_nearest_and_the_judges_present(call) -> None:
    """A judge name with no verdict in the runs (a typo) raises naming it, the nearest judge and the judges
    there: disputed_questions, failure_reasons and judge_audit filtered every verdict out and returned a
    table as if no judge disagreed; judge_agreement said "judges present: []" (it listed them after the
    filter)."""
    runs = load_runs(sorted(FIXTURE_RUNS.iterdir()))
    with pytest.raises(ValueError, match="judge 'f1x' has no verdict in these runs") as raised:
        call(runs)
    assert "(did you mean 'f1'?); judges present: f1, contains" in str(raised.value)


def test_judge_agreement_reads_a_judge_given_as_a_string_as_one_judge() -> None:
    """``judges="f1"`` is one judge, as ``known_judges`` reads it: judge_agreement went on to compare the judges
    'f' and '1', an agreement of nothing (n_items 0) returned without a word."""
    runs = load_runs(sorted(FIXTURE_RUNS.iterdir()))
    one = judge_agreement(runs, judges="f1")
    assert one.judges == ("f1",)
    assert repr(one) == repr(judge_agreement(runs, judges=["f1"]))


def test_compare_runs_names_a_judge_with_no_verdict_and_the_judges_present() -> None:
    """``compare_runs(runs, judge="f1x")`` said only "no verdict of judge 'f1x' in the data"."""
    from bench_nb.errors import ComparisonError

    with pytest.raises(ComparisonError) as raised:
        bench_nb.compare_runs(sorted(FIXTURE_RUNS.iterdir()), judge="f1x")
    assert str(raised.value) == (
        "judge 'f1x' has no verdict in these runs (did you mean 'f1'?); judges present: f1, contains"
    )


def test_judge_agreement_names_a_type_column_the_judgments_lack() -> None:
    """``type_column="question_typ"`` gave an empty ``by_type`` table without a word."""
    with pytest.raises(ValueError, match=r"type_column='question_typ': .*\(did you mean 'question_type'\?\)"):
        judge_agreement(sorted(FIXTURE_RUNS.iterdir()), type_column="question_typ")


def test_a_questions_frame_given_for_judgments_is_named() -> None:
    """``judge_agreement(questions_df(...))`` and ``disputed_questions(questions_df(...))`` read the primary
    judge's verdicts as the judgments: one judge per question, so NaN agreement and no dispute, silently."""
    questions = bench_nb.questions_df(sorted(FIXTURE_RUNS.iterdir()))
    for function in (judge_agreement, disputed_questions):
        with pytest.raises(
            ValueError, match=r"a questions frame \(questions_df: the primary judge's verdict only\)"
        ):
            function(questions)
    assert judge_agreement(judgments_df(sorted(FIXTURE_RUNS.iterdir()))).pairwise.shape[0] == 1
