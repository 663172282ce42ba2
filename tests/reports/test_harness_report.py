"""The compare report over other harnesses' results: Zep's grades, Mem0's results and the LoCoMo audit's two
full-context runs pair on LoCoMo's 1,540 questions; the report shows harness, judge, replicates and the answer
key's known errors, and warns loudly that the runs are not like for like."""

from __future__ import annotations

import html
import re
from itertools import combinations
from pathlib import Path

import polars as pl
import pytest

import bench_nb
from bench_nb import tables
from bench_nb.reports import build_report


@pytest.fixture(scope="module")
def sources(harness_results: Path, locomo_audit: Path) -> list[str]:
    return [
        str(harness_results / "zep" / "zep_locomo_grades.json"),
        str(harness_results / "mem0" / "results.json"),
        str(locomo_audit / "fc-baseline"),
    ]


@pytest.fixture(scope="module")
def four(sources: list[str], locomo_path: Path):  # type: ignore[no-untyped-def]
    return bench_nb.load_runs(sources, dataset=locomo_path)


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_every_pair_of_the_four_runs_pairs_1540_questions(four) -> None:  # type: ignore[no-untyped-def]
    ids = [r.run_id for r in four]
    for a, b in combinations(ids, 2):
        cmp = bench_nb.metrics.paired.paired_comparison(four, a, b)
        assert (cmp.n_pairs, cmp.n_dropped) == (1540, 0), (a, b)
        assert not cmp.like_for_like and ("judge differs" in cmp.warning or "prompt" in cmp.warning)


def test_the_harness_table_says_what_each_run_does_not_record(four) -> None:  # type: ignore[no-untyped-def]
    table = tables.table_harnesses(four)
    rows = {r["run_id"]: r for r in table.frame.iter_rows(named=True)}
    assert rows["zep_locomo_grades"]["harness"] == "zep" and rows["zep_locomo_grades"]["judge"] == "unknown"
    assert rows["gpt-4o-mini-memos"]["replicates"] == 3 and rows["mem0"]["replicates"] == 1
    assert rows["gpt-4o-mini-cot"]["answer_prompt"] == "answer_prompt_cot"
    text = _text(table.html)
    assert "not recorded by zep: latency, tokens, retrieved context" in text
    assert "not recorded by mem0" in text  # its answering model
    note = tables.not_recorded_note(four, "latency")
    # runs by their labels; none after a harness whose one run it labels
    assert note is not None and note.startswith(
        "Latency: not recorded by zep; by mem0; by evermemos (evermemos · "
    )
    assert "zep_locomo_grades" not in note


def test_answer_key_and_replicate_tables(four, locomo_audit: Path) -> None:  # type: ignore[no-untyped-def]
    key = tables.table_answer_key(locomo_audit / "errors.json", four)
    text = _text(key.html)
    assert "ceiling (perfect system) 93.57 95.72 90.07 91.90 90.63" in " ".join(text.split())
    assert "above ceiling" not in text  # no run above a ceiling (open-domain's 87/96 printed half up)
    assert "40 correct / 59 incorrect" in text  # Zep's verdicts on the 99 wrong-gold questions
    rep = tables.table_replicates(four)
    assert rep is not None
    overall = rep.frame.filter(pl.col("question_type") == "all")
    memos = overall.filter(pl.col("run_id") == "gpt-4o-mini-memos").row(0, named=True)
    assert round(memos["accuracy_mean"], 2) == 74.29 and round(memos["majority_accuracy"], 2) == 74.35


def test_the_answer_key_reads_each_question_set_against_its_own_ceiling(
    sources: list[str], locomo_path: Path, locomo_audit: Path
) -> None:
    errors = locomo_audit / "errors.json"
    zep_run = bench_nb.load_runs(sources[0], dataset=locomo_path)
    zep = bench_nb.questions_df(zep_run, dataset=locomo_path, errata=errors, backend="polars")
    sample = zep.filter(pl.col("haystack_id") == zep["haystack_id"][0]).with_columns(
        run_id=pl.lit("zep-sample"), provider=pl.lit("sample")
    )
    text = " ".join(_text(tables.table_answer_key(errors, pl.concat([sample, zep])).html).split())
    assert "ceiling (perfect system): zep 93.57 95.72 90.07 91.90 90.63" in text
    own = bench_nb.answer_key_ceiling(errors, sample, backend="polars")["ceiling"][0]
    assert f"ceiling (perfect system): sample {own:.2f}" in text
    assert "100.00 100.00 100.00" not in text


def test_the_replicate_table_from_the_judgments_frame_is_the_one_from_the_runs(four) -> None:  # type: ignore[no-untyped-def]
    from_runs = tables.table_replicates(four)
    for frame in (bench_nb.judgments_df(four, backend="polars"), bench_nb.judgments_df(four)):
        from_frame = tables.table_replicates(frame)
        assert from_runs is not None and from_frame is not None
        assert from_frame.html == from_runs.html and from_frame.frame.equals(from_runs.frame)
    assert "79.81, 79.81, 80.06" in _text(from_runs.html)


def test_the_compare_report_builds_over_the_four_imported_runs(
    sources: list[str], locomo_path: Path, locomo_audit: Path, tmp_path: Path
) -> None:
    out = tmp_path / "compare.html"
    params = {
        "runs": sources,
        "dataset": str(locomo_path),
        "errata": str(locomo_audit / "errors.json"),
        "title": "LoCoMo across harnesses",
    }
    build_report("compare", params, out, index=False)
    page = out.read_text(encoding="utf-8")
    text = " ".join(_text(page).split())
    assert "4 runs · 1540 questions" in text
    assert "Not like for like: judge differs: zep=unknown (zep), mem0=unknown (mem0)" in text
    assert (
        "answer prompt differs" in text
        and "evermemos · gpt-4o-mini-cot=cot, evermemos · gpt-4o-mini-memos=memos" in text
    )
    assert "Harnesses and judges" in text and "not recorded by evermemos: latency, tokens" in text
    assert "Latency: not recorded by zep; by mem0" in text
    assert "Judge replicates" in text and "79.81, 79.81, 80.06" in text
    assert "The answer key's known errors" in text and "93.57" in text
    # Paired tests: every pair on the same 1,540 questions.
    assert len(re.findall(r"vs (?:evermemos · )?[\w.-]+ (?:not like for like )?1540 ", text)) >= 6
    # EverMemOS's runs: provider evermemos, run id kept; its token totals at run level, never per question
    assert "evermemos · gpt-4o-mini-cot" in text and "38,354,838 input, 845,277 output" in text
    assert (
        "by evermemos, which states run totals only (evermemos · gpt-4o-mini-cot, evermemos · gpt-4o-mini-memos)"
        in text
    )
