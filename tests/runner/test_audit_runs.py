"""``write_audit_runs`` and ``rejudge --judge-prompts``: audit sets written as run directories, graded,
resumable, read by ``judge_audit``; an LLM judge graded with three prompts against the local API server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
from runner_llm import llm_env, llm_server

from bench_nb.errors import JudgeError
from bench_nb.frames.judgments import judgments_frame
from bench_nb.metrics.judge_quality import judge_audit, judge_error_rates, prompt_sweep
from bench_nb.runformat.load import load_runs
from bench_nb.runner.audit import write_audit_runs
from bench_nb.runner.rejudge import rejudge
from llm_server import LLMServer, request_text

__all__ = ["llm_env", "llm_server"]
ANSWERS = {
    "q1": "Biscuit",
    "q2": "Leeds",
    "q3": "in March 2024",
    "q4": "cello",
    "q5": "Manchester",
    "q6": "no idea",
}


def test_audit_sets_are_run_directories_graded_and_resumable(make_run) -> None:
    source = make_run("src", answers=ANSWERS, primary="contains", bench_nb={"k": 10})
    made = write_audit_runs(source, ["contains", "overlap"])
    assert [m.generator for m in made] == ["specific", "vague", "dont-know", "paraphrase"]
    assert all(m.path == source / "audit" / m.generator for m in made)
    spec = json.loads((source / "audit" / "specific" / "checkpoint.json").read_text())
    assert spec["runId"] == "src.audit-specific" and spec["judge"] == "contains"
    assert spec["benchNb"]["audit"] == {
        "kind": "wrong",
        "generator": "specific",
        "seed": 0,
        "sourceRunId": "src",
    }
    q3 = spec["questions"]["q3"]
    assert q3["benchNb"]["auditHow"].startswith("month shifted: March 2024 -> ")
    assert q3["phases"]["evaluate"]["status"] == "completed"  # the primary judge's verdict in place
    assert q3["phases"]["search"]["results"]  # the source's retrieved context kept, for labelling
    paths = [m.path for m in made]
    table = judge_audit(paths, backend="polars")
    assert set(table["run_id"]) == {"src.audit-specific", "src.audit-vague", "src.audit-dont-know"}
    assert table.filter(pl.col("judge") == "contains")["accept_rate"].max() == 0.0
    rates = judge_error_rates(paths, backend="polars")
    para = rates.filter((pl.col("kind") == "correct") & (pl.col("judge") == "contains")).row(0, named=True)
    assert para["generator"] == "paraphrase" and para["accept_rate"] == 100.0 and para["error_rate"] == 0.0
    # a second call asks for nothing again
    again = write_audit_runs(source, ["contains", "overlap"])
    assert all(sum(m.graded.graded.values()) == 0 for m in again)
    with pytest.raises(JudgeError, match="at least one judge"):
        write_audit_runs(source, [])


def test_an_audit_set_is_replaced_only_under_its_lock(make_run) -> None:
    """``replace=True`` deleted a set's directory and wrote its new checkpoint without the set's lock, so under a
    rejudge of that set in another process (only the grading after it took the lock). The set is now cleared and
    written under its lock: refused while another writer holds it, and left as it was."""
    from bench_nb.errors import RunLockedError
    from bench_nb.runformat.lock import LOCK, lock_run

    source = make_run("src", answers=ANSWERS, primary="contains", bench_nb={"k": 10})
    write_audit_runs(source, ["contains"], generators=["specific"])
    path = source / "audit" / "specific"

    def files() -> dict[str, bytes]:
        return {
            str(p.relative_to(path)): p.read_bytes()
            for p in path.rglob("*")
            if p.is_file() and p.name != LOCK
        }

    before = files()
    with lock_run(path, "bench-nb rejudge"):
        with pytest.raises(RunLockedError, match=r"bench-nb rejudge"):
            write_audit_runs(source, ["overlap"], generators=["specific"], replace=True)
        assert files() == before
    made = write_audit_runs(source, ["overlap"], generators=["specific"], replace=True)  # free: replaced
    assert set(made[0].graded.graded) == {"overlap"} and (path / LOCK).is_file()  # the lock file kept
    assert {json.loads(line)["judge"] for line in (path / "judgments.jsonl").read_text().splitlines()} == {
        "overlap"
    }


def test_known_wrong_answers_are_copied_as_one_set(make_run, tmp_path: Path) -> None:
    source = make_run("wrong", answers=ANSWERS, primary="contains", bench_nb={"k": 10})
    made = write_audit_runs(source, ["overlap"], known_wrong=True, out_dir=tmp_path / "out")
    assert [m.generator for m in made] == ["imported"] and made[0].answers == 6
    frame = judgments_frame(load_runs([made[0].path]))
    assert set(frame["judge"]) == {"overlap"}
    assert judge_audit([made[0].path], backend="polars")["n"].to_list() == [6]


def _graded_by_prompt(path: str, body: dict) -> str:
    """A judge model that is as strict as its prompt: lenient accepts anything sharing a word with the
    reference, standard wants the reference inside the response, strict wants it exactly."""
    text = request_text(body)
    ref = text.split("Reference answer: ", 1)[1].split("\n", 1)[0].strip().lower()
    hyp = text.split("Response to grade:\n", 1)[1].strip().lower()
    if "Be generous" in text:
        ok = bool(set(ref.split()) & set(hyp.split()))
    elif "Grade strictly" in text:
        ok = hyp == ref
    else:
        ok = ref in hyp
    return json.dumps(
        {"score": int(ok), "label": "correct" if ok else "incorrect", "explanation": "scripted"}
    )


def test_a_prompt_sweep_grades_with_each_prompt_and_moves_the_ranking(make_run, llm_env: LLMServer) -> None:
    llm_env.responder = _graded_by_prompt
    a = make_run(
        "run-a",
        provider="alpha",
        answers={"q1": "Biscuit", "q2": "Leeds", "q3": "March 2024", "q4": "cello"},
        bench_nb={"k": 10},
    )
    b = make_run(
        "run-b",
        provider="beta",
        answers={"q1": "the dog Biscuit", "q2": "Leeds, I think", "q3": "in March 2024", "q4": "a violin"},
        bench_nb={"k": 10},
    )
    for run in (a, b):
        result = rejudge(run, ["gpt-4o-mini"], judge_prompts=["lenient", "standard", "strict"])
        assert result.judges == ("gpt-4o-mini[lenient]", "gpt-4o-mini", "gpt-4o-mini[strict]")
    systems = [c.body["messages"][0]["content"] for c in llm_env.calls]
    assert len(systems) == 24  # 2 runs x 4 answers x 3 prompts (q3 with the temporal rubrics)
    assert sum("Be generous" in s for s in systems) == sum("Grade strictly" in s for s in systems) == 8
    sweep = prompt_sweep([a, b], backend="polars")
    got = {(r["run_id"], r["judge_prompt"]): r["accuracy"] for r in sweep.iter_rows(named=True)}
    assert got == {
        ("run-a", "lenient"): 100.0,
        ("run-a", "standard"): 100.0,
        ("run-a", "strict"): 100.0,
        ("run-b", "lenient"): 50.0,
        ("run-b", "standard"): 75.0,
        ("run-b", "strict"): 0.0,
    }
    with pytest.raises(JudgeError, match="has no prompt to vary"):
        rejudge(a, ["contains"], judge_prompts=["strict"])


def test_the_judge_audit_command_prints_each_sets_rates(make_run, capsys: pytest.CaptureFixture[str]) -> None:
    from bench_nb.cli import main

    source = make_run("cli-src", answers=ANSWERS, primary="contains", bench_nb={"k": 10})
    main(["judge-audit", str(source), "-j", "contains,overlap", "--by-type"])
    out = capsys.readouterr().out
    assert f"audit sets in {source / 'audit'}" in out
    lines = {
        tuple(line.split()[:3]): line for line in out.splitlines() if line.startswith(("contains", "overlap"))
    }
    assert "false-positive rate" in lines["contains", "specific", "wrong"]
    assert "0.0%" in lines["contains", "specific", "wrong"]
    assert "sensitivity" in lines["overlap", "paraphrase", "correct"]
    assert "cli-src.audit-specific" in out and "temporal" in out  # the per-type table
    with pytest.raises(SystemExit):
        main(["judge-audit", str(source), "-j", "contains", "--generators", "nope"])


def test_rejudge_with_judge_prompts_prints_the_sweep(make_run, llm_env: LLMServer, capsys) -> None:
    from bench_nb.cli import main

    llm_env.responder = _graded_by_prompt
    a = make_run(
        "s-a", provider="alpha", answers={"q1": "Biscuit", "q2": "Leeds, I think"}, bench_nb={"k": 10}
    )
    b = make_run("s-b", provider="beta", answers={"q1": "the dog Biscuit", "q2": "Leeds"}, bench_nb={"k": 10})
    main(["rejudge", str(a), str(b), "-j", "gpt-4o-mini", "--judge-prompts", "lenient,standard,strict"])
    out = capsys.readouterr().out
    assert "gpt-4o-mini[strict]: graded 2; 0 already had a verdict" in out
    rows = {tuple(line.split()[:2]): line for line in out.splitlines() if line.startswith("s-")}
    assert "100.0%" in rows["s-a", "gpt-4o-mini"] and "50.0%" in rows["s-a", "gpt-4o-mini[strict]"]
    assert "-50.0 pts" in rows["s-a", "gpt-4o-mini[strict]"]
    assert "The ranking of the runs CHANGES with the judge prompt." in out
    with pytest.raises(SystemExit):
        main(["rejudge", str(a), "--judge-prompts", "harsh"])


def test_the_locomo_audits_wrong_answers_audit_our_offline_judges(locomo_audit: Path, tmp_path: Path) -> None:
    """The stress test's 1,540 deliberately wrong answers as a known-wrong set: the published lenient
    gpt-4o-mini judge accepts 10.61% of them; contains almost none, the toy lenient judge far more."""
    source = locomo_audit / "ap-baseline" / "v1" / "ap_eval_results_scored.json"
    made = write_audit_runs(source, ["contains", "overlap"], known_wrong=True, out_dir=tmp_path / "ap")
    assert [m.generator for m in made] == ["imported"] and made[0].answers == 1540
    rates = {r["judge"]: r for r in judge_audit([made[0].path], backend="polars").iter_rows(named=True)}
    assert rates["contains"]["n"] == 1540 and rates["contains"]["accept_rate"] < 1
    assert rates["overlap"]["accept_rate"] > 30 > 10.61 > rates["contains"]["ci_high"]


def test_the_judge_audit_command_exits_1_when_no_answer_was_scored(
    make_run, llm_env: LLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38: every command exits non-zero when nothing it was asked to do succeeded; a judge whose every
    reply is unreadable grades each audit answer unscored."""
    from bench_nb.cli import main

    llm_env.responder = lambda path, body: "no verdict in here"
    source = make_run("unsure-src", answers=ANSWERS, primary="contains", bench_nb={"k": 10})
    with pytest.raises(SystemExit) as exc:
        main(["judge-audit", str(source), "-j", "gpt-4o-mini", "--generators", "vague,paraphrase"])
    assert exc.value.code == 1
    [error] = capsys.readouterr().err.splitlines()
    assert error.startswith("error: no audit answer was scored (") and error.endswith("every one unscored)")


def test_the_judge_audit_command_names_a_judge_none_of_whose_verdicts_could_be_read(
    make_run, llm_env: LLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The leniency audit keeps a judge whose every verdict is unreadable (n = 0, its unreadable count) and
    says not to use it, where the table used to drop it (and printing its missing rate failed)."""
    from bench_nb.cli import main

    llm_env.responder = lambda path, body: "no verdict in here"
    source = make_run("half-src", answers=ANSWERS, primary="contains", bench_nb={"k": 10})
    main(["judge-audit", str(source), "-j", "contains,gpt-4o-mini", "--generators", "vague"])
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if line.startswith("gpt-4o-mini")]
    assert line.split()[:4] == ["gpt-4o-mini", "vague", "wrong", "0"]
    assert line.endswith("do not use: none of its 5 verdicts could be read")
    assert any(line.startswith("contains") and "false-positive rate" in line for line in out.splitlines())
