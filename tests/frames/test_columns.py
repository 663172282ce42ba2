"""The frames' column tables (frames/columns.py): the frames built from real runs have exactly their table's
columns, in order, with its dtypes; a ``run`` column has one value per run; docs/frames.md is what the
tables generate."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from bench_nb import load_errata, load_runs
from bench_nb.frames import columns
from bench_nb.frames.columns import (
    FAILURES,
    FRAMES,
    HARNESSES,
    HITS,
    JUDGMENTS,
    QUESTIONS,
    RUNS,
    SOURCES,
    STORE_RUNS,
)
from bench_nb.frames.harnesses import harness_frame
from bench_nb.frames.judgments import judgments_frame
from bench_nb.frames.questions import questions_frame, runs_frame
from bench_nb.frames.store import export_runs, hits_frame, open_store
from bench_nb.metrics.failures import failure_reasons_frame

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "runs"
PAGE = REPO / "docs" / "frames.md"


def _assert_declared(frame: pl.DataFrame, table: columns.Frame) -> None:
    """Exactly the table's columns, in its order, with its dtypes."""
    assert frame.columns == list(table.schema()), table.name
    assert frame.schema == pl.Schema(table.schema()), table.name


def _assert_run_columns_constant(frame: pl.DataFrame, table: columns.Frame) -> None:
    """What the table says comes from the run has one value per run."""
    names = [c for c in table.schema("run") if c != "run_id"]
    assert names, table.name
    per_run = frame.group_by("run_id").agg(pl.col(names).n_unique())
    assert not per_run.is_empty()
    for name in names:
        assert per_run[name].max() == 1, f"{table.name}.{name} varies within a run"


def test_frames_of_the_fixture_runs_have_exactly_their_tables_columns(tmp_path: Path) -> None:
    runs = load_runs(FIXTURES)
    assert len(runs) == 3
    questions = questions_frame(runs)
    assert len(questions) == 150
    built = {
        QUESTIONS: questions,
        RUNS: runs_frame(runs),
        JUDGMENTS: judgments_frame(runs),
        HARNESSES: harness_frame(runs),
        HITS: hits_frame(runs, questions),
        FAILURES: failure_reasons_frame(runs),
    }
    for table, frame in built.items():
        assert not frame.is_empty(), table.name
        _assert_declared(frame, table)
        if len(table.schema("run")) > 1:
            _assert_run_columns_constant(frame, table)
    # no errata given: the errata columns are there and null
    assert questions.select(list(QUESTIONS.schema("errata"))).null_count().row(0) == (150, 150, 150)
    # and the run store's tables: the same columns read back from Parquet, the runs table with the store's own
    export_runs(FIXTURES, tmp_path / "store")
    store = open_store(tmp_path / "store")
    _assert_declared(store.runs, _joined(RUNS, STORE_RUNS))
    for table, scan in ((QUESTIONS, store.questions), (JUDGMENTS, store.judgments), (HITS, store.hits)):
        _assert_declared(scan.collect(), table)


def _joined(first: columns.Frame, then: columns.Frame) -> columns.Frame:
    return columns.Frame("runs.parquet", "", first.groups + then.groups, "")


def test_frames_of_no_run_have_every_column() -> None:
    for table, frame in (
        (QUESTIONS, questions_frame([])),
        (RUNS, runs_frame([])),
        (JUDGMENTS, judgments_frame([])),
        (HARNESSES, harness_frame([])),
    ):
        assert frame.is_empty()
        _assert_declared(frame, table)


def test_a_report_only_run_has_the_same_columns(tmp_path: Path, mb_example: Path) -> None:
    run = tmp_path / "shared"
    run.mkdir()
    shutil.copy(mb_example / "expected" / "report.json", run / "report.json")
    frame = questions_frame(run)
    assert set(frame["source"]) == {"report"} and len(frame) == 19
    _assert_declared(frame, QUESTIONS)
    _assert_run_columns_constant(frame, QUESTIONS)
    _assert_declared(runs_frame(run), RUNS)
    _assert_declared(judgments_frame(run), JUDGMENTS)


def test_an_imported_run_with_errata_has_the_same_columns(locomo_audit: Path) -> None:
    runs = load_runs(locomo_audit / "fc-baseline" / "gpt-4o-mini-memos")
    frame = questions_frame(runs, errata=load_errata(locomo_audit / "errors.json"))
    _assert_declared(frame, QUESTIONS)
    _assert_run_columns_constant(frame, QUESTIONS)
    # the errata's columns are filled where the errata list the question (99 wrong gold answers among them)
    assert frame["gold_error_type"].drop_nulls().len() > 0 and frame["gold_wrong"].sum() == 99
    harnesses = harness_frame(runs)
    _assert_declared(harnesses, HARNESSES)
    assert harnesses["imported"].to_list() == [True]


def test_every_table_is_well_formed() -> None:
    for table in FRAMES:
        names = [c.name for c in table.columns]
        assert len(set(names)) == len(names), f"{table.name} declares a column twice"
        for column in table.columns:
            assert column.source in SOURCES, f"{table.name}.{column.name}: unknown source {column.source!r}"
            assert column.description.strip(), f"{table.name}.{column.name} has no description"
            assert isinstance(column.dtype, pl.DataType | type), column.name
    assert set(QUESTIONS.schema("errata")) == {"gold_error_type", "gold_corrected", "gold_wrong"}


def test_docs_frames_md_is_what_the_tables_generate() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert columns.generated_part(page) == columns.markdown(), (
        "docs/frames.md differs from frames/columns.py: run `python -m bench_nb.frames.columns --write "
        "docs/frames.md`"
    )
    for table in FRAMES:  # each column is listed, by name, under its frame
        section = page.split(f"### `{table.name}`", 1)[1].split("\n### ", 1)[0]
        rows = [line.split("|") for line in section.splitlines() if line.startswith("| ")]
        listed = [cells[2].strip().strip("`") for cells in rows[1:]]  # after the header
        assert listed == list(table.schema()), table.name


def test_write_replaces_only_the_generated_part(tmp_path: Path) -> None:
    page = tmp_path / "frames.md"
    page.write_text(f"# Intro\n\nkept\n\n{columns.BEGIN}\nstale list\n{columns.END}\n\nkept too\n")
    assert columns.main(["--write", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("# Intro\n\nkept\n\n") and text.endswith(f"{columns.END}\n\nkept too\n")
    assert "stale list" not in text and columns.generated_part(text) == columns.markdown()
    assert columns.main(["--write", str(page)]) == 0 and page.read_text() == text  # idempotent
    page.write_text("no markers")
    with pytest.raises(ValueError, match=r"frames\.md lacks the generated columns' markers"):
        columns.main(["--write", str(page)])


@pytest.mark.parametrize(
    "name",
    [
        "accuracy_by_type",
        "success_rate",
        "memscore",
        "latency_stats",
        "retrieval_summary",
        "pareto_frontier",
        "accuracy_intervals",
        "rank_intervals",
        "budget_curve",
        "lafs",
        "beam_scores",
    ],
)
def test_a_table_function_s_docstring_names_every_column_it_returns(name: str) -> None:
    """``help(bench_nb.NAME)`` lists the columns the table has (the *_df frames, failure_reasons and
    disputed_questions point to the generated lists above instead): accuracy_by_type named none,
    memscore ended its list in "...", retrieval_summary said "the six means"."""
    import inspect
    import re

    import bench_nb

    function = getattr(bench_nb, name)
    questions = questions_frame(sorted(FIXTURES.iterdir()))
    doc = inspect.getdoc(function) or ""
    missing = [
        c for c in function(questions).columns if not re.search(rf"(?<![\w]){re.escape(c)}(?![\w])", doc)
    ]
    assert missing == [], f"{name}'s docstring does not name {missing}"
