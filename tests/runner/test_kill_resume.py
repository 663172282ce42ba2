"""A run killed with SIGKILL at random moments, several times, then resumed: nothing repeated, nothing lost.

The subprocess runs ``python -m bench_nb run`` on the bundled sample benchmark with plugins that log every
provider, answerer and judge call (with the process id) to a file. Before each restart the test reads what the
run directory durably holds (checkpoint + journal, as ``read_run`` does); the calls of the next process must
not touch any phase recorded complete at that moment.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from runner_fakes import call_log, completed_phases, touched

from bench_nb.providers.sqlite import SqliteProvider
from bench_nb.runformat.load import read_run
from bench_nb.runformat.verdicts import read_verdicts

HERE = Path(__file__).resolve().parent
RUN_ID = "killed"


def _command(runs: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "bench_nb",
        "run",
        "-p",
        "runner_fakes:LoggedProvider",
        "-b",
        "sample",
        "-m",
        "runner_fakes:LoggedAnswerer",
        "-j",
        "runner_fakes:LoggedJudge,f1",
        "-r",
        RUN_ID,
        "--runs-dir",
        str(runs),
        "--concurrency",
        "3",
    ]


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume(tmp_path: Path) -> None:
    # A fresh kill schedule each run (every failure message names its seed); BENCH_NB_KILL_SEED replays one.
    seed = int(os.environ.get("BENCH_NB_KILL_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    runs, log = tmp_path / "runs", tmp_path / "calls.jsonl"
    run_dir = runs / RUN_ID
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "BENCH_NB_TEST_CALL_LOG": str(log),
        "BENCH_NB_TEST_DELAY_S": "0.01",
        "BENCH_NB_QUIET": "1",
    }
    snapshots: list[set[tuple[str, str]]] = []
    judged_at: list[set[tuple[str, str]]] = []  # (question, judge) in judgments.jsonl at each snapshot
    pids: list[int] = []
    kills = 0
    for attempt in range(6):
        snapshots.append(completed_phases(run_dir))
        judged_at.append(set(read_verdicts(run_dir)[0]))
        before = len(call_log(log))
        wanted = rng.randint(3, 40)  # kill after this many new calls, plus a random sliver of time
        # Should this process be too slow to kill it in time (a busy machine), the run kills itself a few
        # calls later ($BENCH_NB_TEST_DIE_AFTER): the first five processes are killed either way, and three
        # of them at most 3 x 45 calls in, fewer than the run's 158, so at least three kills always happen.
        die_after = str(wanted + 5) if attempt < 5 else "0"
        proc = subprocess.Popen(
            _command(runs),
            env={**env, "BENCH_NB_TEST_DIE_AFTER": die_after},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        pids.append(proc.pid)
        deadline = time.monotonic() + 60
        while proc.poll() is None and len(call_log(log)) - before < wanted and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.03))
        if proc.poll() is None and attempt < 5:
            os.kill(proc.pid, signal.SIGKILL)  # a zombie is still a process: no error if it killed itself
        _out, err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            break
        kills += 1
        assert proc.returncode == -signal.SIGKILL, f"seed {seed}: run failed: {err.decode()[-2000:]}"
    assert kills >= 3, f"seed {seed}: the run finished before it could be killed often enough"
    assert proc.returncode == 0, f"seed {seed}: {err.decode()[-2000:]}"

    run = read_run(run_dir, strict=True)
    ck = run.checkpoint
    assert ck is not None and ck.status == "completed"
    by_container: dict[str, list[str]] = {}
    for qid, q in ck.questions.items():
        by_container.setdefault(q.containerTag, []).append(qid)
    by_search = {f"{q.containerTag}\t{q.question}": qid for qid, q in ck.questions.items()}
    calls = call_log(log)
    # No process repeated a phase that was recorded complete when it started.
    for pid, done in zip(pids, snapshots, strict=True):
        mine = [c for c in calls if c["pid"] == pid]
        for call in mine:
            for pair in touched(call, by_container, by_search):
                assert pair not in done, f"seed {seed}: {pair} ran again in process {pid} after completing"
            if call["kind"] == "clear":
                assert not all((qid, "ingest") in done for qid in by_container[call["key"]])
        # Within one process, each unit of work ran at most once (no error, so no retry).
        per_unit = Counter((c["kind"], c["key"]) for c in mine if c["kind"] != "clear")
        assert max(per_unit.values(), default=1) == 1, f"seed {seed}: {per_unit.most_common(2)}"
    # Every target question ends evaluated, exactly once in the report, with every judge's verdict.
    assert all(q.phases.evaluate.status == "completed" for q in ck.questions.values())
    report = json.loads((run_dir / "report.json").read_text())
    assert [e["questionId"] for e in report["evaluations"]] == ck.targetQuestionIds
    assert len(ck.targetQuestionIds) == 50
    judged = {
        json.loads(line)["questionId"] for line in (run_dir / "judgments.jsonl").read_text().splitlines()
    }
    assert judged == set(ck.targetQuestionIds)
    # A killed run lost no verdict of an evaluation it had recorded done: the evaluate workers' appends to
    # judgments.jsonl (one fsync for those waiting together) return before the evaluation is recorded.
    judges = {j for _, j in read_verdicts(run_dir)[0]}
    assert len(judges) == 2
    for done, verdicts in zip(snapshots, judged_at, strict=True):
        for qid in (q for q, phase in done if phase == "evaluate"):
            assert {(qid, j) for j in judges} <= verdicts, f"seed {seed}: {qid}'s verdicts lost by a kill"
    # Every search has its results file (a kill can lose one; the resume rewrites it), and no temporary file.
    assert sorted(p.stem for p in (run_dir / "results").glob("*.json")) == sorted(ck.targetQuestionIds)
    assert not list(run_dir.rglob("*.tmp"))
    # Re-ingesting after a kill cleared the container first: no message is stored twice.
    sqlite = SqliteProvider(run_dir)
    for tag, qids in by_container.items():
        sessions = ck.questions[qids[0]].sessions or []
        assert sqlite.store.count(tag) == sum(s.messageCount or 0 for s in sessions), tag
