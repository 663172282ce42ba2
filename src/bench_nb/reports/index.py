"""The report index: ``index.json`` (one entry per report file) and ``index.html`` built from it."""

from __future__ import annotations

import html
import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field

from bench_nb.runformat.journal import write_atomic

INDEX_JSON = "index.json"
INDEX_HTML = "index.html"


class RunEntry(BaseModel):
    """One run a report shows, as the index lists it: its id, provider, benchmark and MemScore."""

    run_id: str
    provider: str = ""
    benchmark: str = ""
    memscore: str = ""


class ReportEntry(BaseModel):
    """One built report, as the index lists it."""

    file: str  # relative to the index's directory
    name: str  # the notebook's name
    title: str = ""
    built_at: str  # ISO-8601 UTC
    runs: list[RunEntry] = Field(default_factory=list)


class ReportIndex(BaseModel):
    """The reports directory's ``index.json``: every report built there."""

    reports: list[ReportEntry] = Field(default_factory=list)


def read_index(directory: str | Path) -> ReportIndex:
    """The index of ``directory`` (empty when there is none or it cannot be read)."""
    path = Path(directory) / INDEX_JSON
    try:
        return ReportIndex.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return ReportIndex()


def _write(path: Path, text: str) -> None:
    write_atomic(path, text.encode("utf-8"), durable=False)  # no temporary file is left if it fails


def record_report(directory: str | Path, entry: ReportEntry) -> Path:
    """Add or replace ``entry`` (keyed by file) and rewrite ``index.json`` and ``index.html``."""
    d = Path(directory)
    index = read_index(d)
    index.reports = [r for r in index.reports if r.file != entry.file] + [entry]
    _write(d / INDEX_JSON, json.dumps(index.model_dump(), indent=2, ensure_ascii=False))
    return write_index_html(d)


def write_index_html(directory: str | Path) -> Path:
    """``index.html`` listing every report whose file still exists: date, runs and their MemScores."""
    d = Path(directory)
    index = read_index(d)
    entries = sorted(
        (r for r in index.reports if (d / r.file).is_file()), key=lambda r: r.built_at, reverse=True
    )
    # Two reports of one title (two judge_disagreement builds over different runs) are told apart by file.
    titles = Counter(r.title or r.name for r in entries)
    rows = []
    for r in entries:
        title = r.title or r.name
        shown = title if titles[title] == 1 else f"{title} ({r.file})"
        runs = "".join(
            f"<li>{html.escape(x.provider or x.run_id)} <code>{html.escape(x.run_id)}</code>"
            f"{' · ' + html.escape(x.benchmark) if x.benchmark else ''}"
            f"{' — <b>' + html.escape(x.memscore) + '</b>' if x.memscore else ''}</li>"
            for x in r.runs
        )
        rows.append(
            f'<tr><td><a href="{html.escape(r.file, quote=True)}">{html.escape(shown)}</a>'
            f'<div class="nb">{html.escape(r.name)}.ipynb</div></td>'
            f"<td>{html.escape(r.built_at.replace('T', ' ')[:16])} UTC</td>"
            f"<td><ul>{runs or '<li>—</li>'}</ul></td></tr>"
        )
    body = "".join(rows) or '<tr><td colspan="3">No reports yet: run <code>bench-nb report</code>.</td></tr>'
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>bench_nb reports</title>
<style>
body{{font:14px/1.5 Helvetica,Arial,sans-serif;color:#1f2328;max-width:1000px;margin:24px auto;padding:0 16px}}
table{{border-collapse:collapse;width:100%}} th,td{{border-bottom:1px solid #d0d7de;padding:8px;text-align:left;
vertical-align:top}} th{{background:#f6f8fa}} ul{{margin:0;padding-left:18px}} .nb{{color:#57606a;font-size:12px}}
code{{font-size:12px;color:#57606a}}
</style></head><body>
<h1>bench_nb reports</h1>
<table><thead><tr><th>report</th><th>built</th><th>runs and MemScores</th></tr></thead>
<tbody>{body}</tbody></table>
</body></html>
"""
    out = d / INDEX_HTML
    _write(out, page)
    return out
