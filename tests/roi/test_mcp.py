"""The MCP server through the mcp package's own client, over stdio, as a real subprocess."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment

from bench_nb.roi import RoiStore, import_memories, roi_status


def _payload(result: Any) -> dict[str, Any]:
    assert not getattr(result, "is_error", getattr(result, "isError", False)), result.content
    return json.loads(result.content[0].text)


async def _session_calls(
    db: Path, owner: str, calls: list[str], cwd: Path, *extra: str
) -> tuple[list[Any], list[dict[str, Any]]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bench_nb.roi.mcp_server", "--owner", owner, "--db", str(db), "--deterministic", *extra],
        cwd=str(cwd),
        # the client passes only a safe environment: keep PYTHONPATH so the server runs the sources under test
        env={**get_default_environment(), **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}},
    )
    out: list[dict[str, Any]] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        for name in calls:
            if name == "wait":
                await _wait_done(session)
                continue
            out.append(_payload(await session.call_tool(name, {})))
    return tools, out


async def _wait_done(session: ClientSession) -> None:
    deadline = time.monotonic() + 120  # generous: a deadline, not a speed check (2 shared cores)
    while time.monotonic() < deadline:
        status = _payload(await session.call_tool("benchmark_status", {}))
        if status["status"] == "done":
            return
        await anyio.sleep(0.05)
    raise AssertionError("the run was not judged in time")


def test_benchmark_memory_through_an_mcp_client(jsonl_file: Path, db: Path, tmp_path: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    calls = ["benchmark_memory", "benchmark_memory", "wait", "benchmark_status"]
    tools, (first, second, status) = anyio.run(_session_calls, db, "alice", calls, tmp_path)

    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"benchmark_memory", "benchmark_status"}
    # no tool lets the caller choose an owner: the server acts for the owner it was started for
    for tool in tools:
        schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None) or {}
        assert not schema.get("properties"), schema

    assert first["status"] == "generating" and first["probes"] == 20
    assert second["status"] == "judging" and second["probes"] == 20 and second["probe_mode"] == "paraphrase"
    assert 0 < second["source_surfaced"] <= 20
    # the run returned after its recalls; the judging finished in the background
    assert status["run_id"] == second["run_id"] and status["status"] == "done"
    assert status["judged"] == 20 and status["exclusive"] == second["source_surfaced"]
    assert status["exclusive_rate"] == status["exclusive"] / 20
    assert roi_status("alice", db).latest.run_id == second["run_id"]  # type: ignore[union-attr]

    # another owner's server sees none of alice's runs or probes
    _, (bob_status, bob_first) = anyio.run(
        _session_calls, db, "bob", ["benchmark_status", "benchmark_memory"], tmp_path
    )
    assert bob_status["status"] == "no_runs" and bob_status["run_id"] is None
    assert bob_status["active_probes"] == 0  # alice's 20 probes are not counted, nor shown
    assert bob_first["status"] == "generating" and bob_first["probes"] == 4
    with RoiStore(db) as store:
        assert {p.memory_id for p in store.active_probes("bob")} == {
            "b-web-1",
            "b-web-2",
            "b-personal",
            "b-team",
        }


def test_the_mcp_server_runs_distractor_probes(db: Path, tmp_path: Path) -> None:
    """``--probe-mode distractor`` reaches the server's runs: on the generated team store, fewer than all of
    the 20 probes surface their memory with 5 hits."""
    from bench_nb.roi.sample import team_memories, write_sample_memories

    import_memories(write_sample_memories(tmp_path / "team.jsonl", team_memories()), db, admin=True)
    calls = ["benchmark_memory", "benchmark_memory", "wait", "benchmark_status"]
    _, (first, second, status) = anyio.run(
        _session_calls, db, "alex", calls, tmp_path, "--probe-mode", "distractor"
    )
    assert first["status"] == "generating" and first["probes"] == 20
    assert second["probe_mode"] == "distractor" and 0 < second["source_surfaced"] < 20
    assert status["probe_mode"] == "distractor" and 0 < status["exclusive_rate"] < 1
