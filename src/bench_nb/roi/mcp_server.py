"""The ROI benchmark as an MCP server (stdio), with the tool ``benchmark_memory``.

Who calls: a stdio MCP server is a local process that the user's MCP client starts from its own configuration,
so the server is started for one owner (``bench-nb roi mcp --owner OWNER --db PATH`` or
``python -m bench_nb.roi.mcp_server --owner OWNER --db PATH``) and every tool acts as that owner. No tool takes
an owner argument, so a caller cannot read or run as anyone else.

``benchmark_memory`` claims a run, does the pinned recalls, and returns as soon as they are done; the judging
and the top-up continue in a background thread of the server, and ``benchmark_status`` reports the numbers
once they are in. When the server exits it waits for that thread; if it is killed instead, the run is marked
abandoned by the next claim after the stale timeout (what was judged stays).
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench_nb.roi.errors import RunInProgressError
from bench_nb.roi.options import RoiOptions
from bench_nb.roi.probers import DEFAULT_MODE, DETERMINISTIC_MODES
from bench_nb.roi.run import RoiRun, start_run
from bench_nb.roi.summary import roi_status

INSTRUCTIONS = (
    "benchmark_memory measures what an agent would lose without this user's memory: it asks holdout questions "
    "written from the user's own decisions, gotchas and conventions, recalls each with the user's permissions, "
    "and judges whether memory was needed. benchmark_status reports the latest numbers."
)


class RoiMcpApp:
    """The tools' logic for one owner, independent of the MCP transport."""

    def __init__(self, owner: str, db: str | Path, options: RoiOptions | None = None) -> None:
        self.owner = owner
        self.db = db
        self.options = options or RoiOptions()
        self.options.prober()  # fail at start (e.g. a missing key), not at the first call
        self.options.judge()
        self._threads: list[threading.Thread] = []

    def benchmark_memory(self) -> dict[str, Any]:
        """The tool ``benchmark_memory``: claim a run and recall; judging goes on in the background.

        Returns the run's status (``in_progress``: another run holds the lock; ``generating``: the probe pool
        was written; ``judging``) with its id and a message for the caller.
        """
        try:
            run = start_run(self.owner, self.db, **self.options.start_kwargs())
        except RunInProgressError as err:
            return {"status": "in_progress", "run_id": err.run_id, "phase": err.phase, "message": str(err)}
        if run.status == "generating":
            added = run.generated.added if run.generated else 0
            message = (
                f"Generated {added} probe questions from your memories; call benchmark_memory again to run them."
                if added
                else "No decision, gotcha or convention memory to probe yet: import memories first."
            )
            return {"status": "generating", "run_id": run.run_id, "probes": added, "message": message}
        self._judge_in_background(run)
        summary = run.summary()
        sources = {p.id: p.memory_id for p in run.probes}
        surfaced = sum(sources[r.probe_id] in r.memory_ids for r in run.recalls)
        return {
            "status": "judging",
            "run_id": run.run_id,
            "probes": summary.probes,
            "source_surfaced": surfaced,
            "probe_mode": summary.probe_mode,
            "message": (
                f"Recalled {summary.probes} probes ({surfaced} surfaced their source memory); judging continues. "
                "Call benchmark_status for the exclusive rate."
            ),
        }

    def benchmark_status(self) -> dict[str, Any]:
        """The tool ``benchmark_status``: the owner's latest ROI numbers, as ``roi_status`` reports them."""
        return roi_status(self.owner, self.db).to_dict()

    def _judge_in_background(self, run: RoiRun) -> None:
        thread = threading.Thread(target=run.finish, name=f"roi-judge-{run.run_id}")
        thread.start()
        self._threads.append(thread)

    def wait(self, timeout_s: float | None = None) -> None:
        """Wait for background judging (called when the server stops)."""
        for thread in self._threads:
            thread.join(timeout_s)


def build_server(app: RoiMcpApp) -> Any:
    """The MCP server object (mcp 2's ``MCPServer``; mcp 1's ``FastMCP``) with the two tools."""
    try:
        from mcp.server.mcpserver import MCPServer as Server
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as Server  # type: ignore[attr-defined,no-redef]

    server = Server("bench-nb-roi", instructions=INSTRUCTIONS)

    @server.tool(description="Run the memory ROI benchmark for you; returns once the recalls are done.")
    def benchmark_memory() -> dict[str, Any]:
        return app.benchmark_memory()

    @server.tool(description="Your latest memory ROI numbers, the probe pool, and any run in progress.")
    def benchmark_status() -> dict[str, Any]:
        return app.benchmark_status()

    return server


def serve(owner: str, db: str | Path, options: RoiOptions | None = None) -> None:
    """Serve the tools over stdio for ``owner`` until the client disconnects."""
    app = RoiMcpApp(owner, db, options)
    try:
        build_server(app).run("stdio")
    finally:
        app.wait()


def main(argv: list[str] | None = None) -> None:
    """``python -m bench_nb.roi.mcp_server --owner OWNER --db PATH [--deterministic]``."""
    parser = argparse.ArgumentParser(
        prog="python -m bench_nb.roi.mcp_server", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--owner", required=True)
    parser.add_argument("--db", required=True, help="a SQLite file or a postgresql:// URL")
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--probe-mode", choices=DETERMINISTIC_MODES, default=DEFAULT_MODE)
    parser.add_argument("--model", default=None)
    parser.add_argument("--provider", default=None)
    args = parser.parse_args(argv)
    options = RoiOptions(deterministic=args.deterministic, probe_mode=args.probe_mode, provider=args.provider)
    if args.model:
        options = replace(options, model=args.model)
    serve(args.owner, args.db, options)


if __name__ == "__main__":
    main()
