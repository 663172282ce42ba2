"""notebooks/judge_disagreement.ipynb is committed clean and executes with papermill on fixture runs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "judge_disagreement.ipynb"


def test_committed_without_outputs_and_literal_parameters() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    first = nb.cells[0]
    assert "parameters" in first.metadata.get("tags", [])
    import ast

    for node in ast.parse(first.source).body:  # literals only
        assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert all(
        "bench_nb" in c.source or "agreement" in c.source for c in nb.cells[1:] if c.cell_type == "code"
    )


@pytest.mark.notebook
def test_executes_on_fixture_runs(make_run, tmp_path: Path) -> None:
    import papermill

    answers = {
        "q1": "Biscuit",
        "q2": "London",
        "q3": "in March 2024",
        "q4": "cello",
        "q6": "<script>x</script>",
    }
    for run_id, provider, f1 in (("run-a", "alpha", 0), ("run-b", "beta", 1)):
        make_run(
            run_id,
            provider=provider,
            answers=answers,
            primary="contains",
            bench_nb={"k": 10},
            primary_scores={"q1": 1, "q2": 0, "q3": 1, "q4": 1, "q6": 1},
            verdicts={
                "f1": {"q1": 1, "q2": 0, "q3": f1, "q4": 1, "q6": 0},
                "strict": {"q1": 1, "q2": 0, "q3": 0},
            },
        )
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out),
        parameters={"runs": str(tmp_path / "runs" / "*"), "title": "Judges <on> fixtures"},
        kernel_name="python3",
        progress_bar=False,
        cwd=str(tmp_path),
    )
    nb = nbformat.read(out, as_version=4)
    text = "\n".join(
        str(o.get("text", ""))
        + str(o.get("data", {}).get("text/html", ""))
        + str(o.get("data", {}).get("text/plain", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert not any(
        o.get("output_type") == "error" for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )
    assert "Judges &lt;on&gt; fixtures</h1>" in text and "<h1" in text
    assert "2 run(s); judges: f1, strict, contains" in text
    assert "gwet_ac1" in text and "krippendorff_alpha" in text and "cohen_kappa" in text
    assert "The ranking of the runs CHANGES with the judge." in text
    assert "When did Tomas start cello?" in text  # a disputed question, with its context
    html = "\n".join(
        str(o.get("data", {}).get("text/html", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>x</script>" not in html  # run text escaped
