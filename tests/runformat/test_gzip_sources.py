"""``.json.gz`` files a glob matches: another harness's gzip-compressed JSON is read as the plain file would be
(every run of it: mem0's memory-benchmarks file holds one per retrieval depth); a compressed file of the run
format (``checkpoint.json.gz``, ``report.json.gz``, ...) is not tried as a harness file but skipped, with one line
naming it and saying why. Through ``load_runs`` and ``bench-nb export``."""

from __future__ import annotations

import gzip
import shutil
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_nb import load_runs
from bench_nb.cli import cli
from bench_nb.errors import RunFormatError

FIXTURES = Path(__file__).parents[1] / "fixtures"
AMB = FIXTURES / "harnesses" / "amb" / "locomo" / "hybrid-search" / "rag" / "locomo10.json"
MEM0_BENCHMARKS = FIXTURES / "harnesses" / "mem0-benchmarks" / "locomo_results_20260101_000000.json"
CHECKPOINT = FIXTURES / "runs" / "synthetic-sqlite" / "checkpoint.json"
RUN_IDS = ["hybrid-search-locomo10", "oss-top_10", "oss-top_50"]


def _gzip(source: Path, to: Path) -> Path:
    to.write_bytes(gzip.compress(source.read_bytes()))
    return to


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "outputs"
    out.mkdir()
    _gzip(AMB, out / "locomo10.json.gz")
    _gzip(MEM0_BENCHMARKS, out / "locomo_results_20260101_000000.json.gz")
    _gzip(CHECKPOINT, out / "checkpoint.json.gz")
    return out


def test_a_glob_reads_gzipped_harness_files_whole_and_names_a_gzipped_checkpoint(folder: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = load_runs(str(folder / "*"))
    assert sorted(r.run_id for r in runs) == RUN_IDS  # both depths of the gzipped mem0 file
    assert {r.harness for r in runs} == {"amb", "mem0-benchmarks"}
    (problem,) = runs.problems
    assert problem.path == str(folder / "checkpoint.json.gz")
    assert problem.message == (
        "a gzip-compressed checkpoint.json: a run directory's files are read uncompressed "
        "(decompress it into its run directory); skipped"
    )
    assert "\n" not in problem.message
    assert any("checkpoint.json.gz" in str(w.message) for w in caught)  # said, not only in .problems
    with pytest.raises(RunFormatError, match=r"checkpoint\.json\.gz.*gzip-compressed checkpoint\.json"):
        load_runs(str(folder / "*"), strict=True)


def test_a_gzipped_checkpoint_named_alone_is_the_same_one_line(folder: Path) -> None:
    with pytest.warns(UserWarning):
        runs = load_runs(folder / "checkpoint.json.gz")
    assert len(runs) == 0
    assert [p.message for p in runs.problems] == [
        "a gzip-compressed checkpoint.json: a run directory's files are read uncompressed "
        "(decompress it into its run directory); skipped"
    ]


def test_bench_nb_export_of_the_glob_stores_every_run_and_says_what_it_skipped(
    folder: Path, tmp_path: Path
) -> None:
    result = CliRunner().invoke(cli, ["export", str(folder / "*"), "--to", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    assert "3 run(s) written, 0 unchanged, 1 problem(s)" in result.output
    assert "checkpoint.json.gz" in result.output and "gzip-compressed checkpoint.json" in result.output
    assert sorted(load_runs(tmp_path / "store").run_ids) == RUN_IDS


LMEV2 = FIXTURES / "lmev2_runs" / "no_retrieval_web_small"
LME_JUDGED = FIXTURES / "harnesses" / "lme_hyps.jsonl.eval-results-gpt-4o"


def _questions(runs: object) -> dict[str, list[str]]:
    return {r.run_id: list(r.checkpoint.questions) for r in runs}  # type: ignore[attr-defined]


def test_an_existing_per_question_jsonl_gz_is_read_not_no_such_file(tmp_path: Path) -> None:
    """Issue 38: LongMemEval-V2's per_question.jsonl.gz was "no such file or directory", and a glob skipped it
    silently; JSON-lines files are read gzip-compressed wherever they are read plain."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "lme_small"
    shutil.copytree(LMEV2, folder)
    plain = folder / "per_question.jsonl"
    packed = _gzip(plain, folder / "per_question.jsonl.gz")
    plain.unlink()
    want = _questions(load_runs(LMEV2))
    for source in (packed, folder, str(tmp_path / "*"), str(folder / "*.gz")):
        runs = load_runs(source)
        assert runs.all_problems == [] and _questions(runs) == {"lme_small": want["no_retrieval_web_small"]}
    assert load_runs(packed)[0].path == packed
    env = os.environ | {"PYTHONPATH": str(Path(__file__).parents[2] / "src"), "BENCH_NB_QUIET": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "bench_nb", "summary", str(packed)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0 and "no such file" not in done.stderr, done.stderr
    assert "lme_small" in done.stdout and "6/6" in done.stdout


def test_longmemevals_judged_lines_gzipped_are_read_by_name_and_by_a_glob(tmp_path: Path) -> None:
    want = _questions(load_runs(LME_JUDGED))
    packed = _gzip(LME_JUDGED, tmp_path / f"{LME_JUDGED.name}.gz")
    renamed = _gzip(LME_JUDGED, tmp_path / "copy.jsonl.gz")
    runs = load_runs(str(tmp_path / "*"))
    assert runs.all_problems == []
    assert _questions(runs) == {"lme_hyps-gpt-4o": want["lme_hyps-gpt-4o"], "copy": want["lme_hyps-gpt-4o"]}
    assert {r.path for r in runs} == {packed, renamed}


def test_an_existing_file_of_no_format_is_named_as_such_not_missing(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.warns(UserWarning):
        runs = load_runs(other)
    (problem,) = runs.problems
    assert problem.path == str(other) and problem.message.startswith("not a file bench_nb reads")


def test_a_gzipped_judgments_jsonl_in_a_run_directory_is_named_not_silently_left_out(tmp_path: Path) -> None:
    run = tmp_path / "synthetic-sqlite"
    shutil.copytree(CHECKPOINT.parent, run)
    judgments = run / "judgments.jsonl"
    assert judgments.is_file()
    _gzip(judgments, run / "judgments.jsonl.gz")
    judgments.unlink()
    with pytest.warns(UserWarning, match=r"judgments\.jsonl\.gz"):
        runs = load_runs(run)
    (problem,) = runs.all_problems
    assert problem.path == str(run / "judgments.jsonl.gz")
    assert problem.message.startswith("a gzip-compressed judgments.jsonl: a run directory's files are read")
    with pytest.raises(RunFormatError, match=r"judgments\.jsonl\.gz"):
        load_runs(run, strict=True)
    with pytest.warns(UserWarning):  # named alone, or matched by a glob: the same line
        assert [p.message for p in load_runs(run / "judgments.jsonl.gz").problems] == [problem.message]
