"""The compare report's kernel never imports pandas, pyarrow, pydantic (the custom benchmark format's
models), altair or jsonschema (its charts are Vega-Lite dicts there), nor scipy.optimize, and numpy only for
its uncertainty section (the cluster bootstrap); together 1 s of a report's time.

One fresh interpreter runs what notebooks/compare.ipynb's cells call, on the fixture runs, with everything
kept in polars (as the notebook does) and ``BENCH_NB_REPORT=1`` (as ``build_report`` runs it): every table's
HTML and every chart's Vega-Lite dict are built. Then it lists which of those libraries got imported. Asking for a pandas frame afterwards (``Table.data``,
``JudgeAgreement.pairwise``) still works: pandas is imported at that moment, not before.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "tests" / "fixtures" / "runs"
# scipy.optimize: 0.2 s of CPU (linear programming, spatial, fft...) for one root (metrics.power bisects instead)
HEAVY = ("pandas", "pyarrow", "numpy", "pydantic", "altair", "jsonschema", "scipy.optimize")

# What compare.ipynb's code cells call, in order (its parameters at their defaults: dataset and judges
# None, max_disputed 15, max_questions 120, no ROI tile).
KERNEL = """
import json, sys

first_import = {}  # library -> the step during which it got imported (for the failure message)

def step(name):
    for m in {HEAVY!r}:
        if m in sys.modules and m not in first_import:
            first_import[m] = name

from bench_nb import reports

reports.setup_notebook()
import bench_nb
from bench_nb import charts, tables
step("imports and setup_notebook")

out = {"tables": {}, "charts": {}, "chart_types": []}

def table(name, t):
    out["tables"][name] = t._repr_html_()
    step(f"table {name}")
    return t

def chart(name, c):
    out["charts"][name] = charts.chart_spec(c)  # the themed Vega-Lite dict
    out["chart_types"].append(type(c).__name__)
    step(f"chart {name}")

run_set = bench_nb.load_runs(reports.resolve_runs(sys.argv[1]))
questions = bench_nb.questions_df(run_set, dataset=None, backend="polars")
step("load_runs and questions_df")
reports.report_summary(questions, title="Memory provider comparison")  # prints its summary here
reports.heading("Memory provider comparison", f"{len(run_set)} runs")
step("report_summary and heading")
out["problems"] = [str(p) for p in run_set.all_problems]
memscore = table("memscore", tables.table_memscore(questions))  # the summary: leaderboard, verdicts, what to fix
settings = table("settings", tables.table_settings(run_set))  # in the summary when the runs differ
table("paired", tables.table_paired(run_set, pairs="neighbours"))
table("what_to_fix", tables.table_what_to_fix(questions))
reports.roi_tile(None, None)
table("harnesses", tables.table_harnesses(run_set))
receipts = tables.table_receipts(run_set)  # no receipts beside these runs: an empty table, and no numpy
chart("memscore", charts.chart_memscore(questions))
table("success", tables.table_success(questions))
if questions["benchmark"].n_unique() > 1:  # as the notebook: the section only over several benchmarks
    table("across_benchmarks", tables.table_across_benchmarks(questions))
table("accuracy_by_type", tables.table_accuracy_by_type(questions))
chart("accuracy_by_type", charts.chart_accuracy_by_type(questions))
chart("outcome_matrix", charts.chart_outcome_matrix(questions, max_questions=120))
table("beam", tables.table_beam(questions))  # no BEAM runs here: a note, and no numpy
if tables.has_beam(questions):
    chart("beam", charts.chart_beam(questions))
table("retrieval", tables.table_retrieval(questions))
table("latency", tables.table_latency(questions))
chart("latency", charts.chart_latency(questions))
table("tokens", tables.table_tokens(questions))
chart("context_tokens", charts.chart_context_tokens(questions))
from bench_nb.metrics.uncertainty import ClusterBootstrap

clustered = ClusterBootstrap(questions)
step("ClusterBootstrap")
table("uncertainty", tables.table_uncertainty(clustered))
chart("accuracy_intervals", charts.chart_accuracy_intervals(clustered))
table("detectable", tables.table_detectable(questions))
table("paired_all", tables.table_paired(run_set))
table("tell_apart", tables.table_tell_apart(clustered))
table("pareto", tables.table_pareto(clustered))
chart("pareto", charts.chart_pareto(clustered))
table("budget", tables.table_budget(questions))
chart("budget_latency", charts.chart_budget_curve(questions, by="latency_ms"))
chart("budget_tokens", charts.chart_budget_curve(questions, by="context_tokens"))
table("failures", tables.table_failures(questions, runs=run_set, judges=None))
judgments = bench_nb.judgments_df(run_set, dataset=None, backend="polars")
step("judgments_df")
agreement = bench_nb.judge_agreement(judgments, judges=None) if judgments["judge"].n_unique() > 1 else None
step("judge_agreement")
out["judges"] = list(agreement.judges) if agreement else []
table("agreement", tables.table_agreement(agreement))
chart("judge_kappa", charts.chart_judge_kappa(agreement))
table("disputed", tables.table_disputed(judgments, limit=15, runs=run_set))
from bench_nb.metrics.judge_quality import corrected_accuracy_table  # the notebook does, with human labels

table("corrected", tables.table_corrected(corrected_accuracy_table(run_set, judges=None, backend="polars")))
table("repeats", tables.table_repeats(questions, judgments))
reports.note("One judge graded these runs: no agreement to show.")
step("note")
replicates = tables.table_replicates(run_set)  # None: no run has judge replicates
if replicates is not None:
    table("replicates", replicates)
from bench_nb.benchmarks.errata import Errata

table("answer_key", tables.table_answer_key(Errata("locomo", {}, "no errata", ""), run_set))

out["imported"] = first_import
# Asking for pandas still gives pandas, imported now.
out["table_data"] = type(memscore.data).__module__.split(".")[0]
out["table_rows"] = len(memscore.data)
out["pairwise"] = type(agreement.pairwise).__module__.split(".")[0]
out["imported_after"] = sorted(m for m in ("pandas",) if m in sys.modules)
print("RESULT " + json.dumps(out))
""".replace("{HEAVY!r}", repr(HEAVY))


def test_notebook_calls_are_the_ones_run_here() -> None:
    # If compare.ipynb gains a table, chart or data call, this test's kernel script must make it too.
    nb = nbformat.read(REPO / "notebooks" / "compare.ipynb", as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    names = (
        r"(?:table|chart)_\w+|load_runs|questions_df|judgments_df|judge_agreement|report_summary|roi_tile"
        r"|ClusterBootstrap"
    )
    calls = set(re.findall(rf"\b({names})\(", source))
    assert len(calls) >= 20, sorted(calls)
    missing = sorted(c for c in calls if f"{c}(" not in KERNEL)
    assert not missing, f"compare.ipynb calls {missing}: add them to this test's kernel script"


def test_compare_report_kernel_imports_no_pandas_pyarrow_pydantic_altair_jsonschema_or_numpy() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", KERNEL, str(RUNS / "*")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=os.environ | {"BENCH_NB_REPORT": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    out = json.loads(line.removeprefix("RESULT "))

    # numpy arrives with the first clustered statistic, the paired table's clustered paired test (its
    # haystack sums are numpy's; the summary shows it after the leaderboard), not before: the leaderboard and
    # everything the kernel does before it stay numpy-free.
    assert out["imported"] == {"numpy": "table paired"}, (
        f"the compare report's kernel imported (library: during): {out['imported']}"
    )

    # The report was really built: three runs, two judges, every table and chart with content.
    assert out["problems"] == []
    assert sorted(out["judges"]) == ["contains", "f1"]
    for name, html in out["tables"].items():
        assert "<table" in html or "bnb-settings" in html or "bnb-readings" in html, name
    assert "No BEAM runs here" in out["tables"]["beam"]
    assert out["tables"]["memscore"].count("<tr>") == 1 + 3  # header + one row per run
    assert "Disputed questions (" in out["tables"]["disputed"]
    assert "<td>judge dispute</td>" in out["tables"]["failures"]  # the fixture runs split on some answers
    for name, spec in out["charts"].items():
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/"), name
        assert spec["datasets"] and all(spec["datasets"].values()), f"chart {name} has no data"
        assert spec["config"]["font"].startswith("Helvetica"), f"chart {name} has no theme"
    assert len(out["charts"]) == 10 and set(out["chart_types"]) == {"VegaLiteChart"}

    # pandas is still there for whoever asks for it.
    assert out["table_data"] == "pandas" and out["table_rows"] == 3
    assert out["pairwise"] == "pandas"
    assert out["imported_after"] == ["pandas"]


def test_the_report_builder_loads_jsonschema_without_its_format_checker_grammars() -> None:
    # papermill, nbformat and nbconvert import jsonschema, which compiles rfc3987_syntax's grammar at import
    # (1.5-2 s) when it is installed, as jupyterlab's dependencies install it. load_jsonschema() hides the
    # optional format checkers for that one import; they stay importable, and validation still works.
    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987_syntax is not installed: nothing to hide")
    code = """
import sys
from bench_nb.fast_imports import load_jsonschema
load_jsonschema()
import nbconvert, nbformat, papermill
hidden = sorted(m for m in ("rfc3987_syntax", "fqdn", "webcolors", "isoduration") if m in sys.modules)
import jsonschema
jsonschema.validate({"a": 1}, {"type": "object", "properties": {"a": {"type": "integer"}}})
try:
    jsonschema.validate({"a": "x"}, {"type": "object", "properties": {"a": {"type": "integer"}}})
    caught = False
except jsonschema.ValidationError:
    caught = True
import idna  # hidden only while jsonschema loaded
print(hidden, caught, idna.encode("example.org"))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True b'example.org'"


GC_PROBE = """
import gc, json, sys
full = []
gc.callbacks.append(lambda phase, info: full.append(1) if phase == "stop" and info["generation"] == 2 else None)
from bench_nb import reports
reports.setup_notebook()
print(json.dumps({"frozen": gc.get_freeze_count(), "enabled": gc.isenabled(), "full_collections": len(full),
                  "loaded": all(m in sys.modules for m in ("polars", "bench_nb.charts", "bench_nb.tables")),
                  "altair": "altair" in sys.modules}))
"""


@pytest.mark.parametrize("in_report", [True, False])
def test_a_report_kernel_imports_its_libraries_with_no_full_collection_and_freezes_them(
    in_report: bool,
) -> None:
    # In a report's kernel the imports would set off full collections over a quarter of a million objects
    # (0.1-0.3 s), and every later one would walk them again; setup_notebook() imports under a paused
    # collector and freezes what is alive. In a live kernel (JupyterLab) the collector is left as it is.
    env = {k: v for k, v in os.environ.items() if k != "BENCH_NB_REPORT"} | (
        {"BENCH_NB_REPORT": "1"} if in_report else {}
    )
    proc = subprocess.run([sys.executable, "-c", GC_PROBE], capture_output=True, text=True, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["enabled"] and out["loaded"]
    if in_report:
        assert out["frozen"] > 50_000 and out["full_collections"] == 0 and not out["altair"], out
    else:
        assert out["frozen"] == 0 and out["full_collections"] > 0 and out["altair"], out
