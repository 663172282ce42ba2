"""A lenient ``load_runs`` decodes what the frames read; each run's complete checkpoint only when it is read
(issue 41: the RunSet held the full decode of every question, 0.78x of a bare parse's peak at 100k)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import msgspec
import pytest

from bench_nb import load_runs, questions_df, runs_df
from bench_nb.errors import RunFormatError, RunFormatWarning
from bench_nb.runformat import load
from bench_nb.runformat.format import Checkpoint, decode_results
from bench_nb.runformat.jsjson import dumps_js
from bench_nb.runformat.spec import read_spec
from bench_nb.runformat.view import CheckpointView
from run_writers import question, write_run


def test_load_runs_holds_only_what_the_frames_read_until_the_checkpoint_is_read(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2", "incorrect")])
    (loaded,) = runs = load_runs(run)
    assert isinstance(loaded.view, CheckpointView) and loaded._checkpoint is None  # not decoded
    frame = questions_df(runs, backend="polars")
    runs_df(runs)
    read_spec(loaded)
    assert repr(runs).startswith("RunSet(1 run: ") and loaded.run_id == loaded.view.runId
    assert loaded._checkpoint is None  # frames, settings and repr read the view only
    assert frame["correct"].to_list() == [True, False]

    checkpoint = loaded.checkpoint  # decoded now, once, with every field
    assert isinstance(checkpoint, Checkpoint) and loaded.checkpoint is checkpoint
    hits = decode_results(checkpoint.questions["q1"].phases.search.results)
    assert hits == [{"memory": "Priya adopted a greyhound named Biscuit", "similarity": 0.9}]
    assert questions_df(runs, backend="polars").equals(frame)


def test_strict_load_runs_decodes_every_field_at_once(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1")])
    (loaded,) = load_runs(run, strict=True)
    assert loaded._checkpoint is not None and isinstance(loaded.view, Checkpoint)  # decoded


def test_a_question_damaged_outside_the_frames_fields_is_a_problem_when_the_checkpoint_is_read(
    tmp_path: Path,
) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    ck = json.loads((run / "checkpoint.json").read_text())
    ck["questions"]["q1"]["phases"]["ingest"]["completedSessions"] = "s1"  # should be a list
    (run / "checkpoint.json").write_text(json.dumps(ck))
    (loaded,) = runs = load_runs(run)  # the frames' fields are sound: no problem yet
    assert not runs.all_problems
    assert questions_df(runs, backend="polars")["question_id"].to_list() == ["q1", "q2"]
    with pytest.warns(RunFormatWarning, match="completedSessions"):
        checkpoint = loaded.checkpoint
    assert checkpoint is not None and list(checkpoint.questions) == ["q2"]  # what was good still loads
    (bad,) = [p for p in runs.all_problems if p.question_id == "q1"]
    assert (
        bad.path == str(run / "checkpoint.json")
        and bad.field == "questions.q1.phases.ingest.completedSessions"
    )
    assert "question skipped" in bad.message


def test_a_sound_load_decodes_each_sound_checkpoint_once_and_keeps_a_damaged_question_in_the_frames(
    tmp_path: Path,
) -> None:
    # complete="sound" (a report's load): one complete decode for a sound run, the same frame as the views'
    sound = write_run(tmp_path / "sound", [question("q1"), question("q2", "incorrect")])
    (loaded,) = runs = load.load_runs(sound, complete="sound")
    assert isinstance(loaded.view, Checkpoint) and loaded.checkpoint is loaded.view  # decoded once, now
    assert questions_df(runs, backend="polars").equals(questions_df(load_runs(sound), backend="polars"))
    # a question damaged outside the frames' fields: the run is read as by default, the question in its frames
    damaged = write_run(tmp_path / "damaged", [question("q1"), question("q2")])
    ck = json.loads((damaged / "checkpoint.json").read_text())
    ck["questions"]["q1"]["phases"]["ingest"]["completedSessions"] = "s1"  # should be a list
    (damaged / "checkpoint.json").write_text(json.dumps(ck))
    (loaded,) = runs = load.load_runs(damaged, complete="sound")
    assert not runs.all_problems and isinstance(loaded.view, CheckpointView)
    assert questions_df(runs, backend="polars")["question_id"].to_list() == ["q1", "q2"]
    with pytest.warns(RunFormatWarning, match="completedSessions"):
        assert list(loaded.checkpoint.questions) == ["q2"]  # type: ignore[union-attr]


def test_problems_of_the_load_are_not_listed_twice_when_the_checkpoint_is_read(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    ck = json.loads((run / "checkpoint.json").read_text())
    ck["questions"]["q2"]["phases"]["answer"]["promptTokens"] = "many"  # a field the frames read
    (run / "checkpoint.json").write_text(json.dumps(ck))
    with pytest.warns(RunFormatWarning, match="promptTokens"):
        (loaded,) = load_runs(run)
    before = list(loaded.problems)
    checkpoint = loaded.checkpoint  # the same problem again: no second warning (the test fails on one)
    assert checkpoint is not None and list(checkpoint.questions) == ["q1"]
    assert loaded.problems == before


def test_a_run_deleted_since_the_load_is_a_clear_error_when_its_checkpoint_is_read(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1")])
    (loaded,) = runs = load_runs(run)
    frame = questions_df(runs, backend="polars")
    shutil.rmtree(run)
    assert questions_df(runs, backend="polars").equals(frame)  # the frames need nothing more from disk
    with pytest.raises(RunFormatError, match="cannot be read any more") as info:
        _ = loaded.checkpoint
    assert info.value.path == str(run / "checkpoint.json")


def test_a_checkpoint_rewritten_since_the_load_is_refused_not_mixed_with_its_frames(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1")])
    path = run / "checkpoint.json"
    stat = path.stat()
    for rewrite in ("in place", "replaced"):  # as an editor does, as the runner does (a new file renamed)
        (loaded,) = load_runs(run)
        text = path.read_text().replace("Biscuit", "Muffin!")  # the same size
        if rewrite == "in place":
            path.write_text(text.replace("Muffin!", "Muffins"))
        else:
            (run / "new.json").write_text(text)
            os.replace(run / "new.json", path)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
        with pytest.raises(RunFormatError, match="changed since the run was loaded") as info:
            _ = loaded.checkpoint
        assert info.value.path == str(path)
        stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # untouched since this load: read as it is
    (loaded,) = load_runs(run)
    assert loaded.checkpoint is not None and loaded.checkpoint.questions["q1"].groundTruth == "Muffins"


@pytest.mark.parametrize("batch", [64, 700, 1 << 24])
def test_views_decoded_in_batches_equal_the_whole_file_decode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    qs = [question(f"q{i}", "incorrect" if i % 3 else "correct") for i in range(7)]
    qs[2].benchNb = {
        "note": '\n    },\n  "x": {"questionId": "q9"}\n    }\n  }'
    }  # the markers, inside a string
    # run-level benchNb after the questions, with a line "    }," as an entry ends
    run = write_run(tmp_path / "r", qs, bench_nb={"judges": {"a": {"b": 1}}, "k": 3})
    path = run / "checkpoint.json"
    text = path.read_text()
    monkeypatch.setattr(load, "_BATCH", batch)
    for layout in (text, dumps_js(json.loads(text))):  # msgspec's and JSON.stringify's (MemoryBench) indent
        path.write_text(layout)
        batched = load._decode_views_in_batches(path, CheckpointView)
        assert batched is not None  # read in batches, not by the whole-file fallback
        assert batched[0] == msgspec.json.decode(path.read_bytes(), type=CheckpointView)
        assert len(batched[0].questions) == 7 and batched[0].benchNb == {"judges": {"a": {"b": 1}}, "k": 3}


def test_a_checkpoint_not_laid_out_in_lines_or_damaged_is_decoded_whole(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", [question("q1"), question("q2")])
    path = run / "checkpoint.json"
    ck = json.loads(path.read_text())
    path.write_text(json.dumps(ck))  # one line
    assert load._decode_views_in_batches(path, CheckpointView) is None
    assert list(load.read_run_deferred(run).view.questions) == ["q1", "q2"]  # type: ignore[union-attr]
    ck["questions"]["q2"]["phases"]["answer"]["promptTokens"] = "many"
    del ck["questions"]["q1"]["phases"]["ingest"]
    path.write_text(dumps_js(ck))
    assert load._decode_views_in_batches(path, CheckpointView) is None
    with pytest.warns(RunFormatWarning) as caught:  # what the whole-file decode names
        runs = load_runs(run)
    assert {(p.question_id, p.field) for p in runs.all_problems} >= {
        ("q2", "questions.q2.phases.answer.promptTokens"),
        ("q1", "questions.q1.phases.ingest"),
    }
    assert caught


def test_a_sound_load_keeps_a_run_damaged_at_its_level_in_a_field_the_frames_do_not_read(
    tmp_path: Path,
) -> None:
    # 948bd85's complete="sound" decoded the whole checkpoint first and let its error through: a run whose
    # "limit" (or "sampling", "concurrency") was damaged left the report, where the default load keeps it
    run = write_run(tmp_path / "r", [question("q1"), question("q2", "incorrect")])
    ck = json.loads((run / "checkpoint.json").read_text())
    ck["limit"] = "ten"
    (run / "checkpoint.json").write_text(json.dumps(ck))
    (loaded,) = runs = load.load_runs(run, complete="sound")
    assert not runs.all_problems and isinstance(loaded.view, CheckpointView)
    assert questions_df(runs, backend="polars").equals(questions_df(load_runs(run), backend="polars"))
    with pytest.raises(RunFormatError, match=r"\$\.limit"):  # as by default, naming the field
        _ = loaded.checkpoint
