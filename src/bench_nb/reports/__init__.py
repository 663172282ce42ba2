"""Reports: parameterized notebooks executed with papermill and exported to one offline HTML file each.

- ``build_report(name, params, output)``: one report (``ReportError`` names the failing cell).
- ``build_all(config)``: the reports a TOML file lists; one failure never stops the others.
- ``reports/index.html`` lists every report with its date, runs and MemScores (``write_index_html``).
- In notebooks: ``setup_notebook()`` (charts as inline SVG in a report), ``heading``, ``section``, ``note``,
  ``report_summary``, ``open_runs`` (runs that must exist: a report never shows an empty page), ``resolve_runs``.

Names are imported on first use, so a notebook's ``from bench_nb import reports`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench_nb.reports.build import BuiltReport, build_report, execute_notebook, export_html
    from bench_nb.reports.index import ReportEntry, read_index, record_report, write_index_html
    from bench_nb.reports.locate import find_notebook, open_runs, resolve_runs
    from bench_nb.reports.notebook import (
        Html,
        heading,
        in_report,
        note,
        project_path,
        report_summary,
        roi_tile,
        section,
        setup_notebook,
    )
    from bench_nb.reports.schedule import BuildOutcome, ReportsConfig, build_all, read_config
    from bench_nb.reports.serve import make_server

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(["BuiltReport", "build_report", "execute_notebook", "export_html"], "build"),
    **dict.fromkeys(["ReportEntry", "read_index", "record_report", "write_index_html"], "index"),
    **dict.fromkeys(["find_notebook", "open_runs", "resolve_runs"], "locate"),
    **dict.fromkeys(
        [
            "Html",
            "heading",
            "in_report",
            "note",
            "project_path",
            "report_summary",
            "roi_tile",
            "section",
            "setup_notebook",
        ],
        "notebook",
    ),
    **dict.fromkeys(["BuildOutcome", "ReportsConfig", "build_all", "read_config"], "schedule"),
    "make_server": "serve",
}

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
    "open_runs",
    "project_path",
    "read_config",
    "read_index",
    "record_report",
    "report_summary",
    "resolve_runs",
    "roi_tile",
    "section",
    "setup_notebook",
    "write_index_html",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
