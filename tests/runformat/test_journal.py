"""The journal: group-committed appends, rotation after a checkpoint, replay, torn lines."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from bench_nb.errors import RunFormatError
from bench_nb.runformat.format import Checkpoint, EvaluatePhase, IngestPhase, Question, SearchPhase
from bench_nb.runformat.journal import (
    JournalWriter,
    apply_journal,
    make_record,
    merge_bench_nb,
    read_journal,
    write_checkpoint,
)


def _checkpoint() -> Checkpoint:
    return Checkpoint(
        runId="r", questions={q: Question(questionId=q, groundTruth="") for q in ("a", "b", "c")}
    )


def test_writer_appends_everything_and_rotation_empties_the_file(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path)
    for i in range(200):
        writer.append(
            make_record([f"q{i}"], "search", SearchPhase(status="completed"), {"attempts": {"search": 1}})
        )
    writer.rotate()
    assert (tmp_path / "journal.jsonl").read_bytes() == b""
    writer.append(make_record(["a"], "evaluate", EvaluatePhase(status="completed", score=1), None))
    writer.close()
    records = read_journal(tmp_path)
    assert [(r.q, r.p) for r in records] == [(["a"], "evaluate")]


def test_replay_applies_phases_and_merges_bench_nb(tmp_path: Path) -> None:
    lines = [
        make_record(
            ["a", "b"], "ingest", IngestPhase(status="completed", durationMs=5), {"sharedContainer": 2}
        ),
        make_record(
            ["a"], "search", SearchPhase(status="failed", error="x"), {"errors": {"search": {"type": "X"}}}
        ),
        make_record(
            ["a"],
            "search",
            SearchPhase(status="completed"),
            {"errors": {"search": None}, "attempts": {"search": 2}},
        ),
        make_record(["zz"], "search", SearchPhase(status="completed"), None),  # not in the run: ignored
    ]
    (tmp_path / "journal.jsonl").write_bytes(b"".join(lines))
    ck = apply_journal(_checkpoint(), tmp_path)
    a, b = ck.questions["a"], ck.questions["b"]
    assert a.phases.ingest.status == b.phases.ingest.status == "completed"
    assert a.phases.ingest is not b.phases.ingest  # each question gets its own record
    assert a.phases.search.status == "completed"
    assert a.benchNb == {"sharedContainer": 2, "attempts": {"search": 2}}
    assert ck.questions["c"].phases.ingest.status == "pending"


def test_a_torn_last_line_is_ignored_and_a_bad_middle_line_is_reported(tmp_path: Path) -> None:
    good = make_record(["a"], "answer", msgspec.convert({"status": "completed"}, type=IngestPhase), None)
    (tmp_path / "journal.jsonl").write_bytes(good + good[:-10])
    assert len(read_journal(tmp_path, strict=True)) == 1
    (tmp_path / "journal.jsonl").write_bytes(good + b"{nonsense\n" + good)
    assert len(read_journal(tmp_path)) == 2
    with pytest.raises(RunFormatError, match="line 2"):
        read_journal(tmp_path, strict=True)


def test_checkpoint_writes_are_atomic_and_leave_no_temporary_file(tmp_path: Path) -> None:
    ck = _checkpoint()
    size = write_checkpoint(tmp_path, ck)
    assert size == (tmp_path / "checkpoint.json").stat().st_size
    assert msgspec.json.decode((tmp_path / "checkpoint.json").read_bytes(), type=Checkpoint) == ck
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.json"]


def test_merge_bench_nb() -> None:
    assert (
        merge_bench_nb(None, {"errors": {"x": None}}) is None
        or merge_bench_nb(None, {"errors": {"x": None}}) == {}
    )
    assert merge_bench_nb({"a": 1, "attempts": {"s": 1}}, {"attempts": {"t": 2}, "a": None}) == {
        "attempts": {"s": 1, "t": 2}
    }


def test_a_writer_starts_the_journal_empty_so_nothing_is_appended_after_a_torn_line(tmp_path: Path) -> None:
    """A writer is opened right after a checkpoint that holds the journal replayed: it empties it, so a line a
    killed run tore is never followed by a record, and strict reads keep working."""
    good = make_record(["a"], "answer", msgspec.convert({"status": "completed"}, type=IngestPhase), None)
    later = make_record(["b"], "answer", msgspec.convert({"status": "completed"}, type=IngestPhase), None)
    path = tmp_path / "journal.jsonl"
    path.write_bytes(good + later[: len(later) // 2])  # a real record cut in the middle
    writer = JournalWriter(tmp_path)
    writer.append(later)
    writer.close()
    assert path.read_bytes() == later
    assert [r.q for r in read_journal(tmp_path, strict=True)] == [["b"]]
