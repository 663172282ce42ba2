"""``.json.gz`` files a glob matches: another harness's gzip-compressed JSON is read as the plain file would be
(every run of it: mem0's memory-benchmarks file holds one per retrieval depth); a compressed file of the run
format (``checkpoint.json.gz``, ``report.json.gz``, ...) is not tried as a harness file but skipped, with one line
naming it and saying why. Through ``load_runs`` and ``bench-nb export``."""

from __future__ import annotations

import gzip
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
