"""``bench-nb roi``: import memories, run the ROI benchmark, show its status, serve it over MCP."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click

from bench_nb.cli import Group
from bench_nb.roi.errors import RunInProgressError, StoreError
from bench_nb.roi.probers import DETERMINISTIC_MODES

DB_OPTION = click.option(
    "--db",
    envvar="BENCH_NB_ROI_DB",
    default=".bench_nb/roi.sqlite",
    show_default=True,
    help="The ROI store: a SQLite file, or a postgresql:// URL (env BENCH_NB_ROI_DB).",
)


def _existing_store(ctx: click.Context, param: click.Parameter, db: str) -> str:
    """The ``--db`` of a command that reads a store: it must exist (``roi.store.require_store``)."""
    from bench_nb.roi.store import require_store

    try:
        require_store(db)
    except StoreError as err:
        raise click.BadParameter(str(err), ctx=ctx, param=param) from None
    return db


STORE_OPTION = click.option(
    "--db",
    envvar="BENCH_NB_ROI_DB",
    default=".bench_nb/roi.sqlite",
    show_default=True,
    callback=_existing_store,
    help="The ROI store: a SQLite file made by bench-nb roi import, or a postgresql:// URL (env BENCH_NB_ROI_DB).",
)
OWNER_OPTION = click.option(
    "--owner", required=True, envvar="BENCH_NB_ROI_OWNER", help="Whose memories (env BENCH_NB_ROI_OWNER)."
)
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def _run_options(fn: Any) -> Any:
    options = [
        click.option("--deterministic", is_flag=True, help="No key: deterministic prober and judge."),
        click.option(
            "--probe-mode",
            type=click.Choice(list(DETERMINISTIC_MODES)),
            default="paraphrase",
            show_default=True,
            help="The deterministic prober's mode (with --deterministic): paraphrase never quotes the memory; "
            "distractor uses only words it shares with its nearest neighbours (a search must rank it among "
            "them); template quotes it (an upper bound).",
        ),
        click.option("--model", help="The LLM prober's model (bench_nb.models alias)."),
        click.option("--judge-model", help="The LLM judge's model (default: --model)."),
        click.option(
            "--provider",
            help="The registered provider that recalls (default: sqlite; on Postgres, the database's own search).",
        ),
        click.option("-k", type=int, help="Hits per recall (default 5)."),
        click.option("--own-key", is_flag=True, help="Model calls use the owner's own key (metered apart)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _options(*, model: str | None, k: int | None, **opts: Any) -> Any:
    """The ``RoiOptions`` of the options of ``_run_options`` (and ``--force``)."""
    from bench_nb.roi.options import DEFAULT_MODEL, RoiOptions
    from bench_nb.roi.recall import DEFAULT_K

    return RoiOptions(model=model or DEFAULT_MODEL, k=k or DEFAULT_K, **opts)


def _echo(data: dict[str, Any], as_json: bool, text: str, *, error: bool = False) -> None:
    """``data`` as JSON with ``--json``, else ``text`` (on stderr when it is an ``error``)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False) if as_json else text, err=error and not as_json)


def _summary_text(d: dict[str, Any]) -> str:
    from bench_nb.roi.summary import measured

    if d.get("run_id") is None:
        return f"owner {d['owner']}: no finished run yet ({d.get('active_probes', 0)} active probes)"
    rate = d["exclusive_rate"]
    rate_text = "n/a (no probe judged)" if rate is None else f"{rate:.1%}"
    lines = [
        f"run {d['run_id']} (owner {d['owner']}, probe mode {d['probe_mode']}, judge {d['judge']})",
        f"  probes {d['probes']}  judged {d['judged']}  failed {d['failed']}",
        f"  with memory {d['with_memory']}  without memory {d['without_memory']}  exclusive {d['exclusive']}",
        f"  exclusive rate {rate_text}: {measured(d['exclusive'], d['judged'], d['judge'])}",
    ]
    return "\n".join(lines)


@click.group(cls=Group)
def roi() -> None:
    """The ROI benchmark: what would an agent lose without memory?"""


@roi.command("setup")
@click.option(
    "--admin-db",
    required=True,
    envvar="BENCH_NB_ROI_ADMIN_DB",
    help="A postgresql:// URL as an admin: a superuser, or the database owner with CREATEROLE.",
)
@click.option(
    "--server-role",
    default="bench_nb_roi",
    show_default=True,
    help="The role bench_nb connects as (--db postgresql://ROLE@...); created if missing.",
)
def setup_cmd(admin_db: str, server_role: str) -> None:
    """Create the ROI schema, roles and row-level security policies in a Postgres database (once); on a
    schema an older bench_nb set up, migrate it to this version, keeping its data."""
    from bench_nb.roi.pg_store import migrate_postgres, setup_postgres
    from bench_nb.roi.store import redact

    created = setup_postgres(admin_db, server_role=server_role)
    where = redact(admin_db)
    if created:
        click.echo(f"set up the ROI schema in {where}")
        return
    before, after = migrate_postgres(admin_db)
    click.echo(
        f"migrated the ROI schema in {where} from version {before} to {after}"
        if after != before
        else f"the ROI schema already exists in {where} (version {after})"
    )


@roi.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@DB_OPTION
@click.option("--lenient", is_flag=True, help="Import what can be read and list the problems.")
@click.option(
    "--owner",
    envvar="BENCH_NB_ROI_OWNER",
    help="The importing owner (default: the one owner of the file's memories).",
)
@click.option(
    "--admin",
    is_flag=True,
    help="Import several owners' memories and memberships as they are (logged as an admin import).",
)
@JSON_OPTION
def import_cmd(file: Path, db: str, lenient: bool, owner: str | None, admin: bool, as_json: bool) -> None:
    """Import memories from a JSONL file or a memory export zip.

    An owner's import may only write that owner's memories, into scopes the owner owns or is a member of,
    and grant memberships only in scopes the owner owns; anything else needs --admin.
    """
    from bench_nb.roi.imports import import_memories

    s = import_memories(file, db, lenient=lenient, owner=owner, admin=admin)
    data = dataclasses.asdict(s) | {"problems": [str(p) for p in s.problems]}
    from bench_nb.roi.store import redact

    text = (
        f"imported {s.inserted} new and {s.updated} updated memories of {', '.join(s.owners) or 'no owner'} "
        f"into {redact(db)} (as {s.importer or 'nobody'})"
    )
    text += "".join(f"\n  problem: {p}" for p in s.problems)
    _echo(data, as_json, text)


@roi.command("run")
@OWNER_OPTION
@STORE_OPTION
@_run_options
@click.option(
    "--force",
    is_flag=True,
    help="Take over from OWNER's running run even if its process looks alive (it hangs); it is abandoned.",
)
@JSON_OPTION
def run_cmd(owner: str, db: str, as_json: bool, **opts: Any) -> None:
    """Run the benchmark for OWNER (the first call on an empty pool generates the pool)."""
    from bench_nb.roi.run import start_run

    options = _options(**opts)
    try:
        run = start_run(owner, db, **options.start_kwargs())
    except RunInProgressError as err:
        data: dict[str, Any] = {
            "status": "in_progress",
            "owner": owner,
            "run_id": err.run_id,
            "phase": err.phase,
            "message": str(err),
        }
        _echo(data, as_json, f"error: {err}", error=True)
        raise SystemExit(1) from None
    if run.status == "generating":
        added = run.generated.added if run.generated else 0
        message = (
            f"generated {added} probes; run again to benchmark"
            if added
            else "no decision, gotcha or convention memory to probe yet: import memories first"
        )
        data = {
            "status": "generating",
            "owner": owner,
            "run_id": run.run_id,
            "probes": added,
            "message": message,
        }
        _echo(data, as_json, f"generating ({owner}): {message}")
        return
    summary = run.finish().to_dict()
    if run.notes:
        summary["notes"] = list(run.notes)
    _echo(summary, as_json, _summary_text(summary))
    if summary["probes"] and not summary["judged"]:  # nothing it was asked to do succeeded
        click.echo(
            f"error: run {summary['run_id']}: no probe was judged ({summary['failed']} of {summary['probes']} "
            "failed; each error is kept with its result, bench_nb.roi.roi_results_df): nothing measured",
            err=True,
        )
        raise SystemExit(1)


@roi.command("status")
@OWNER_OPTION
@STORE_OPTION
@JSON_OPTION
def status_cmd(owner: str, db: str, as_json: bool) -> None:
    """Show OWNER's latest run, the pool and any run in progress."""
    from bench_nb.roi.summary import roi_status

    status = roi_status(owner, db)
    data = status.to_dict()
    text = _summary_text(data)
    if status.in_progress is not None:
        text += f"\n  in progress: {status.in_progress.run_id} ({status.in_progress.phase})"
    text += f"\n  pool: {data['active_probes']} active, {data['retired_probes']} retired, {data['unprobed_memories']} unprobed"
    _echo(data, as_json, text)


@roi.command("tile")
@OWNER_OPTION
@STORE_OPTION
@click.option(
    "-o",
    "--output",
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="HTML file to write.",
)
def tile_cmd(owner: str, db: str, out: Path) -> None:
    """Write OWNER's "Only memory knows" tile as a standalone HTML file."""
    from bench_nb.roi.tile import roi_tile_html

    out.write_text(
        f"<!doctype html><meta charset='utf-8'><title>ROI</title>{roi_tile_html(owner, db)}\n", "utf-8"
    )
    click.echo(f"wrote {out}")


@roi.command("mcp")
@OWNER_OPTION
@STORE_OPTION
@_run_options
def mcp_cmd(owner: str, db: str, **opts: Any) -> None:
    """Serve the tool benchmark_memory over MCP (stdio) for OWNER."""
    from bench_nb.roi.mcp_server import serve

    serve(owner, db, _options(**opts))
