"""``bench-nb roi import|run|status|tile``: in process through click, and once through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from roi_memsets import alice_and_bob, write_export_zip

from bench_nb.cli import cli
from bench_nb.roi import start_run

REQUIRED = {"run_id", "probes", "with_memory", "without_memory", "exclusive", "exclusive_rate", "probe_mode"}


def _json(args: list[str]) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return result.exit_code, json.loads(result.output)


def test_import_run_status_tile(tmp_path: Path, db: Path) -> None:
    export = write_export_zip(tmp_path / "export.zip", alice_and_bob())
    code, imported = _json(["roi", "import", str(export), "--db", str(db), "--admin", "--json"])
    assert (
        code == 0 and imported["inserted"] == len(alice_and_bob()) and imported["owners"] == ["alice", "bob"]
    )

    base = [
        "roi",
        "run",
        "--owner",
        "alice",
        "--db",
        str(db),
        "--deterministic",
        "--probe-mode",
        "paraphrase",
        "--json",
    ]
    code, generating = _json(base)
    assert code == 0 and generating["status"] == "generating" and generating["probes"] == 20
    code, run = _json(base)
    assert code == 0 and set(run) >= REQUIRED
    assert run["probes"] == 20 and run["judged"] == 20 and run["probe_mode"] == "paraphrase"
    assert run["exclusive"] == run["with_memory"] and run["without_memory"] == 0
    assert run["exclusive_rate"] == run["exclusive"] / 20

    code, status = _json(["roi", "status", "--owner", "alice", "--db", str(db), "--json"])
    assert code == 0 and set(status) >= REQUIRED
    assert {k: status[k] for k in REQUIRED} == {k: run[k] for k in REQUIRED}
    assert status["active_probes"] == 20 and status["in_progress"] is None

    text = CliRunner().invoke(cli, ["roi", "status", "--owner", "alice", "--db", str(db)]).output
    assert (
        f"memory surfaced for {run['exclusive']} of 20 probes; a bare agent was not asked (deterministic judge)"
        in text
    )

    out = tmp_path / "tile.html"
    CliRunner().invoke(
        cli, ["roi", "tile", "--owner", "alice", "--db", str(db), "-o", str(out)], catch_exceptions=False
    )
    assert "Only memory knows" in out.read_text()


def test_a_run_in_progress_is_reported(jsonl_file: Path, db: Path) -> None:
    CliRunner().invoke(
        cli, ["roi", "import", str(jsonl_file), "--db", str(db), "--admin"], catch_exceptions=False
    )
    args = ["roi", "run", "--owner", "alice", "--db", str(db), "--deterministic", "--json"]
    _json(args)
    held = start_run("alice", db)
    code, busy = _json(args)
    assert code == 1 and busy["status"] == "in_progress" and busy["run_id"] == held.run_id
    held.finish()
    code, done = _json(args)
    assert code == 0 and done["run_id"] != held.run_id


def test_the_entry_point_without_a_key(jsonl_file: Path, db: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    exe = [sys.executable, "-m", "bench_nb"]
    CliRunner().invoke(
        cli, ["roi", "import", str(jsonl_file), "--db", str(db), "--admin"], catch_exceptions=False
    )
    llm = subprocess.run(
        [*exe, "roi", "run", "--owner", "alice", "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert llm.returncode == 1
    assert "OPENAI_API_KEY is not set" in llm.stderr and "--deterministic" in llm.stderr
    keyless = subprocess.run(
        [*exe, "roi", "run", "--owner", "alice", "--db", str(db), "--deterministic"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert keyless.returncode == 0 and "generating" in keyless.stdout


def test_run_force_takes_over_from_a_hung_run(jsonl_file: Path, db: Path) -> None:
    CliRunner().invoke(
        cli, ["roi", "import", str(jsonl_file), "--db", str(db), "--admin"], catch_exceptions=False
    )
    base = ["roi", "run", "--owner", "alice", "--db", str(db), "--deterministic", "--json"]
    assert _json(base)[1]["status"] == "generating"
    hung = start_run("alice", db)  # alive (this process) and never finished
    code, refused = _json(base)
    assert code == 1 and refused["status"] == "in_progress" and refused["run_id"] == hung.run_id
    assert "--force" in refused["message"]
    code, forced = _json([*base, "--force"])
    assert code == 0 and forced["status"] == "done" and forced["judged"] == 20


def test_commands_that_read_a_store_refuse_a_missing_file_and_create_none(tmp_path: Path) -> None:
    missing = tmp_path / "nonexist.sqlite"
    for command in (
        ["run", "--deterministic"],
        ["run", "--deterministic", "--json"],
        ["status"],
        ["status", "--json"],
        ["tile", "-o", str(tmp_path / "tile.html")],
        ["mcp", "--deterministic"],
    ):
        args = ["roi", command[0], "--owner", "alice", "--db", str(missing), *command[1:]]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code != 0, (command, result.output)
        assert str(missing) in result.output and "does not exist" in result.output, result.output
        assert not missing.exists() and not (tmp_path / "tile.html").exists()
    # bench-nb roi import is what makes a store; after it, the same run works
    export = write_export_zip(tmp_path / "export.zip", alice_and_bob())
    assert (
        CliRunner().invoke(cli, ["roi", "import", str(export), "--db", str(missing), "--admin"]).exit_code
        == 0
    )
    code, run = _json(["roi", "run", "--owner", "alice", "--db", str(missing), "--deterministic", "--json"])
    assert code == 0 and run["status"] == "generating"
