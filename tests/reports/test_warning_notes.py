"""Warnings in a report notebook become the report's own notes, never stderr blocks naming internal paths."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from notebook_files import write_notebook

from bench_nb.reports import build_report

WARN = (
    "import warnings\n"
    "from bench_nb.tables import budget\n"
    "for _ in range(2):\n"
    "    warnings.warn(\"budget_curve by latency_ms: left out ['zep'], which record no search_ms\", UserWarning)\n"
    "print('after')"
)


def _stderr(nb: nbformat.NotebookNode) -> list[str]:
    return [
        o.get("text", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("name") == "stderr"
    ]


def test_a_warning_in_a_report_cell_is_a_note_once_not_stderr(tmp_path: Path) -> None:
    setup = "from bench_nb import reports\nreports.setup_notebook()"
    source = write_notebook(tmp_path / "warns.ipynb", setup, WARN, WARN)
    out, executed = tmp_path / "warns.html", tmp_path / "executed.ipynb"
    build_report(source, {}, out, index=False, notebook=executed)
    nb = nbformat.read(executed, as_version=4)
    assert _stderr(nb) == []
    for cell in nb.cells[2:]:  # each cell shows the warning once, as a note
        notes = [o for o in cell.outputs if "bnb-note" in o.get("data", {}).get("text/html", "")]
        assert len(notes) == 1 and "which record no search_ms" in notes[0]["data"]["text/html"]
    page = out.read_text()
    assert "budget_curve by latency_ms" in page and "UserWarning" not in page and "ipykernel" not in page


@pytest.mark.slow
def test_the_compare_report_over_imported_runs_has_no_stderr(
    harness_results: Path, locomo_path: Path, tmp_path: Path
) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "synthetic-sqlite"
    params = {
        "runs": [str(fixture), str(harness_results / "zep" / "zep_locomo_grades.json")],
        "dataset": str(locomo_path),
    }
    out, executed = tmp_path / "compare.html", tmp_path / "compare.ipynb"
    build_report("compare", params, out, index=False, notebook=executed)
    assert _stderr(nbformat.read(executed, as_version=4)) == []
    page = out.read_text()
    assert "budget_curve by latency_ms: left out" in page and "UserWarning" not in page
