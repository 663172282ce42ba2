"""The compare report over runs picked from a run store: the same report as from their run directories."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from bench_nb.cli import main
from bench_nb.errors import ReportError
from bench_nb.frames.store import StoredRuns, export_runs
from bench_nb.reports import build_report, open_runs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
PICKED = ["synthetic-sqlite", "synthetic-full-context", "synthetic-no-memory"]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """The fixture runs and a fourth (a copy of one under another id) exported; the fourth's partitions are
    then deleted, so a report that read anything but the picked runs' files would fail."""
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES, runs)
    extra = runs / "extra-run"
    shutil.copytree(FIXTURES / "synthetic-sqlite", extra)
    checkpoint = json.loads((extra / "checkpoint.json").read_text())
    checkpoint["runId"] = "extra-run"
    (extra / "checkpoint.json").write_text(json.dumps(checkpoint))
    (extra / "report.json").unlink(missing_ok=True)
    store = tmp_path / "store"
    assert sorted(export_runs(runs, store).written) == sorted([*PICKED, "extra-run"])
    for table in ("questions", "judgments", "hits"):
        shutil.rmtree(store / table / "run=extra-run")
    return store


def _outputs(path: Path) -> list[str]:
    """Each code cell's outputs (what the page shows) as JSON, without execution counts, the build time and
    objects' addresses."""
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code"][2:]  # after the parameters and injected cells
    out = []
    for cell in cells:
        text = json.dumps([{k: v for k, v in o.items() if k != "execution_count"} for o in cell.outputs])
        text = re.sub(r"built \d{4}-\d\d-\d\d \d\d:\d\d UTC", "built <time>", text)
        out.append(re.sub(r" at 0x[0-9a-f]+>", ">", text))
    return out


def test_open_runs_picks_a_stores_runs_and_names_what_is_wrong(store: Path) -> None:
    picked = open_runs(str(store), run_ids=" synthetic-sqlite, synthetic-no-memory ")
    assert isinstance(picked, StoredRuns) and picked.run_ids == ["synthetic-sqlite", "synthetic-no-memory"]
    assert open_runs(str(store), run_ids=PICKED).run_ids == PICKED
    with pytest.raises(ReportError, match="no run 'nope' in the store"):
        open_runs(str(store), run_ids="synthetic-sqlite,nope")
    with pytest.raises(ReportError, match="dataset= cannot apply"):
        open_runs(str(store), run_ids=PICKED, dataset="locomo10.json")
    with pytest.raises(ReportError, match="run_ids selects runs of a run store"):
        open_runs(str(FIXTURES / "*"), run_ids=PICKED)


@pytest.mark.notebook
@pytest.mark.slow  # two compare reports: 20-40 s
def test_compare_report_from_a_store_equals_the_one_from_run_directories(store: Path, tmp_path: Path) -> None:
    from_store = tmp_path / "store.ipynb"
    main(
        [
            "report",
            "compare",
            "-p",
            "runs",
            str(store),
            "-p",
            "run_ids",
            ",".join(PICKED),
            "-o",
            str(tmp_path / "site" / "store.html"),
            "--notebook",
            str(from_store),
        ]
    )
    from_dirs = tmp_path / "dirs.ipynb"
    build_report(
        "compare",
        {"runs": [str(FIXTURES / r) for r in PICKED]},
        tmp_path / "site" / "dirs.html",
        notebook=from_dirs,
    )
    got, want = _outputs(from_store), _outputs(from_dirs)
    assert len(got) == len(want) and sum(o.count("output_type") for o in want) > 20
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"code cell {i + 2} differs"
    html = (tmp_path / "site" / "store.html").read_text()
    assert "3 runs" in html and "Paired comparisons" in html and "Disputed questions" in html
    assert "extra-run" not in html
