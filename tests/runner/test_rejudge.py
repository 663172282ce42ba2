"""rejudge: more judges on a finished run, verdicts appended, the checkpoint untouched unless the primary
judge changes; and the ``bench-nb rejudge`` command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from runner_llm import llm_env, llm_server

from bench_nb import judgments_df, questions_df, rejudge
from bench_nb.cli import main
from bench_nb.errors import JudgeError, RunFormatError
from bench_nb.runformat.load import read_checkpoint
from bench_nb.runformat.verdicts import read_verdicts
from llm_server import LLMServer
from stats_fixtures import ContainsJudge, FailingJudge, StrictJudge

__all__ = ["llm_env", "llm_server"]

ANSWERS = {"q1": "Biscuit", "q2": "London", "q3": "in March 2024", "q4": "cello", "q5": None, "q6": ""}


@pytest.fixture
def bench_run(make_run) -> Path:
    return make_run(
        "run-a",
        answers=ANSWERS,
        primary="contains",
        bench_nb={"k": 10, "primaryJudge": "contains"},
        primary_scores={"q1": 1, "q2": 0, "q3": 1, "q4": 1, "q6": 0},
        verdicts={"contains": {"q1": 1, "q2": 0, "q3": 1, "q4": 1, "q6": 0}},
    )


def test_rejudge_appends_verdicts_and_leaves_checkpoint(bench_run: Path) -> None:
    before = (bench_run / "checkpoint.json").read_bytes()
    contains, strict = ContainsJudge(), StrictJudge()
    result = rejudge(bench_run, [contains, strict])
    assert (bench_run / "checkpoint.json").read_bytes() == before
    assert result.graded == {"t-contains": 5, "t-strict": 5}  # q5 has no answer to grade
    assert result.unscored == {"t-contains": 0, "t-strict": 1}  # q6's empty answer
    assert not result.primary_changed and result.primary == "contains"
    verdicts, problems = read_verdicts(bench_run)
    assert not problems and len(verdicts) == 15
    assert verdicts[("q3", "t-strict")]["score"] == 0 and verdicts[("q3", "t-contains")]["score"] == 1
    assert verdicts[("q6", "t-strict")]["unscored"] is True
    df = judgments_df(bench_run, backend="polars")
    assert sorted(set(df["judge"])) == ["contains", "t-contains", "t-strict"]
    assert df.filter(pl.col("primary"))["judge"].unique().to_list() == ["contains"]
    # The judge got the checkpoint's question: text, ground truth, normalised type.
    assert sorted(contains.calls) == ["q1", "q2", "q3", "q4", "q6"]


def test_a_report_only_run_is_rejudged(mb_example: Path, tmp_path: Path) -> None:
    """A MemoryBench report.json alone is a run (``read_run``, the frames): rejudge grades its answers into
    judgments.jsonl beside it, which the judgments frame reads. 0b36249's lock refused it as "not a run
    directory: no checkpoint.json"."""
    run = tmp_path / "report-only"
    run.mkdir()
    shutil.copy(mb_example / "expected" / "report.json", run / "report.json")
    result = rejudge(run, [ContainsJudge()])
    assert result.graded["t-contains"] > 0
    df = judgments_df(run, backend="polars")
    assert df.filter(pl.col("judge") == "t-contains").height == result.graded["t-contains"]
    assert sorted(p.name for p in run.iterdir()) == [".lock", "judgments.jsonl", "report.json"]


def test_rejudge_again_skips_graded_answers_unless_forced(bench_run: Path) -> None:
    judge = ContainsJudge()
    rejudge(bench_run, [judge])
    lines = (bench_run / "judgments.jsonl").read_text().count("\n")
    again = rejudge(bench_run, [judge])
    assert again.graded == {"t-contains": 0} and again.skipped == {"t-contains": 5}
    assert (bench_run / "judgments.jsonl").read_text().count("\n") == lines
    forced = rejudge(bench_run, [judge], force=True, concurrency=3)
    assert forced.graded == {"t-contains": 5}
    assert (bench_run / "judgments.jsonl").read_text().count("\n") == lines + 5


def test_a_failing_judge_keeps_what_it_graded_and_resumes(bench_run: Path) -> None:
    with pytest.raises(JudgeError, match=r"t-failing.*question q3.*judge API unavailable"):
        rejudge(bench_run, [FailingJudge(fail_on="q3")])
    verdicts, _ = read_verdicts(bench_run)
    saved = sorted(q for q, j in verdicts if j == "t-failing")
    assert saved == ["q1", "q2"]  # graded before the failure, kept
    result = rejudge(bench_run, [FailingJudge(fail_on="none")])
    assert result.graded == {"t-failing": 3} and result.skipped == {"t-failing": 2}


def test_switch_primary_judge(bench_run: Path) -> None:
    result = rejudge(bench_run, [StrictJudge()], primary="t-strict")
    assert result.primary_changed and result.primary == "t-strict" and not result.report_stale
    ck, problems = read_checkpoint(bench_run / "checkpoint.json", strict=True)
    assert not problems and ck.judge == "t-strict" and ck.benchNb and ck.benchNb["primaryJudge"] == "t-strict"
    assert ck.questions["q1"].phases.evaluate.score == 1
    assert ck.questions["q3"].phases.evaluate.score == 0  # strict: "in March 2024" is not exact
    q6 = ck.questions["q6"]
    assert q6.phases.evaluate.score is None and q6.phases.evaluate.label == "unscored"
    assert q6.benchNb and q6.benchNb["unscored"] is True
    assert ck.questions["q5"].phases.evaluate.status == "pending"
    qdf = questions_df(bench_run, backend="polars")
    assert qdf.filter(pl.col("question_id") == "q6")["unscored"][0]
    df = judgments_df(bench_run, backend="polars")
    assert df.filter(pl.col("primary"))["judge"].unique().to_list() == ["t-strict"]
    assert df.filter(pl.col("judge") == "contains").height == 5  # the old primary's verdicts are kept
    assert not (bench_run / "checkpoint.json.tmp").exists()


def test_switch_primary_on_memorybench_run_keeps_its_verdicts(make_run) -> None:
    run = make_run(
        "mb",
        answers={"q1": "Biscuit", "q2": "Leeds", "q3": "March"},
        primary="gpt-4o",
        bench_nb=None,
        primary_scores={"q1": 1, "q2": 1},
        evaluate_failed=("q3",),
    )
    (run / "report.json").write_text('{"evaluations": []}')
    result = rejudge(run, [ContainsJudge()], primary="t-contains")
    assert result.report_stale
    raw = json.loads((run / "checkpoint.json").read_text())
    assert raw["judge"] == "t-contains" and "benchNb" not in raw  # still read as a MemoryBench run
    ev3 = raw["questions"]["q3"]["phases"]["evaluate"]
    assert ev3["status"] == "completed" and ev3["score"] == 0 and "error" not in ev3
    verdicts, _ = read_verdicts(run)
    assert verdicts[("q1", "gpt-4o")]["score"] == 1 and ("q3", "gpt-4o") not in verdicts
    assert (run / "checkpoint.json").read_text().startswith('{\n  "runId": "mb",')


def test_switch_primary_refused_without_verdicts_or_with_a_journal(bench_run: Path) -> None:
    with pytest.raises(
        JudgeError, match=r"judge 'nobody' has no verdict in the run; judges with verdicts: contains\."
    ):
        rejudge(bench_run, [], primary="nobody")
    # a misspelt judge said "grade them first (rejudge -j contans)": a judge that does not exist
    with pytest.raises(
        JudgeError, match=r"judge 'contans' has no verdict in the run \(did you mean 'contains'\?\)"
    ):
        rejudge(bench_run, [], primary="contans")
    rejudge(bench_run, [ContainsJudge()])
    (bench_run / "journal.jsonl").write_text('{"q": ["q1"]}\n')
    before = (bench_run / "checkpoint.json").read_bytes()
    with pytest.raises(RunFormatError, match="not yet compacted"):
        rejudge(bench_run, [], primary="t-contains")
    assert (bench_run / "checkpoint.json").read_bytes() == before


def test_rejects_non_judges_and_duplicate_names(bench_run: Path) -> None:
    with pytest.raises(JudgeError, match="not a judge"):
        rejudge(bench_run, [object()])  # type: ignore[list-item]
    with pytest.raises(JudgeError, match="distinct"):
        rejudge(bench_run, [ContainsJudge(), ContainsJudge()])


def test_real_memorybench_run_rejudged_and_still_reported(mb_example: Path, tmp_path: Path) -> None:
    from bench_nb.runformat import memorybench_report

    src = mb_example / "data" / "runs" / "fx-compare-supermemory"
    run = tmp_path / "fx-compare-supermemory"
    shutil.copytree(src, run)
    before = (run / "checkpoint.json").read_bytes()
    result = rejudge(run, [ContainsJudge()])
    assert result.graded["t-contains"] == 20 and (run / "checkpoint.json").read_bytes() == before
    rejudge(run, [], primary="t-contains")
    dataset = mb_example / "data" / "benchmarks" / "locomo" / "locomo10.json"
    report = memorybench_report(run, dataset)
    verdicts, _ = read_verdicts(run)
    correct = sum(v["score"] == 1 for (q, j), v in verdicts.items() if j == "t-contains")
    assert report["judge"] == "t-contains"
    assert report["summary"]["totalQuestions"] == 20 and report["summary"]["correctCount"] == correct
    old = [v for (q, j), v in verdicts.items() if j == "gpt-4o"]
    assert len(old) == 19 and sum(v["score"] for v in old) == 16  # MemoryBench's own verdicts kept


def test_cli_switches_primary_and_prints_agreement(
    bench_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rejudge(bench_run, [StrictJudge()])
    main(["rejudge", str(bench_run), "--primary", "t-strict"])
    out = capsys.readouterr().out
    assert "primary judge is now t-strict" in out
    assert "agreement over 4 answers every judge scored (1 dropped)" in out
    assert "contains vs t-strict: n=4 agreement 0.750" in out
    assert json.loads((bench_run / "checkpoint.json").read_text())["judge"] == "t-strict"


def test_cli_usage_and_errors(bench_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["rejudge", str(bench_run)])
    assert exc.value.code == 2 and "give judges" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["rejudge", str(bench_run), "--primary", "nobody"])
    assert exc.value.code == 1 and "error: judge 'nobody' has no verdict" in capsys.readouterr().err


def test_cli_with_registry_judges(bench_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("bench_nb.judges.registry", reason="the judge registry ships with the runner")
    main(["rejudge", str(bench_run), "-j", "f1,contains"])
    out = capsys.readouterr().out
    assert "f1: graded 5" in out
    assert {"f1"} <= set(judgments_df(bench_run, backend="polars")["judge"])


def test_registry_judges_on_the_real_memorybench_run(mb_example: Path, tmp_path: Path) -> None:
    pytest.importorskip("bench_nb.judges.registry", reason="the judge registry ships with the runner")
    from bench_nb import judge_agreement

    run = tmp_path / "fx"
    shutil.copytree(mb_example / "data" / "runs" / "fx-compare-supermemory", run)
    result = rejudge(run, ["f1", "contains"])
    assert result.judges == ("f1", "contains") and result.graded == {"f1": 20, "contains": 20}
    ag = judge_agreement(judgments_df(run))
    assert set(ag.judges) == {"gpt-4o", "f1", "contains"}
    # gpt-4o's 429 left one answer without its verdict: dropped from the complete-case statistics.
    assert ag.n_items + ag.n_dropped == 20 and ag.n_dropped >= 1
    assert len(ag.pairwise) == 3 and (ag.pairwise["n"] >= 19).all()


def test_rejudge_checks_every_key_before_the_first_question(
    bench_run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38: ``rejudge -j gpt-4o`` without a key failed on the first question, with a doubled prefix
    ("judge 'gpt-4o' failed on question q1: judge gpt-4o, question q1: OPENAI_API_KEY ..."). Now every missing
    key is named before anything is graded, and nothing is written."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    judgments = (bench_run / "judgments.jsonl").read_bytes()
    with pytest.raises(SystemExit) as exc:
        main(["rejudge", str(bench_run), "-j", "f1,gpt-4o,sonnet-4.5"])
    assert exc.value.code == 1
    [error] = capsys.readouterr().err.splitlines()
    assert error == (
        "error: judge 'gpt-4o': OPENAI_API_KEY is not set: export it to call 'gpt-4o' (keys come from the "
        "environment only); judge 'sonnet-4.5': ANTHROPIC_API_KEY is not set: export it to call 'sonnet-4.5' "
        "(keys come from the environment only)"
    )
    assert (bench_run / "judgments.jsonl").read_bytes() == judgments  # not even f1 graded


def test_rejudge_exits_1_when_no_answer_was_scored(
    bench_run: Path, llm_env: LLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38: every command exits non-zero when nothing it was asked to do succeeded; a judge whose every
    reply is unreadable grades each answer unscored."""
    llm_env.responder = lambda path, body: "no verdict in here"
    with pytest.raises(SystemExit) as exc:
        main(["rejudge", str(bench_run), "-j", "gpt-4o-mini"])
    assert exc.value.code == 1
    captured = capsys.readouterr()
    assert "gpt-4o-mini: graded 5, 5 unscored" in captured.out
    assert captured.err == "error: no answer was scored (5 graded, every one unscored)\n"
