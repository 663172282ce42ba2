"""The run-settings table: one line when the compared runs share k, prompts, judge and question set, a loud
warning per difference when they do not (in the table and in the built compare report)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench_nb import tables
from bench_nb.models.prompt import answer_prompt_hash
from bench_nb.runformat.load import read_run
from bench_nb.runformat.spec import question_set_hash, read_spec
from synthetic_runs import CUSTOM_JUDGE_PROMPT_HASH, write_synthetic_run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
# The fixtures were written before context formats had versions: the answer prompt hash of format 1.
RECORDED_PROMPT = answer_prompt_hash(context_format=1)


def _edit_settings(run: Path, **changes: object) -> None:
    path = run / "checkpoint.json"
    ck = json.loads(path.read_text())
    ck["benchNb"].update(changes)
    path.write_text(json.dumps(ck))


def test_runs_that_agree_read_as_one_line() -> None:
    t = tables.table_settings(str(FIXTURES / "*"))
    ids = json.loads((FIXTURES / "synthetic-sqlite" / "checkpoint.json").read_text())["targetQuestionIds"]
    line = (
        "All 3 runs (full-context, no-memory, sqlite): k=10, answerer extractive, "
        f"answer prompt {RECORDED_PROMPT[:12]}, judge f1 (no prompt), "
        f"question set {question_set_hash(ids)[:12]} ({len(ids)} questions); "
        f"settings fingerprint {read_spec(read_run(FIXTURES / 'synthetic-sqlite')).fingerprint}"
    )
    assert t.warnings == ()
    assert t.data["settings_fingerprint"].nunique() == 1
    # k is the limit asked for: what each run returned follows (the synthetic runs return fewer)
    assert (
        f'<div class="bnb-settings">{line}; results returned per question (k is the limit asked for): '
        in t.html
    )
    body = t.html.split("</style>", 1)[1]
    assert "bnb-warning" not in body and "<table" not in body
    assert t.data["provider"].tolist() == ["full-context", "no-memory", "sqlite"]
    assert t.data["other_judges"].tolist() == ["contains"] * 3


def test_runs_that_differ_get_a_warning_per_difference_and_a_table(tmp_path: Path) -> None:
    a = write_synthetic_run(tmp_path, "sqlite")
    b = write_synthetic_run(tmp_path, "full-context", run_id="cloud-mem0")
    _edit_settings(b, k=30, promptHashes={"answer": "0123456789abcdef"})
    t = tables.table_settings([a, b])
    assert tables.settings_line(tables.run_settings([a, b])) is None
    assert (
        t.warnings
        == (
            "Not like for like: retrieval limit k differs: sqlite=10, full-context=30.",  # runs by their labels
            f"Not like for like: answer prompt differs: sqlite={answer_prompt_hash()[:12]}, "
            "full-context=0123456789ab.",  # hashes cut to 12 hex digits, as the settings line shows them
        )
    )
    assert 'title="cloud-mem0"' in t.html  # the full run id as the run cell's tooltip
    body = t.html.split("</style>", 1)[1]
    assert body.count('class="bnb-warning"') == 2 and "bnb-settings" not in body
    assert "Run settings: NOT like for like" in body
    assert '<td class="num">30</td>' in body and '<td class="num">10</td>' in body
    assert "extractive (0123456789ab)" in body and f"extractive ({answer_prompt_hash()[:12]})" in body


def test_a_different_judge_prompt_is_a_difference_too(tmp_path: Path) -> None:
    a = write_synthetic_run(tmp_path, "sqlite")
    b = write_synthetic_run(tmp_path, "full-context", custom_prompt=True)
    t = tables.table_settings([a, b])
    assert (
        "Not like for like: judge prompt differs: sqlite=(not recorded), "
        f"full-context={CUSTOM_JUDGE_PROMPT_HASH[:12]}."
    ) in t.warnings
    assert [w for w in t.warnings if w.startswith("Not like for like: custom prompt")] == [
        "Not like for like: custom prompt: full-context used a provider's own prompt, "
        "not graded like the others."
    ]
    assert '<span class="bnb-flag">provider&#x27;s own prompt</span>' in t.html
    assert f"f1 ({CUSTOM_JUDGE_PROMPT_HASH[:12]})" in t.html


def test_a_memorybench_run_records_no_k_and_no_prompts(tmp_path: Path) -> None:
    a = write_synthetic_run(tmp_path, "sqlite")
    ids = json.loads((a / "checkpoint.json").read_text())["targetQuestionIds"]
    shared = tmp_path / "mb-supermemory"
    shared.mkdir()
    report = {
        "runId": "mb-supermemory",
        "provider": "supermemory",
        "benchmark": "sample",
        "judge": "gpt-4o",
        "answeringModel": "gpt-4o",
        "evaluations": [{"questionId": q, "score": 1, "label": "correct"} for q in ids],
    }
    (shared / "report.json").write_text(json.dumps(report))
    settings = {s.run_id: s for s in tables.run_settings([a, shared])}
    assert settings["mb-supermemory"].k is None and settings["mb-supermemory"].answer_prompt is None
    assert settings["mb-supermemory"].question_set == settings["synthetic-sqlite"].question_set
    t = tables.table_settings([a, shared])
    assert any("retrieval limit k differs: sqlite=10, supermemory=(not recorded)" in w for w in t.warnings)
    assert "not recorded" in t.html.split("</style>", 1)[1]


def test_run_text_in_the_settings_is_escaped(tmp_path: Path) -> None:
    a = write_synthetic_run(tmp_path, "sqlite")
    path = a / "checkpoint.json"
    ck = json.loads(path.read_text())
    ck["provider"] = '<script>alert("x")</script>'
    path.write_text(json.dumps(ck))
    t = tables.table_settings([a])
    assert "<script>alert" not in t.html
    assert "The run (&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;): k=10" in t.html


@pytest.mark.notebook
def test_the_compare_report_warns_loudly_when_runs_differ(tmp_path: Path) -> None:
    from bench_nb.reports import build_report

    a = write_synthetic_run(tmp_path / "runs", "sqlite", n_questions=40)
    b = write_synthetic_run(tmp_path / "runs", "full-context", n_questions=40)
    _edit_settings(b, k=30)
    built = build_report("compare", {"runs": [str(a), str(b)]}, tmp_path / "compare.html", index=False)
    page = built.path.read_text()
    assert "Run settings: NOT like for like" in page
    assert "Not like for like: retrieval limit k differs: sqlite=10, full-context=30." in page
    # said once, in the summary: the paired table flags the pair, the settings section points up (issue 37)
    assert page.count("Not like for like: retrieval limit k differs") == 1
    assert len(re.findall(r'class="bnb-warning">[^<]*k differs', page)) == 1
    assert "their settings are in the summary above" in page
    assert page.count("not like for like</span>") == 2  # the pair flagged in the summary and in its section
    assert 'class="bnb-settings"' not in page


def test_several_runs_of_one_provider_are_told_apart(tmp_path: Path) -> None:
    a = write_synthetic_run(tmp_path, "sqlite", run_id="sqlite-k10")
    b = write_synthetic_run(tmp_path, "sqlite", run_id="sqlite-k5")
    c = write_synthetic_run(tmp_path, "full-context")
    _edit_settings(b, k=5)
    body = tables.table_settings([a, b, c]).html.split("</style>", 1)[1]
    assert (
        'title="sqlite-k10">sqlite · sqlite-k10<' in body and 'title="sqlite-k5">sqlite · sqlite-k5<' in body
    )
    assert 'title="synthetic-full-context">full-context<' in body  # one run of its provider: its name alone
    d = write_synthetic_run(tmp_path, "sqlite", run_id="sqlite-again")
    line = tables.settings_line(tables.run_settings([a, d]))
    assert line is not None and line.startswith("All 2 runs (sqlite · sqlite-k10, sqlite · sqlite-again)")
