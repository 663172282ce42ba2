"""notebooks/roi.ipynb is committed clean and executes with papermill, on a fixture store and on the demo set."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "roi.ipynb"


def test_committed_without_outputs_and_literal_parameters() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    first = nb.cells[0]
    assert "parameters" in first.metadata.get("tags", [])
    for node in ast.parse(first.source).body:
        assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def _outputs(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not any(o.get("output_type") == "error" for o in outputs)
    return "\n".join(
        str(o.get("text", ""))
        + str(o.get("data", {}).get("text/html", ""))
        + str(o.get("data", {}).get("text/plain", ""))
        for o in outputs
    )


@pytest.mark.notebook
def test_executes_on_a_fixture_store(jsonl_file: Path, db: Path, tmp_path: Path) -> None:
    import papermill

    out = tmp_path / "roi-out.ipynb"
    params = {
        "db": str(db),
        "owner": "alice",
        "memories": str(jsonl_file),
        "runs": 2,
        "probe_mode": "paraphrase",
    }
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out),
        parameters=params,
        kernel_name="python3",
        progress_bar=False,
        cwd=str(tmp_path),
    )
    text = _outputs(out)
    from bench_nb.roi import roi_runs_df

    runs = roi_runs_df("alice", db)
    assert len(runs) == 2 and set(runs["probe_mode"]) == {"paraphrase"}
    latest = runs.iloc[-1]
    assert "Only memory knows" in text and "<svg" in text
    assert (
        f"memory surfaced for {latest['exclusive']} of {latest['judged']} probes; a bare agent was not asked"
        in text
    )
    assert "generated 20 probes" in text
    assert "b-web" not in text  # bob's memories appear nowhere in alice's notebook


@pytest.mark.notebook
def test_executes_on_the_demo_set(tmp_path: Path) -> None:
    import papermill

    out = tmp_path / "demo-out.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out),
        parameters={"runs": 1},
        kernel_name="python3",
        progress_bar=False,
        cwd=str(tmp_path),
    )
    text = _outputs(out)
    assert "Imported 29 new" in text and "a bare agent was not asked (deterministic judge)" in text
    # the page says which probe mode its headline comes from, and the default never quotes the memory
    assert "The headline comes from paraphrase probes (a few key terms, never 4 consecutive words" in text
    assert "No model calls" in text  # the empty usage table says why it is empty
    assert "The deterministic judge cannot know what a bare agent knows" in text  # why the rate is a bound


@pytest.mark.slow
@pytest.mark.notebook
def test_building_the_report_of_a_store_adds_no_run_to_it(jsonl_file: Path, tmp_path: Path) -> None:
    # bench-nb report roi -p db STORE: renders what is stored; it made 2 runs (each a cost with an LLM judge)
    from click.testing import CliRunner

    from bench_nb.cli import cli
    from bench_nb.roi import RoiOptions, import_memories, roi_runs_df, run_roi

    db = tmp_path / "roi.sqlite"
    import_memories(jsonl_file, db, admin=True)
    options = RoiOptions(deterministic=True).start_kwargs()
    while run_roi("alice", db, **options).status == "generating":
        pass
    before = roi_runs_df("alice", db)
    assert len(before) == 1
    out = tmp_path / "roi.html"
    args = ["report", "roi", "-p", "db", str(db), "-p", "owner", "alice", "-o", str(out)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    after = roi_runs_df("alice", db)
    assert list(after["run_id"]) == list(before["run_id"])  # no run added, none changed
    assert before.equals(after)
    assert "Only memory knows" in out.read_text()


@pytest.mark.slow
@pytest.mark.notebook
def test_the_report_of_a_missing_store_fails_naming_it_and_creates_none(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bench_nb.cli import cli

    missing = tmp_path / "nonexist.sqlite"
    out = tmp_path / "roi.html"
    args = ["report", "roi", "-p", "db", str(missing), "-p", "owner", "alice", "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code != 0
    text = result.output + repr(result.exception)
    assert str(missing) in text and "does not exist" in text, text
    assert not missing.exists() and not out.exists()
