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
    calls = ("bench_nb", "tables.", "charts.", "reports.", "judge_quality.")  # bench_nb's modules
    assert all(any(x in c.source for x in calls) for c in nb.cells[1:] if c.cell_type == "code")


@pytest.mark.notebook
def test_executes_on_fixture_runs(make_run, tmp_path: Path) -> None:
    import papermill

    from bench_nb.judges.labels import append_label
    from bench_nb.runner.audit import write_audit_runs

    answers = {
        "q1": "Biscuit",
        "q2": "London",
        "q3": "in March 2024",
        "q4": "cello",
        "q6": "<script>x</script>",
    }
    paths = []
    for run_id, provider, f1 in (("run-a", "alpha", 0), ("run-b", "beta", 1)):
        paths.append(
            make_run(
                run_id,
                provider=provider,
                answers=answers,
                primary="contains",
                bench_nb={"k": 10},
                primary_scores={"q1": 1, "q2": 0, "q3": 1, "q4": 1, "q6": 0},
                verdicts={
                    "f1": {"q1": 1, "q2": 0, "q3": f1, "q4": 1, "q6": 0},
                    "m": {"q1": 1, "q2": 1, "q3": 1, "q4": 1, "q6": 1},
                    "m[strict]": {"q1": 1, "q2": 0, "q3": 0, "q4": f1, "q6": 0},
                },
            )
        )
    write_audit_runs(paths[0], ["contains", "f1"])
    for qid, label in (("q1", "correct"), ("q2", "incorrect"), ("q3", "correct"), ("q4", "correct")):
        append_label(paths[0], qid, label)
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
    assert not any(
        o.get("output_type") == "error" for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )
    html = "\n".join(
        str(o.get("data", {}).get("text/html", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert "Judges &lt;on&gt; fixtures</h1>" in html
    assert "2 runs · judges: f1, m, m[strict], contains · 4 human labels · 4 audit sets" in html
    verdict = html.split("<b>Verdict.</b>", 1)[1].split("</div>", 1)[0]
    # 4 human labels (3 right, 1 wrong) decide nothing: the verdict says so and takes the audit's side
    assert "Cannot tell which judge to trust from the human labels: f1 has 4 human labels" in verdict
    assert "Trust " in verdict and "from the leniency audit" in verdict
    assert "The judge prompt alone moves a run&#x27;s accuracy by up to 80.0 points" in verdict
    assert "Leniency audit: how often each judge accepts answers known to be wrong" in html
    assert "False-positive rate per question type" in html
    assert "Prompt sweep: accuracy under judge prompts of graded strictness" in html
    assert "Judges against the human labels" in html
    assert "Accuracy corrected for the judge&#x27;s errors (Rogan-Gladen)" in html
    assert "human labels" in html and "Gwet&#x27;s AC1" in html
    assert "Does the judge reward longer answers?" in html and "Answer length per run (words)" in html
    assert "When did Tomas start cello?" in html  # a disputed question, with its context
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>x</script>" not in html  # run text escaped
    assert "<pre" not in html  # no raw DataFrame dump


@pytest.mark.notebook
def test_the_compare_report_shows_corrected_accuracy_where_labels_exist(make_run, tmp_path: Path) -> None:
    from bench_nb.judges.labels import append_label
    from bench_nb.reports import build_report

    answers = {"q1": "Biscuit", "q2": "London", "q3": "in March 2024", "q4": "cello"}
    run = make_run(
        "run-l",
        answers=answers,
        primary="contains",
        bench_nb={"k": 10},
        primary_scores={"q1": 1, "q2": 0, "q3": 1, "q4": 1},
        verdicts={"f1": {"q1": 1, "q2": 0, "q3": 0, "q4": 1}},
    )
    for qid, label in (("q1", "correct"), ("q2", "incorrect"), ("q3", "correct"), ("q4", "incorrect")):
        append_label(run, qid, label)
    out = tmp_path / "compare.html"
    build_report("compare", {"runs": str(run)}, out, index=False)
    html = out.read_text()
    assert "Accuracy corrected for the judge&#x27;s errors (Rogan-Gladen)" in html  # the table's own escaping
    assert "human labels" in html
