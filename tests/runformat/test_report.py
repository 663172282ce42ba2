import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from bench_nb.errors import DatasetError, RunFormatError, RunLockedError
from bench_nb.runformat.dataset import read_memorybench_dataset
from bench_nb.runformat.format import Checkpoint
from bench_nb.runformat.jsjson import dumps_js
from bench_nb.runformat.lock import lock_run
from bench_nb.runformat.report import (
    ReportCheckpoint,
    build_memorybench_report,
    memorybench_report,
    read_report_checkpoint,
    write_memorybench_report,
)

RUN = ("data", "runs", "fx-compare-supermemory")
DATASET = ("data", "benchmarks", "locomo", "locomo10.json")


def test_reproduces_memorybench_report_exactly(mb_example: Path) -> None:
    expected = (mb_example / "expected" / "report.json").read_text(encoding="utf-8")
    report = memorybench_report(
        mb_example.joinpath(*RUN), mb_example.joinpath(*DATASET), timestamp=json.loads(expected)["timestamp"]
    )
    assert dumps_js(report) == expected


def test_written_report_is_memorybench_bytes(mb_example: Path, tmp_path: Path) -> None:
    expected = (mb_example / "expected" / "report.json").read_bytes()
    out = tmp_path / "report.json"
    head = write_memorybench_report(
        mb_example.joinpath(*RUN),
        mb_example.joinpath(*DATASET),
        out,
        timestamp=json.loads(expected)["timestamp"],
    )
    assert out.read_bytes() == expected
    assert head["memscore"] == "84% / 450ms / 178tok" and "evaluations" not in head


def test_light_and_full_checkpoints_give_the_same_report(mb_example: Path) -> None:
    run = mb_example.joinpath(*RUN)
    light = read_report_checkpoint(run)
    assert isinstance(light, ReportCheckpoint)
    full = msgspec.json.decode((run / "checkpoint.json").read_bytes(), type=Checkpoint)
    dataset = read_memorybench_dataset(mb_example.joinpath(*DATASET))
    a = build_memorybench_report(light, dataset, timestamp="t")
    b = build_memorybench_report(full, dataset, timestamp="t")
    assert a == b and a["summary"] == {"totalQuestions": 19, "correctCount": 16, "accuracy": 16 / 19}


def _edit_first_question(run: Path, edit: object) -> None:
    data = json.loads((run / "checkpoint.json").read_text(encoding="utf-8"))
    q = next(iter(data["questions"].values()))
    edit(q)  # type: ignore[operator]
    (run / "checkpoint.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_values_written_by_another_tool_are_printed_as_javascript_would(
    mb_example: Path, tmp_path: Path
) -> None:
    """Python's json (1.0, 1e-05, \\u escapes, a digit key) rewritten the way JSON.parse + JSON.stringify do."""
    run = tmp_path / "run"
    shutil.copytree(mb_example.joinpath(*RUN), run)

    def edit(q: dict) -> None:
        q["phases"]["search"]["results"][0]["score"] = 1.0
        q["phases"]["search"]["results"][0]["tiny"] = 1e-05
        q["phases"]["search"]["results"][0]["memo"] = "café"
        q["phases"]["search"]["results"][0]["by"] = {"b": 1, "7": 2}
        q["phases"]["evaluate"]["retrievalMetrics"]["hitAtK"] = 0

    _edit_first_question(run, edit)
    out = tmp_path / "report.json"
    write_memorybench_report(run, mb_example.joinpath(*DATASET), out, timestamp="t")
    text = out.read_text(encoding="utf-8")
    assert '"score": 1,' in text and '"tiny": 0.00001' in text and '"memo": "café"' in text
    assert '"by": {\n' in text and text.index('"7": 2') < text.index('"b": 1')
    first = json.loads(text)["evaluations"][0]
    assert first["retrievalMetrics"]["hitAtK"] == 0  # kept although 0, as the checkpoint has it


def test_damaged_checkpoint_is_reported_by_the_strict_reader(mb_example: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(mb_example.joinpath(*RUN), run)

    def edit(q: dict) -> None:
        q["phases"]["evaluate"]["score"] = "yes"
        del q["phases"]["indexing"]

    _edit_first_question(run, edit)
    with pytest.raises(RunFormatError, match=r"checkpoint\.json") as err:
        memorybench_report(run, mb_example.joinpath(*DATASET))
    assert "score" in str(err.value)


def test_cli_writes_the_same_report_except_timestamp(mb_example: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench_nb",
            "memorybench-report",
            str(mb_example.joinpath(*RUN)),
            "--dataset",
            str(mb_example.joinpath(*DATASET)),
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    assert "19 evaluated" in proc.stdout and "MemScore: 84% / 450ms / 178tok" in proc.stdout
    expected = json.loads((mb_example / "expected" / "report.json").read_text(encoding="utf-8"))
    got = json.loads(out.read_text(encoding="utf-8"))
    assert got.pop("timestamp") != ""
    expected.pop("timestamp")
    assert list(got) == list(expected)
    assert got == expected


def test_bad_retrieval_metrics_name_the_question(mb_example: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(mb_example.joinpath(*RUN), run)

    def edit(q: dict) -> None:
        q["phases"]["evaluate"]["retrievalMetrics"] = {"hitAtK": "yes"}

    _edit_first_question(run, edit)
    with pytest.raises(RunFormatError, match=r"retrievalMetrics") as err:
        write_memorybench_report(run, mb_example.joinpath(*DATASET), tmp_path / "r.json")
    assert "question conv-fx1-q0: Expected `float`, got `str`" in str(err.value)


def test_a_report_written_into_the_run_was_not_under_the_runs_lock(
    mb_example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's temporary files sit in the run directory, where a rejudge or a resumed run taking the run's
    lock deletes every *.tmp: the report now holds that lock while it writes there, and is refused while
    another bench-nb writer holds it; written elsewhere it takes no lock."""
    from bench_nb.runformat import report as report_module

    run = tmp_path / "run"
    shutil.copytree(mb_example.joinpath(*RUN), run)
    dataset = mb_example.joinpath(*DATASET)
    refused = []
    write = report_module._write_report

    def write_while_a_rejudge_starts(*args: object) -> None:
        with pytest.raises(RunLockedError, match=r"bench-nb memorybench-report"):
            lock_run(run, "bench-nb rejudge")  # before: taken, and report.json.tmp deleted under the writer
        refused.append(True)
        write(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(report_module, "_write_report", write_while_a_rejudge_starts)
    write_memorybench_report(run, dataset, run / "report.json", timestamp="t")
    assert refused and json.loads((run / "report.json").read_text())["timestamp"] == "t"
    assert sorted(p.name for p in run.glob("*.tmp")) == []

    with lock_run(run, "bench-nb rejudge"):
        with pytest.raises(RunLockedError, match=r"being written by process .* \(bench-nb rejudge\)"):
            write_memorybench_report(run, dataset, run / "report.json", timestamp="u")
        assert json.loads((run / "report.json").read_text())["timestamp"] == "t"  # the earlier report stays
        monkeypatch.setattr(report_module, "_write_report", write)
        write_memorybench_report(run, dataset, tmp_path / "elsewhere.json", timestamp="v")  # no lock needed
    assert json.loads((tmp_path / "elsewhere.json").read_text())["timestamp"] == "v"


@pytest.mark.parametrize("where", [("results", "report.json"), ("mine", "sub", "r.json")])
def test_a_report_written_inside_the_run_but_not_at_its_top_held_no_lock(
    mb_example: Path, tmp_path: Path, where: tuple[str, ...]
) -> None:
    """``-o RUN/results/report.json``: the report's temporary files went into the run's results/ without the
    run's lock (only an output directly in the run folder took it). Anywhere inside the run, the report is now
    refused while another writer holds the lock, before it makes a folder or a file there."""
    run = tmp_path / "run"
    shutil.copytree(mb_example.joinpath(*RUN), run)
    out = run.joinpath(*where)
    with lock_run(run, "bench-nb rejudge"):
        before = sorted(p.relative_to(run) for p in run.rglob("*"))
        with pytest.raises(RunLockedError, match=r"being written by process .* \(bench-nb rejudge\)"):
            write_memorybench_report(run, mb_example.joinpath(*DATASET), out, timestamp="t")
        assert sorted(p.relative_to(run) for p in run.rglob("*")) == before  # nothing made in the run
    write_memorybench_report(run, mb_example.joinpath(*DATASET), out, timestamp="t")  # free: written
    assert json.loads(out.read_text())["timestamp"] == "t"


def test_a_report_written_into_another_runs_folder_waits_for_that_runs_lock(
    mb_example: Path, tmp_path: Path
) -> None:
    """``bench-nb memorybench-report A -o B/report.json`` replaced B's report beside a rejudge of B, without
    B's lock, its temporary files in B under names no writer deletes: only an output inside A took a lock
    (``lock.run_containing``: inside the run reported, or in another run's folder)."""
    run, other = tmp_path / "run", tmp_path / "other"
    shutil.copytree(mb_example.joinpath(*RUN), run)
    shutil.copytree(mb_example.joinpath(*RUN), other)
    held = pytest.raises(RunLockedError, match=r"being written by process .* \(bench-nb rejudge\)")
    with lock_run(other, "bench-nb rejudge"), held:
        write_memorybench_report(run, mb_example.joinpath(*DATASET), other / "mb.json", timestamp="t")
    assert not (other / "mb.json").exists()
    write_memorybench_report(run, mb_example.joinpath(*DATASET), other / "mb.json", timestamp="t")
    assert json.loads((other / "mb.json").read_text())["timestamp"] == "t"


def test_a_report_written_into_a_run_keeps_a_users_tmp_files(mb_example: Path, tmp_path: Path) -> None:
    """The report takes the run's lock (``lock_run``), which deleted every *.tmp in the run folder and its
    results/: now only the names bench-nb's writers make (what a killed one left), a user's own stay."""
    run = tmp_path / "run"
    shutil.copytree(mb_example.joinpath(*RUN), run)
    (run / "results").mkdir(exist_ok=True)
    mine = [run / "notes.tmp", run / "results" / "notes.tmp"]
    left = [run / ".checkpoint.json.4242.140.tmp", run / "report.json.part.tmp"]  # a killed writer's
    for path in [*mine, *left]:
        path.write_text("mine" if path in mine else "{partial")
    write_memorybench_report(run, mb_example.joinpath(*DATASET), run / "report.json", timestamp="t")
    assert [p.read_text() for p in mine] == ["mine", "mine"]
    assert [p.name for p in left if p.exists()] == []
    assert json.loads((run / "report.json").read_text())["timestamp"] == "t"


_KILLED_MID_WRITE = """
import sys, time
from bench_nb.runformat import report
def stalled(rep, f, part, parallel):  # the report and its forked child's part begun, then the command killed
    f.write(b"{partial"); f.flush()
    part.write_bytes(b"partial")
    print("writing", flush=True)
    time.sleep(120)
report._write_report = stalled
report.write_memorybench_report(sys.argv[1], sys.argv[2], sys.argv[3], timestamp="t")
"""


@pytest.mark.parametrize("where", [("report.json",), ("mb.json",), ("results", "report.json")])
def test_a_killed_report_inside_the_run_leaves_no_temporary_file_behind_the_next_writer(
    mb_example: Path, tmp_path: Path, where: tuple[str, ...]
) -> None:
    """A ``memorybench-report`` killed while it writes (SIGKILL: no cleanup) leaves its temporary files, which
    the next writer taking the run's lock deletes (``lock.RUN_TEMP_FILES``). With ``-o RUN/mb.json`` or
    ``-o RUN/results/report.json`` they were named after the output (``mb.json.tmp``, ``results/report.json.tmp``),
    names no writer deletes (since 0b36249 lock_run deletes only its list; before, every *.tmp in the run and its
    results/): they stayed in the run for good. Inside a run they now take the listed names."""
    run = tmp_path / "run"
    shutil.copytree(mb_example.joinpath(*RUN), run)
    out = run.joinpath(*where)
    command = [
        sys.executable,
        "-c",
        _KILLED_MID_WRITE,
        str(run),
        str(mb_example.joinpath(*DATASET)),
        str(out),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "writing\n"
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
    left = sorted(str(p.relative_to(run)) for p in run.rglob("*.tmp"))
    assert len(left) == 2  # the report's and its part's
    lock_run(run, "bench-nb rejudge").release()  # the next writer
    assert sorted(str(p.relative_to(run)) for p in run.rglob("*.tmp")) == []
    assert not out.exists()


def test_a_report_asked_of_a_folder_that_is_no_run_deleted_its_tmp_files(
    mb_example: Path, not_a_run: Path
) -> None:
    """A folder without a checkpoint is no run: the report is refused naming it, and the folder is left as it
    was. Since the report took the run's lock before reading, the lock (``lock_run``) deleted every *.tmp in
    the folder and its results/ and left a .lock there first."""
    folder = not_a_run  # left as it was: the fixture checks it after the test
    with pytest.raises(RunFormatError, match=r"downloads: not a run directory"):
        write_memorybench_report(folder, mb_example.joinpath(*DATASET), folder / "report.json")
    with pytest.raises(RunFormatError, match=r"downloads: not a run directory"):  # no sub/ made either
        write_memorybench_report(folder, mb_example.joinpath(*DATASET), folder / "sub" / "report.json")


def test_a_dataset_of_another_benchmark_is_refused_naming_it(mb_example: Path, tmp_path: Path) -> None:
    # a LongMemEval file given for a LoCoMo run wrote a report with LongMemEval's type registry and the
    # run's numbers, without a word
    other = tmp_path / "longmemeval.json"
    other.write_text(json.dumps([{"question_id": "q1", "question_type": "multi-session", "answer": "a"}]))
    run, out = mb_example.joinpath(*RUN), tmp_path / "report.json"
    says = rf"{re.escape(str(other))}: none of the run's 19 evaluated questions is in this longmemeval file"
    with pytest.raises(
        DatasetError, match=says + r" \(e\.g\. conv-[\w-]+\); the run is on locomo: give --dataset"
    ):
        write_memorybench_report(run, other, out)
    assert not out.exists() and list(tmp_path.iterdir()) == [other]
    with pytest.raises(DatasetError, match=says):
        memorybench_report(run, other)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench_nb",
            "memorybench-report",
            str(run),
            "--dataset",
            str(other),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert re.match(f"error: {says}", proc.stderr), proc.stderr


def test_a_dataset_memorybench_does_not_run_says_which_it_does(mb_example: Path, tmp_path: Path) -> None:
    # the custom format (a sample run's own file) said only "expected a non-empty JSON list of samples or questions"
    custom = tmp_path / "mine.json"
    custom.write_text(json.dumps({"conversations": [], "questions": []}))
    with pytest.raises(
        DatasetError, match=r"mine\.json: not a LoCoMo or LongMemEval file .*MemoryBench runs"
    ):
        memorybench_report(mb_example.joinpath(*RUN), custom)
