"""Reports: parameterized notebooks executed with papermill and exported to one offline HTML file each.

- ``build_report(name, params, output)``: one report (``ReportError`` names the failing cell).
- ``build_all(config)``: the reports a TOML file lists; one failure never stops the others.
- ``reports/index.html`` lists every report with its date, runs and MemScores (``write_index_html``).
- In notebooks: ``setup_notebook()`` (charts as inline SVG in a report), ``heading``, ``section``, ``note``,
  ``report_summary``, ``open_runs`` (runs that must exist: a report never shows an empty page), ``resolve_runs``,
  ``beside`` (a file built beside the report, for a relative link to it).

Names are imported on first use, so a notebook's ``from bench_nb import reports`` stays cheap.
"""

# mypy: implicit-reexport
from __future__ import annotations

from typing import TYPE_CHECKING

from bench_nb.lazy import attach

if TYPE_CHECKING:
    from bench_nb.chart_output import in_report
    from bench_nb.reports.build import BuiltReport, build_report, execute_notebook, export_html
    from bench_nb.reports.index import ReportEntry, read_index, record_report, write_index_html
    from bench_nb.reports.locate import find_notebook, open_runs, resolve_runs
    from bench_nb.reports.notebook import (
        Html,
        beside,
        heading,
        note,
        project_path,
        report_summary,
        roi_tile,
        section,
        setup_notebook,
    )
    from bench_nb.reports.schedule import BuildOutcome, ReportsConfig, build_all
    from bench_nb.reports.serve import make_server

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "bench_nb.chart_output": ["in_report"],
        "bench_nb.reports.build": ["BuiltReport", "build_report", "execute_notebook", "export_html"],
        "bench_nb.reports.index": ["ReportEntry", "read_index", "record_report", "write_index_html"],
        "bench_nb.reports.locate": ["find_notebook", "open_runs", "resolve_runs"],
        "bench_nb.reports.notebook": [
            "Html",
            "beside",
            "heading",
            "note",
            "project_path",
            "report_summary",
            "roi_tile",
            "section",
            "setup_notebook",
        ],
        "bench_nb.reports.schedule": ["BuildOutcome", "ReportsConfig", "build_all"],
        "bench_nb.reports.serve": ["make_server"],
    },
)
