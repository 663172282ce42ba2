"""Reports: parameterized notebooks executed with papermill and exported to one offline HTML file each.

- ``build_report(name, params, output)``: one report (``ReportError`` names the failing cell).
- ``build_all(config)``: the reports a TOML file lists; one failure never stops the others.
- ``reports/index.html`` lists every report with its date, runs and MemScores (``write_index_html``).
- In notebooks: ``setup_notebook()``, ``heading``, ``note``, ``report_summary``, ``resolve_runs``.
"""

from __future__ import annotations

from bench_nb.reports.build import BuiltReport, build_report, execute_notebook, export_html
from bench_nb.reports.index import ReportEntry, read_index, record_report, write_index_html
from bench_nb.reports.locate import find_notebook, resolve_runs
from bench_nb.reports.notebook import (
    Html,
    heading,
    in_report,
    note,
    project_path,
    report_summary,
    roi_tile,
    setup_notebook,
)
from bench_nb.reports.schedule import BuildOutcome, ReportsConfig, build_all, read_config
from bench_nb.reports.serve import make_server

__all__ = [
    "BuildOutcome",
    "BuiltReport",
    "Html",
    "ReportEntry",
    "ReportsConfig",
    "build_all",
    "build_report",
    "execute_notebook",
    "export_html",
    "find_notebook",
    "heading",
    "in_report",
    "make_server",
    "note",
    "project_path",
    "read_config",
    "read_index",
    "record_report",
    "report_summary",
    "resolve_runs",
    "roi_tile",
    "setup_notebook",
    "write_index_html",
]
