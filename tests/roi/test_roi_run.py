"""Runs: the no-key cycle for both import formats, one run at a time (across processes), failures, metering."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from roi_memsets import MEMBERS, alice_and_bob, write_export_zip, write_jsonl

from bench_nb.roi import (
    DeterministicRoiJudge,
    JudgmentFailed,
    ModelUsage,
    ParaphraseProber,
    RoiStore,
    RunInProgressError,
    deployment_usage,
    import_memories,
    roi_results_df,
    roi_runs_df,
    roi_status,
    roi_tile_html,
    run_roi,
    start_run,
    usage_df,
)
from bench_nb.roi.judges import JudgeReply
from bench_nb.roi.memory import utc_now
from bench_nb.roi.probers import TemplateProber


@pytest.mark.parametrize("fmt", ["jsonl", "zip"])
def test_full_cycle_without_a_key(tmp_path: Path, db: Path, fmt: str) -> None:
    rows = alice_and_bob()
    path = (
        write_jsonl(tmp_path / "m.jsonl", [*rows, *MEMBERS])
        if fmt == "jsonl"
        else write_export_zip(tmp_path / "m.zip", rows)
    )
    assert import_memories(path, db, admin=True).inserted == len(rows)
    assert "Run the ROI benchmark" in roi_tile_html("alice", db)  # an invitation, not 0%

    # the default provider (the embedded sqlite one, by name); template probes, which quote their memory
    first = run_roi("alice", db, prober=TemplateProber())
    assert first.status == "generating" and first.generated is not None and first.generated.added == 20
    assert roi_status("alice", db).latest is None

    run = run_roi("alice", db)
    s = run.summary()
    assert (run.status, s.status, s.kind, s.probes, s.judged, s.failed) == (
        "done",
        "done",
        "benchmark",
        20,
        20,
        0,
    )
    default = "sqlite" if isinstance(db, Path) else "postgres-fts"  # the database's own search on Postgres
    assert s.probe_mode == "template" and s.judge == "deterministic" and s.provider == default
    results = roi_results_df("alice", db, run_id=run.run_id)
    assert len(results) == 20 and set(results["probe_mode"]) == {"template"}
    # the deterministic judge: with_memory iff the source surfaced, without_memory never
    assert (results["with_memory"] == results["source_surfaced"]).all()
    assert not results["without_memory"].any()
    assert s.with_memory == int(results["with_memory"].sum()) and s.without_memory == 0
    assert s.exclusive == s.with_memory and s.exclusive_rate == s.exclusive / 20
    # template questions repeat the memory's words: a lexical retriever finds (nearly) all of them
    assert s.exclusive >= 18

    tile = roi_tile_html("alice", db)
    assert (
        f"memory surfaced for {s.exclusive} of 20 probes; a bare agent was not asked (deterministic judge)"
        in tile
    )
    assert "<svg" not in tile  # a trend needs two runs
    run_roi("alice", db)
    assert "<svg" in roi_tile_html("alice", db)
    assert len(roi_runs_df("alice", db)) == 2


def test_paraphrase_mode_is_said_in_every_result(jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    run_roi("alice", db, prober=ParaphraseProber())
    run = run_roi("alice", db)
    assert run.summary().probe_mode == "paraphrase"
    assert set(roi_results_df("alice", db)["probe_mode"]) == {"paraphrase"}
    status = roi_status("alice", db).to_dict()
    assert status["probe_mode"] == "paraphrase"


def test_status_json_before_the_first_run_has_the_keys_it_has_after(jsonl_file: Path, db: Path) -> None:
    # docs/roi.md: status --json prints probe_modes (and every number of the latest run); before the first
    # run those were missing rather than null
    import_memories(jsonl_file, db, admin=True)
    before = roi_status("alice", db).to_dict()
    assert before["probe_modes"] is None and before["exclusive_rate"] is None
    run_roi("alice", db)
    run_roi("alice", db)
    assert set(roi_status("alice", db).to_dict()) == set(before)


def test_a_second_call_reports_the_run_in_progress_and_top_up_follows(
    tmp_path: Path, jsonl_file: Path, db: Path
) -> None:
    import_memories(jsonl_file, db, admin=True)
    run_roi("alice", db)
    started = start_run("alice", db)
    assert started.status == "recalled" and len(started.recalls) == 20
    with pytest.raises(RunInProgressError) as err:
        start_run("alice", db)
    assert err.value.run_id == started.run_id
    assert roi_status("alice", db).in_progress is not None
    start_run("bob", db)  # another owner is not blocked (bob's first call generates his pool)
    # memories learned meanwhile are reached after this run's judging: the pool is topped up again
    with RoiStore(db) as store:
        store.execute(
            "UPDATE memories SET invalidated_at = '2024-05-01T00:00:00.000000Z' WHERE id = 'a-web-3'"
        )
    summary = started.finish()
    assert summary.judged == 20
    assert started.topped_up is not None and (started.topped_up.retired, started.topped_up.added) == (1, 1)
    assert roi_status("alice", db).in_progress is None


_HOLDER = """
import pathlib, sys, time
from bench_nb.roi import start_run
run = start_run("alice", sys.argv[1])  # recalled, then never finished: this process is killed
pathlib.Path(sys.argv[2]).write_text(run.run_id)
time.sleep(120)
"""


def test_a_killed_run_does_not_block_its_owner(tmp_path: Path, jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    run_roi("alice", db)
    script, ready = tmp_path / "holder.py", tmp_path / "holder-run-id"
    script.write_text(_HOLDER)
    holder = subprocess.Popen([sys.executable, str(script), str(db), str(ready)])
    try:
        deadline = time.time() + 60
        while not ready.exists() or not ready.read_text():
            assert holder.poll() is None and time.time() < deadline, "the holder did not start its run"
            time.sleep(0.02)
        killed = ready.read_text()
        with pytest.raises(RunInProgressError, match=f"process {holder.pid} on"):
            start_run("alice", db)  # alive: refused, naming the process
    finally:
        holder.kill()  # SIGKILL: no cleanup runs
        holder.wait(30)
    fresh = run_roi("alice", db)  # at once: the holder's process is gone
    assert fresh.summary().status == "done"
    with RoiStore(db) as store:
        old = store.run("alice", killed)
    assert old is not None and old["status"] == "abandoned"
    assert f"its process {holder.pid}" in old["error"] and "is gone" in old["error"]
    # what the killed run recalled stays (append-only), and it is not reported as a finished run
    assert [r for r in roi_runs_df("alice", db)["run_id"]] == [fresh.run_id]


def test_force_takes_over_from_a_hung_run(jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    run_roi("alice", db)
    hung = start_run("alice", db)  # this process is alive: the run counts as in progress
    with pytest.raises(RunInProgressError, match="--force"):
        start_run("alice", db)
    fresh = run_roi("alice", db, force=True)
    assert fresh.summary().status == "done"
    with RoiStore(db) as store:
        old = store.run("alice", hung.run_id)
    assert old is not None and (old["status"], old["error"]) == ("abandoned", "taken over with --force")


def test_a_run_of_another_host_is_abandoned_after_the_stale_timeout(
    jsonl_file: Path, sqlite_db: Path
) -> None:
    """SQLite: a process on another host cannot be checked (on Postgres the run lock tells)."""
    db = sqlite_db
    import_memories(jsonl_file, db, admin=True)
    run_roi("alice", db)
    with RoiStore(db) as store:  # a run whose process this machine cannot check
        store.execute(
            "INSERT INTO runs (id, owner, kind, status, phase, started_at, heartbeat_at, host, pid) VALUES "
            "('elsewhere', 'alice', 'benchmark', 'running', 'judging', ?, ?, 'another-host', 1)",
            (utc_now(), utc_now()),
        )
    with pytest.raises(RunInProgressError, match="process 1 on another-host"):
        start_run("alice", db, stale_after_s=60)
    with RoiStore(db) as store:
        store.execute("UPDATE runs SET heartbeat_at = '2000-01-01T00:00:00.000000Z' WHERE id = 'elsewhere'")
    fresh = run_roi("alice", db, stale_after_s=60)
    with RoiStore(db) as store:
        old = store.run("alice", "elsewhere")
    assert old is not None and old["status"] == "abandoned" and "no heartbeat" in old["error"]
    assert fresh.summary().status == "done"


_RACER = """
import json, pathlib, sys, time
from bench_nb.providers.sqlite import SqliteProvider
from bench_nb.roi import RunInProgressError, start_run
db, tag, work = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
(work / f"ready-{tag}").touch()
deadline = time.time() + 30
while not (work / "go").exists() and time.time() < deadline:
    time.sleep(0.002)
try:
    run = start_run("alice", db, provider=SqliteProvider(work / tag))
except RunInProgressError as err:
    (work / f"tmp-{tag}").write_text(json.dumps({"result": "in_progress", "run_id": err.run_id}))
    (work / f"tmp-{tag}").rename(work / f"out-{tag}")  # whole, or not there: the test polls for it
    sys.exit(0)
(work / f"tmp-{tag}").write_text(json.dumps({"result": "started", "run_id": run.run_id}))
(work / f"tmp-{tag}").rename(work / f"out-{tag}")
while not (work / "release").exists() and time.time() < deadline:
    time.sleep(0.01)
run.finish()
"""


def test_two_processes_starting_at_once_yield_exactly_one_run(
    tmp_path: Path, jsonl_file: Path, db: Path
) -> None:
    import_memories(jsonl_file, db, admin=True)
    run_roi("alice", db)  # the pool exists: both processes try a benchmark run
    script = tmp_path / "racer.py"
    script.write_text(_RACER)
    procs = [
        subprocess.Popen([sys.executable, str(script), str(db), tag, str(tmp_path)]) for tag in ("p1", "p2")
    ]
    try:
        deadline = time.time() + 60
        while not all((tmp_path / f"ready-{t}").exists() for t in ("p1", "p2")):
            assert time.time() < deadline, "the racers did not start"
            time.sleep(0.01)
        (tmp_path / "go").touch()
        while not all((tmp_path / f"out-{t}").exists() for t in ("p1", "p2")):
            assert time.time() < deadline, "the racers did not report"
            time.sleep(0.01)
        outs = [json.loads((tmp_path / f"out-{t}").read_text()) for t in ("p1", "p2")]
        (tmp_path / "release").touch()
        assert all(p.wait(60) == 0 for p in procs)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert sorted(o["result"] for o in outs) == ["in_progress", "started"]
    winner = next(o["run_id"] for o in outs if o["result"] == "started")
    assert next(o["run_id"] for o in outs if o["result"] == "in_progress") == winner
    with RoiStore(db) as store:
        runs = store.runs("alice", "benchmark")
    assert [(r["id"], r["status"]) for r in runs] == [(winner, "done")]


class _FlakyJudge:
    """Fails every third probe, otherwise judges deterministically; bills a model call either way."""

    name = "flaky"

    def __init__(self) -> None:
        self.n = 0

    def judge(self, probe, source, recall) -> JudgeReply:  # type: ignore[no-untyped-def]
        self.n += 1
        usage = (ModelUsage("judge-model", 100, 10),)
        if self.n % 3 == 0:
            raise JudgmentFailed(probe.id, "unreadable verdict", usage)
        reply = DeterministicRoiJudge().judge(probe, source, recall)
        return JudgeReply(reply.judgment, usage)


def test_a_failed_judgment_is_skipped_and_the_run_counts(jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    run_roi("alice", db)
    run = run_roi("alice", db, judge=_FlakyJudge())
    s = run.summary()
    assert (s.status, s.probes, s.judged, s.failed) == ("done", 20, 14, 6)
    assert s.exclusive_rate == s.exclusive / 14
    failed = roi_results_df("alice", db, run_id=run.run_id).query("status == 'failed'")
    assert len(failed) == 6 and failed["with_memory"].isna().all()
    assert failed["error"].str.contains("unreadable verdict").all()
    # every call is metered, failed ones too
    usage = usage_df("alice", db)
    assert len(usage) == 20 and set(usage["purpose"]) == {"judge"}


def test_own_key_calls_are_left_out_of_the_deployment_totals(jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    run_roi("alice", db)
    run_roi("alice", db, judge=_FlakyJudge())
    run_roi("bob", db)
    run_roi("bob", db, judge=_FlakyJudge(), own_key=True)
    totals = deployment_usage(db)
    assert totals["judge"] == {"calls": 20, "input_tokens": 2000, "output_tokens": 200}
    bob = usage_df("bob", db)
    assert len(bob) == 4 and bob["own_key"].all()
    # benchmark results are not usage events
    with RoiStore(db) as store:
        assert store.execute("SELECT count(*) FROM usage_events").fetchone()[0] == 24
