"""An API key a model endpoint echoes in its error message (some gateways do) reaches no file, table, stdout or
stderr of ``bench-nb run``, ``rejudge``, ``judge-audit``, ``roi`` (SQLite and Postgres) or ``export``.

The endpoint is the local LLM API server (tests/llm_server.py, real HTTP on 127.0.0.1) answering every call
with a 401 that quotes the key it was sent (``Fault("401-echo")``). The commands run as real processes, as a
user runs them; everything they wrote is then searched for the key: every file under the test's directory
(SQLite stores with their WAL, run directories, the Parquet store), a dump of the Postgres database, what
``roi_results_df`` returns, and each command's output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pg_cluster import Cluster
from roi_memsets import MEMBERS, alice_and_bob, write_jsonl
from test_llm import prober_responder

from bench_nb.roi import RoiStore, import_memories, roi_results_df, top_up
from bench_nb.roi.judges import JudgmentFailed
from bench_nb.roi.probers import TemplateProber
from llm_server import Fault, LLMServer, default_responder, llm_server

__all__ = ["llm_server"]

# no credential shape (sk-..., a JWT...) that redaction would catch by its look: only as the key it is
KEY = "Zq9vUfS3cr3tV4lu3xxGatewayKey7"


class Cli:
    """``bench-nb`` as a subprocess pointed at the server, with every output kept for the final search."""

    def __init__(self, cwd: Path, server: LLMServer) -> None:
        self.cwd, self.server = cwd, server
        server.idle_timeout = 900.0  # a command's imports can take a minute on a busy machine
        self.outputs: list[tuple[str, str]] = []
        self.env = {
            **os.environ,
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": server.openai_base_url,
            "BENCH_NB_LLM_CACHE": "off",  # every call reaches the server (the prober's replies would be reused)
            # the server answers at once: the timeout only has to outlast a busy machine's delays (5 s was tight)
            "BENCH_NB_LLM_TIMEOUT": "60",
            "BENCH_NB_LLM_BACKOFF": "0.01",
        }

    def __call__(self, *args: str, echo: bool = True) -> subprocess.CompletedProcess[str]:
        self.server.always = Fault("401-echo") if echo else None
        done = subprocess.run(
            [sys.executable, "-m", "bench_nb", *args],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.outputs.append((" ".join(args), done.stdout + done.stderr))
        return done


def _pg_dump(cluster: Cluster, url: str) -> str:
    database = url.split("@/", 1)[1].split("?")[0]
    return subprocess.run(
        [str(cluster.bindir / "pg_dump"), "-h", str(cluster.socket_dir), "-U", "roi_admin", database],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.slow
def test_an_echoed_key_is_stored_and_printed_nowhere(
    tmp_path: Path, llm_server: LLMServer, postgres: Cluster, pg_db: str
) -> None:
    cli = Cli(tmp_path, llm_server)
    # run: the LLM judge's calls all fail with the echo
    ran = cli("run", "-p", "sqlite", "-b", "sample", "--limit", "3", "-j", "gpt-4o-mini", "-r", "echoed")
    assert "[redacted]" in (tmp_path / "data/runs/echoed/checkpoint.json").read_text(), ran.stderr
    # rejudge and judge-audit of a run graded without a model
    assert (
        cli("run", "-p", "sqlite", "-b", "sample", "--limit", "3", "-r", "base", echo=False).returncode == 0
    )
    rejudged = cli("rejudge", "-j", "gpt-4o-mini", "data/runs/base")
    assert rejudged.returncode == 1 and "401" in rejudged.stderr and "[redacted]" in rejudged.stderr
    audited = cli("judge-audit", "-j", "gpt-4o-mini", "data/runs/base")
    assert audited.returncode == 1 and "[redacted]" in audited.stderr
    # export of both runs
    assert cli("export", "data/runs/*", "--to", "store").returncode == 0

    # ROI on both backends: a generation that fails (the run's error), then one that works, then a benchmark
    # whose every judgment fails (the append-only results' error)
    memories = write_jsonl(tmp_path / "memories.jsonl", [*alice_and_bob(), *MEMBERS])
    for db in (str(tmp_path / "roi.sqlite"), pg_db):
        assert cli("roi", "import", str(memories), "--db", db, "--admin", echo=False).returncode == 0
        roi = ("roi", "run", "--owner", "alice", "--db", db, "--model", "gpt-4o-mini")
        failed = cli(*roi)
        assert failed.returncode == 1 and "[redacted]" in failed.stderr
        llm_server.responder = prober_responder
        assert cli(*roi, echo=False).returncode == 0
        llm_server.responder = default_responder
        benchmark = cli(*roi, "--json")
        # every judgment failed: nothing measured, so the command exits 1 (issue 38), still printing no key
        assert benchmark.returncode == 1 and "no probe was judged" in benchmark.stderr, benchmark.stderr
        results = roi_results_df("alice", db)
        assert len(results) > 0 and results["error"].notna().all()
        assert results["error"].str.contains("[redacted]", regex=False).all()
        with RoiStore(db) as store:
            runs = store.runs("alice")
        assert [r["status"] for r in runs] == ["failed", "done", "done"]
        assert "[redacted]" in str(runs[0]["error"]) and KEY not in str(runs)
        assert KEY not in results.to_csv()

    assert KEY not in _pg_dump(postgres, pg_db)
    assert "[redacted]" in _pg_dump(postgres, pg_db)
    for command, output in cli.outputs:
        assert KEY not in output, command
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files) and any(p.name == "roi.sqlite" for p in files)
    assert [p for p in files if KEY.encode() in p.read_bytes()] == []


def test_the_roi_store_redacts_what_it_records(
    db: Path | str, jsonl_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever calls the store (a judge of one's own, an error no model client redacted), results and runs get
    no secret: both are kept for good (results are append-only)."""
    monkeypatch.setenv("MY_GATEWAY_TOKEN", KEY)
    import_memories(jsonl_file, db, admin=True)
    with RoiStore(db) as store:
        top_up(store, "alice", TemplateProber())
        probe = store.active_probes("alice")[0]
        store.claim_run("run-1", "alice", "benchmark", phase="judging")
        err = JudgmentFailed(probe.id, f"gateway said: bad key {KEY}")
        store.add_result(
            "run-1",
            probe,
            judge="mine",
            with_memory=None,
            without_memory=None,
            confidence=None,
            error=str(err),
        )
        store.finish_run("run-1", "failed", f"RuntimeError: Authorization: Bearer {KEY}")
        runs = store.runs("alice")
    results = roi_results_df("alice", db)
    assert results["error"].tolist() == [f"probe {probe.id}: gateway said: bad key [redacted]"]
    assert [r["error"] for r in runs] == ["RuntimeError: Authorization: Bearer [redacted]"]
