"""On runs answered offline, the leaderboard says the answerer bounds the accuracy, reads the runs against the
full-context ceiling and the no-memory floor, and never lets no-memory stand as the best memory system."""

from __future__ import annotations

import json
from pathlib import Path

from bench_nb import tables
from bench_nb.frames.questions import questions_df
from run_writers import question, write_run

IDK = "I don't know."


def _run(root: Path, provider: str, answerer: str, right: set[str]) -> None:
    qs = [
        question(
            f"q{i}",
            "correct" if f"q{i}" in right else "incorrect",
            qtype="adversarial" if i < 4 else "single-hop",
        )
        for i in range(10)
    ]
    run_dir = write_run(root / provider, qs, provider=provider)
    path = run_dir / "checkpoint.json"
    checkpoint = json.loads(path.read_text())
    checkpoint["answeringModel"] = answerer
    path.write_text(json.dumps(checkpoint))


def _runs(root: Path, answerer: str) -> str:
    _run(root, "no-memory", answerer, {"q0", "q1", "q2", "q3"})  # every abstention right, nothing else
    _run(root, "sqlite", answerer, {"q0", "q4", "q5"})
    _run(root, "full-context", answerer, {"q4", "q5", "q6"})
    return str(root / "*")


def test_offline_runs_say_what_bounds_them(tmp_path: Path) -> None:
    html = tables.table_memscore(questions_df(_runs(tmp_path, "extractive"), backend="polars")).html
    assert "What bounds these accuracies: the answerer" in html
    assert "the full-context ceiling (full-context 30.0%" in html
    assert "the no-memory floor (no-memory 40.0%" in html
    assert "4 abstention question(s)" in html
    assert "without them: no-memory 0.0%, " in html
    assert "sqlite 33.3%" in html and "full-context 50.0%" in html
    assert "no-memory, which retrieves nothing, has the best accuracy" in html
    assert "not the best memory system" in html


def test_model_answered_runs_get_no_such_note(tmp_path: Path) -> None:
    html = tables.table_memscore(questions_df(_runs(tmp_path, "gpt-4o"), backend="polars")).html
    assert "What bounds these accuracies" not in html and "not the best memory system" not in html


def test_what_to_fix_gives_the_no_memory_baseline_no_memory_advice(tmp_path: Path) -> None:
    q = questions_df(_runs(tmp_path, "extractive"), backend="polars")
    readings = tables.what_to_fix(q)
    assert {r.run_id for r in readings if r.topic == "multi-hop"} == {"sqlite", "full-context"}
    assert not [r for r in readings if r.run_id == "no-memory"]
    html = tables.table_what_to_fix(q).html
    assert "<b>no-memory</b>: a baseline that retrieves nothing by design: no advice." in html
    assert html.count("retrieve more (larger k)") == 2


def test_a_point_is_shown_to_its_intervals_decimal(tmp_path: Path) -> None:
    # 1 right of 250: 0.4% [0.1–2.2]; rounded to 0% the point read as outside its interval
    qs = [question(f"q{i}", "correct" if i == 0 else "incorrect") for i in range(250)]
    write_run(tmp_path / "r", qs, provider="sqlite")
    html = tables.table_accuracy_by_type(questions_df(tmp_path / "r", backend="polars")).html
    assert "0.4% [0.1–2.2] n=250" in html
