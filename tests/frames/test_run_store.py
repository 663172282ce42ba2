"""The columnar run store: export to Parquet, read back lazily, the same frames as from run directories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

import bench_nb as bn
from bench_nb.cli import cli
from bench_nb.errors import RunFormatError
from bench_nb.frames import store as store_mod
from bench_nb.frames.store import StoredRuns, export_runs, open_store
from needs import need

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
RUN_IDS = ["synthetic-full-context", "synthetic-no-memory", "synthetic-sqlite"]


def _assert_same_frames(stored: StoredRuns, sources: object) -> None:
    """questions_df, judgments_df, runs_df, memscore and per-type accuracy: equal, dtypes included."""
    for name in ("questions_df", "judgments_df", "runs_df", "memscore", "accuracy_by_type"):
        got = getattr(bn, name)(stored, backend="polars")
        want = getattr(bn, name)(sources, backend="polars")
        assert got.schema == want.schema, name
        assert_frame_equal(got, want, check_row_order=True), name


@pytest.fixture
def runs_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "runs"
    shutil.copytree(FIXTURES, dest)
    return dest


def test_fixture_runs_round_trip_to_the_same_frames(tmp_path: Path) -> None:
    result = export_runs(FIXTURES, tmp_path / "store")
    assert sorted(result.written) == RUN_IDS and result.unchanged == [] and result.problems == []
    stored = bn.load_runs(tmp_path / "store")
    assert isinstance(stored, StoredRuns)
    assert stored.run_ids == RUN_IDS
    assert len(bn.questions_df(stored, backend="polars")) == 150
    _assert_same_frames(stored, FIXTURES)


def test_search_hits_table_holds_every_result_in_rank_order(tmp_path: Path) -> None:
    export_runs(FIXTURES / "synthetic-sqlite", tmp_path / "store")
    hits = bn.load_runs(tmp_path / "store").hits.collect()
    runs = bn.load_runs(FIXTURES / "synthetic-sqlite")
    from bench_nb.frames.judgments import search_hits

    qid = hits["question_id"][0]
    raw = search_hits(runs[0], qid)
    assert len(raw) > 2 and search_hits(runs[0], qid, 2) == raw[:2]  # only the first two decoded
    mine = hits.filter(pl.col("question_id") == qid).sort("rank")
    assert mine["rank"].to_list() == list(range(1, len(raw) + 1))
    assert [json.loads(r) for r in mine["raw"]] == raw
    assert (hits["run_id"] == "synthetic-sqlite").all()


def test_search_hits_of_a_question_that_found_nothing_read_no_results_file(tmp_path: Path) -> None:
    # issue 41: the checkpoint's empty results (no-memory's every question) are the results; the file would
    # repeat them (a report looked for, and read, one file per such wrong answer)
    from bench_nb.frames.judgments import search_hits
    from bench_nb.runformat.format import result_file_name

    run_dir = tmp_path / "synthetic-no-memory"
    shutil.copytree(FIXTURES / "synthetic-no-memory", run_dir)
    (run,) = bn.load_runs(run_dir)
    assert run.checkpoint is not None
    qid = next(q for q, v in run.checkpoint.questions.items() if v.phases.search.results == [])
    (run_dir / "results").mkdir()
    stale = {"questionId": qid, "results": [{"content": "not what the checkpoint holds"}]}
    (run_dir / "results" / result_file_name(qid)).write_text(json.dumps(stale))
    assert search_hits(run, qid) == [] and search_hits(run, qid, 1) == []


def test_locomo_run_round_trips(tmp_path: Path, locomo_audit: Path) -> None:
    run_dir = locomo_audit / "fc-baseline" / "gpt-4o-mini-cot"
    export_runs(run_dir, tmp_path / "store")
    stored = bn.load_runs(tmp_path / "store")
    assert stored.run_ids == ["gpt-4o-mini-cot"]
    _assert_same_frames(stored, run_dir)
    assert len(bn.questions_df(stored, backend="polars")) > 1000


def test_export_is_incremental_and_replaces_only_changed_runs(tmp_path: Path, runs_copy: Path) -> None:
    store = tmp_path / "store"
    export_runs(runs_copy, store)
    before = open_store(store).runs.select("run_id", "version").rows()
    again = export_runs(runs_copy, store)
    assert again.written == [] and sorted(again.unchanged) == RUN_IDS

    # Change one run: drop its judge's verdict lines for a different file content.
    judgments = runs_copy / "synthetic-sqlite" / "judgments.jsonl"
    lines = judgments.read_text().splitlines()
    judgments.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    third = export_runs(runs_copy, store)
    assert third.written == ["synthetic-sqlite"] and sorted(third.unchanged) == RUN_IDS[:2]
    after = dict(open_store(store).runs.select("run_id", "version").rows())
    for run_id, version in before:
        assert (after[run_id] == version) == (run_id != "synthetic-sqlite")
    # The old version's files are gone; one file per table per run remains.
    for table, suffix in (
        ("questions", "parquet"),
        ("judgments", "parquet"),
        ("hits", "parquet"),
        ("settings", "json"),
    ):
        assert [p.name for p in (store / table / "run=synthetic-sqlite").iterdir()] == [
            f"{after['synthetic-sqlite']}.{suffix}"
        ]
    _assert_same_frames(bn.load_runs(store), runs_copy)


def test_a_crash_before_the_commit_leaves_the_previous_version_current(
    tmp_path: Path, runs_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    export_runs(runs_copy, store)
    old = bn.questions_df(bn.load_runs(store), backend="polars")
    checkpoint = runs_copy / "synthetic-sqlite" / "checkpoint.json"
    ck = json.loads(checkpoint.read_text())
    ck["provider"] = "sqlite-changed"
    checkpoint.write_text(json.dumps(ck))

    def crash(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # the process stops after the new files, before runs.parquet moves

    monkeypatch.setattr(store_mod, "_commit_runs_table", crash)
    with pytest.raises(KeyboardInterrupt):
        export_runs(runs_copy, store)
    monkeypatch.undo()
    assert len(list((store / "questions" / "run=synthetic-sqlite").iterdir())) == 2  # new files written
    assert_frame_equal(bn.questions_df(bn.load_runs(store), backend="polars"), old)  # ...but not current

    result = export_runs(runs_copy, store)
    assert result.written == ["synthetic-sqlite"]
    assert len(list((store / "questions" / "run=synthetic-sqlite").iterdir())) == 1  # orphans deleted
    new = bn.questions_df(bn.load_runs(store, runs=["synthetic-sqlite"]), backend="polars")
    assert set(new["provider"]) == {"sqlite-changed"}


def test_selecting_runs_reads_only_their_partitions(tmp_path: Path) -> None:
    store = tmp_path / "store"
    export_runs(FIXTURES, store)
    # Remove the other runs' files: a selection must not need them.
    for table in ("questions", "judgments", "hits"):
        for key in ("synthetic-full-context", "synthetic-no-memory"):
            shutil.rmtree(store / table / f"run={key}")
    picked = bn.load_runs(store, runs=["synthetic-sqlite", "synthetic-no-memory"][:1])
    assert picked.run_ids == ["synthetic-sqlite"]
    _assert_same_frames(picked, FIXTURES / "synthetic-sqlite")
    # A lazy filter over the whole store pushes down too (no error for the missing runs' files would be
    # possible otherwise only if it never opened them: here they are gone, so scan the selection).
    lazy = picked.questions.filter(pl.col("correct")).select("question_id")
    assert lazy.collect().height == int(
        bn.questions_df(FIXTURES / "synthetic-sqlite", backend="polars")["correct"].sum()
    )


def test_unknown_run_id_and_non_store_errors_name_them(tmp_path: Path) -> None:
    store = tmp_path / "store"
    export_runs(FIXTURES / "synthetic-sqlite", store)
    with pytest.raises(RunFormatError, match="no run 'nope' in the store"):
        bn.load_runs(store, runs=["nope"])
    with pytest.raises(ValueError, match="runs= selects runs of a run store"):
        bn.load_runs(FIXTURES, runs=["synthetic-sqlite"])
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "file.txt").write_text("x")
    with pytest.raises(RunFormatError, match="not empty and not a run store"):
        export_runs(FIXTURES, tmp_path / "other")
    with pytest.raises(ValueError, match="dataset cannot be applied"):
        bn.questions_df(bn.load_runs(store), dataset="x.json")


def test_settings_and_like_for_like_checks_read_the_runs_table(tmp_path: Path, locomo_audit: Path) -> None:
    from bench_nb.tables.settings import table_settings

    imported = locomo_audit / "fc-baseline" / "gpt-4o-mini-cot"
    store = tmp_path / "store"
    export_runs([FIXTURES, imported], store)
    for picked in (RUN_IDS, RUN_IDS[:1], [*RUN_IDS[1:], "gpt-4o-mini-cot"]):
        stored = bn.load_runs(store, runs=picked)
        dirs = [FIXTURES / r if r in RUN_IDS else imported for r in picked]
        assert bn.runformat.check_like_for_like(stored) == bn.runformat.check_like_for_like(dirs)
        got, want = table_settings(stored), table_settings(dirs)
        assert got.warnings == want.warnings
        pd.testing.assert_frame_equal(got.data, want.data)
        assert got._repr_html_() == want._repr_html_()
    assert (
        bn.runformat.check_like_for_like(bn.load_runs(store, runs=RUN_IDS)) == []
    )  # the fixtures: like for like
    mixed = bn.load_runs(store, runs=[RUN_IDS[0], "gpt-4o-mini-cot"])
    assert bn.runformat.check_like_for_like(
        mixed
    )  # a sample run beside a LoCoMo one: the differences are named


def test_paired_comparisons_and_disputed_questions_of_a_store_equal_the_run_directories(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    export_runs(FIXTURES, store)
    picked = ["synthetic-sqlite", "synthetic-no-memory", "synthetic-full-context"]  # not in run-id order
    stored = bn.load_runs(store, runs=picked)
    dirs = bn.load_runs([FIXTURES / r for r in picked])
    got = bn.metrics.paired.paired_comparison(
        stored, "synthetic-sqlite", "synthetic-no-memory", backend="polars"
    )
    want = bn.metrics.paired.paired_comparison(
        dirs, "synthetic-sqlite", "synthetic-no-memory", backend="polars"
    )
    assert got.as_dict() == want.as_dict() and got.n_pairs > 40
    assert_frame_equal(got.by_type, want.by_type)
    for judge in (None, "contains"):
        assert_frame_equal(
            bn.metrics.paired.paired_comparisons(stored, judge=judge, by_type=True, backend="polars"),
            bn.metrics.paired.paired_comparisons(dirs, judge=judge, by_type=True, backend="polars"),
        )
    disputed = bn.disputed_questions(stored, n_hits=2, backend="polars")
    assert len(disputed) > 0 and (disputed["context"] != "").any()  # from the hits table
    assert_frame_equal(disputed, bn.disputed_questions(dirs, n_hits=2, backend="polars"))
    judgments = bn.judgments_df(stored, backend="polars")
    assert_frame_equal(
        bn.disputed_questions(judgments, runs=stored, backend="polars"),
        bn.disputed_questions(bn.judgments_df(dirs, backend="polars"), runs=dirs, backend="polars"),
    )


def test_retrieved_texts_of_a_store_are_the_run_directories_in_rank_order(tmp_path: Path) -> None:
    from bench_nb.frames.judgments import retrieved_texts, retrieved_texts_of

    export_runs(FIXTURES, tmp_path / "store")
    stored = bn.load_runs(tmp_path / "store")
    dirs = bn.load_runs(FIXTURES)
    keys = bn.questions_df(stored, backend="polars").select("run_id", "question_id")[::7]
    keys = pl.concat([keys, pl.DataFrame({"run_id": ["synthetic-sqlite"], "question_id": ["no-such-q"]})])
    for n_hits in (None, 1, 3):
        got = retrieved_texts_of(stored, keys, n_hits)
        assert got == retrieved_texts_of(dirs, keys, n_hits)
    by_id = {run.run_id: run for run in dirs}
    want = [retrieved_texts(by_id[r], q, n_hits=10_000) for r, q in keys.iter_rows()]
    assert retrieved_texts_of(stored, keys) == want and want[-1] == [] and any(len(t) > 1 for t in want)


def test_harness_records_of_a_store_equal_the_run_directories(tmp_path: Path, locomo_audit: Path) -> None:
    from bench_nb.tables import not_recorded_note, shows_harnesses, table_harnesses

    imported = locomo_audit / "fc-baseline" / "gpt-4o-mini-cot"
    store = tmp_path / "store"
    export_runs([FIXTURES, imported], store)
    for picked in (RUN_IDS, ["synthetic-sqlite", "gpt-4o-mini-cot"]):
        stored = bn.load_runs(store, runs=picked)
        dirs = bn.load_runs([FIXTURES / r if r in RUN_IDS else imported for r in picked])
        assert shows_harnesses(stored) == shows_harnesses(dirs) == ("gpt-4o-mini-cot" in picked)
        got, want = table_harnesses(stored), table_harnesses(dirs)
        pd.testing.assert_frame_equal(got.data, want.data)
        assert got._repr_html_() == want._repr_html_()
        for what in ("latency", "tokens", "retrieved context"):
            assert not_recorded_note(stored, what) == not_recorded_note(dirs, what)
    note = not_recorded_note(bn.load_runs(store), "latency")
    assert (
        note is not None and "by evermemos" in note and "gpt-4o-mini-cot" not in note
    )  # its one run's label


def test_what_needs_checkpoints_says_so(tmp_path: Path) -> None:
    store = tmp_path / "store"
    export_runs(FIXTURES, store)
    stored = bn.load_runs(store)
    with pytest.raises(RunFormatError, match=r"not their checkpoints.*explorer.*run_path"):
        list(stored)


def test_store_on_an_fsspec_memory_filesystem() -> None:
    import importlib.util

    need(
        importlib.util.find_spec("fsspec") is not None,
        "fsspec is not installed (it comes with the mem0 extra: pip install -e '.[mem0]')",
        env="BENCH_NB_REQUIRE_EXTRAS",
    )
    import fsspec

    fs = fsspec.filesystem("memory")
    root = "/bench-nb-test-store"
    if fs.exists(root):
        fs.rm(root, recursive=True)
    result = export_runs(FIXTURES, root, filesystem=fs)
    assert sorted(result.written) == RUN_IDS
    assert fs.exists(f"{root}/runs.parquet")
    assert fs.ls(f"{root}/questions")  # partition folders, in memory
    stored = bn.load_runs(root, filesystem=fs)
    _assert_same_frames(stored, FIXTURES)
    assert export_runs(FIXTURES, root, filesystem=fs).written == []
    fs.rm(root, recursive=True)


def test_hive_layout_is_readable_without_bench_nb(tmp_path: Path) -> None:
    store = tmp_path / "store"
    export_runs(FIXTURES, store)
    raw = pl.scan_parquet(store / "questions" / "*" / "*.parquet", hive_partitioning=True)
    counts = dict(raw.group_by("run").len().collect().rows())
    assert counts == {"synthetic-full-context": 50, "synthetic-no-memory": 50, "synthetic-sqlite": 50}


def test_cli_export(tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["export", str(FIXTURES), "--to", str(tmp_path / "store")])
    assert out.exit_code == 0, out.output
    assert "3 run(s) written, 0 unchanged" in out.output
    out = runner.invoke(cli, ["export", str(FIXTURES / "synthetic-sqlite"), "--to", str(tmp_path / "store")])
    assert "0 run(s) written, 1 unchanged" in out.output
    out = runner.invoke(cli, ["export", str(tmp_path / "missing"), "--to", str(tmp_path / "store")])
    assert out.exit_code != 0
    assert "no such file or directory" in out.output


def test_the_store_keeps_every_setting_read_spec_reads(tmp_path: Path) -> None:
    from bench_nb.runformat.load import read_run
    from bench_nb.runformat.spec import read_spec
    from bench_nb.runner import run_benchmark

    run = run_benchmark(
        "sqlite", "sample", k=4, limit=2, isolate_per_question=True, run_id="inv", runs_dir=tmp_path / "runs"
    )
    export_runs([run.run_dir], tmp_path / "store")
    (stored,) = bn.load_runs(tmp_path / "store").recorded_settings()
    want = read_spec(read_run(run.run_dir))
    assert want.invocation is not None and want.invocation.limit == 2 and want.isolate_per_question is True
    assert stored == want  # the fields runs are not compared on too (invocation, isolation)


def test_a_store_written_before_runspec_reads_the_same_settings() -> None:
    """``old_store_settings.json``: what the store wrote for ``old_runs/finished`` at f68832f."""
    import msgspec

    from bench_nb.frames.store import _settings_from_json
    from bench_nb.runformat.load import read_run
    from bench_nb.runformat.spec import read_spec

    fixtures = Path(__file__).parents[1] / "fixtures"
    spec, harness = _settings_from_json((fixtures / "old_store_settings.json").read_text())
    # what that store did not keep: the record's version, the tokenizer and the evidence level
    want = msgspec.structs.replace(
        read_spec(read_run(fixtures / "old_runs" / "finished")),
        version=None,
        tokenizer=None,
        evidence_level=None,
    )
    assert spec == want
    assert spec.fingerprint == "f794deb601e1" and harness["run_id"] == "finished"


def test_reading_a_local_store_imports_no_pyarrow(tmp_path: Path) -> None:
    # A report over a local store reads it with polars alone (pyarrow's import is half a second or more).
    import subprocess
    import sys

    export_runs(FIXTURES, tmp_path / "store")
    script = (
        "import sys, bench_nb as bn\n"
        f"s = bn.load_runs({str(tmp_path / 'store')!r}, runs=['synthetic-sqlite', 'synthetic-no-memory'])\n"
        "q = bn.questions_df(s, backend='polars')\n"
        "bn.memscore(q, backend='polars'); bn.judgments_df(s, backend='polars'); s.recorded_settings()\n"
        "bn.disputed_questions(s, backend='polars')\n"
        "print(len(q), 'pyarrow' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["100", "False"]


def test_a_store_written_before_judgments_carried_haystacks_still_compares_over_haystacks(
    tmp_path: Path, make_run
) -> None:
    """A store exported before judgments_df had ``haystack_id``: the column reads as null, and a paired
    comparison with ``judge=`` takes each question's haystack from the stored questions (it would otherwise
    make every question its own cluster)."""
    answers = dict.fromkeys(("q1", "q2", "q3", "q4", "q5", "q6"), "x")
    hay = {"q1": "h1", "q2": "h1", "q3": "h2", "q4": "h2", "q5": "h3", "q6": "h3"}
    runs = [
        make_run(
            run,
            answers=answers,
            bench_nb={},
            haystacks=hay,
            verdicts={"strict": dict(zip(answers, s, strict=True))},
        )
        for run, s in (("a", [1, 1, 1, 1, 1, 1]), ("b", [0, 1, 0, 1, 0, 1]))
    ]
    store = tmp_path / "store"
    export_runs(runs, store)
    for path in (store / "judgments").rglob("*.parquet"):
        pl.read_parquet(path).drop("haystack_id").write_parquet(path)
    stored = bn.load_runs(store)
    assert bn.judgments_df(stored, backend="polars")["haystack_id"].is_null().all()
    got = bn.metrics.paired.paired_comparison(stored, "a", "b", judge="strict")
    assert got.as_dict() == bn.metrics.paired.paired_comparison(runs, "a", "b", judge="strict").as_dict()
    assert (got.n_pairs, got.clusters, got.p_value) == (6, 3, 0.25)  # haystacks, not questions


def test_runs_table_is_rewritten_as_one_chunk_not_one_a_run(tmp_path: Path, monkeypatch) -> None:
    # issue 41: the runs table, grown by pl.concat after each run and rewritten every time, held one chunk
    # per run, so writing it cost more with every run (0.76 s at 1,000 chunks, 0.005 s rechunked)
    real, chunks = store_mod._commit_runs_table, []

    def counted(fs, root, runs):
        chunks.append(runs.n_chunks())
        return real(fs, root, runs)

    monkeypatch.setattr(store_mod, "_commit_runs_table", counted)
    export_runs(FIXTURES, tmp_path / "store")
    assert len(chunks) == len(RUN_IDS) and set(chunks) == {1}
    assert bn.load_runs(tmp_path / "store").run_ids == RUN_IDS


def test_a_run_id_with_a_typo_names_the_nearest_and_the_store_s_runs(tmp_path: Path) -> None:
    """``load_runs(store, runs=["synthetic-sqlit"])`` said only "no run 'synthetic-sqlit' in the store"."""
    store = tmp_path / "store"
    export_runs(sorted(FIXTURES.iterdir()), store)
    with pytest.raises(RunFormatError) as raised:
        bn.load_runs(store, runs=["synthetic-sqlit"])
    assert str(raised.value).endswith(
        "no run 'synthetic-sqlit' in the store (did you mean 'synthetic-sqlite'?); its runs: "
        "synthetic-full-context, synthetic-no-memory, synthetic-sqlite"
    )
