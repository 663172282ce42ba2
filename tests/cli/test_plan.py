"""bench-nb plan: the detectable difference and the questions needed, as the power functions give them."""

from __future__ import annotations

import math
import re
from pathlib import Path

from click.testing import CliRunner

import bench_nb
from bench_nb.cli import cli

FIXTURE_GLOB = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")


def _plan(*args: str) -> str:
    result = CliRunner().invoke(cli, ["plan", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _row(output: str, name: str) -> list[str]:
    return next(line.split() for line in output.splitlines() if line.split()[:1] == [name])


def test_plan_from_counts_and_assumptions() -> None:
    out = _plan(
        "--questions", "1540", "--haystacks", "10", "--accuracy", "0.75", "--icc", "0.02", "--delta", "0.04"
    )
    row = _row(out, "all")
    assert row[:3] == ["all", "1540", "10"]
    paired = bench_nb.minimum_detectable_effect(
        1540, 0.75, cluster_size=154, icc=0.02, paired=True, correlation=0.5
    )
    two = bench_nb.minimum_detectable_effect(1540, 0.75, cluster_size=154, icc=0.02)
    naive = bench_nb.minimum_detectable_effect(1540, 0.75)
    assert row[5:] == [f"{paired * 100:.1f}", "pts", f"{two * 100:.1f}", "pts", f"{naive * 100:.1f}", "pts"]
    need = bench_nb.questions_needed(0.04, 0.75, cluster_size=154, icc=0.02, paired=True, correlation=0.5)
    assert f"{need} questions ({math.ceil(need / 154)} haystacks) on the same questions" in out


def test_plan_from_a_benchmark_per_type_and_measured_runs() -> None:
    bench = bench_nb.load_benchmark("sample")
    out = _plan("-b", "sample", "--runs", FIXTURE_GLOB)
    assert _row(out, "all")[1:3] == [
        str(len(bench.questions)),
        str(len({q.haystack_id for q in bench.questions})),
    ]
    types = {q.norm_type for q in bench.questions}
    listed = {
        re.sub(r"\*$", "", line.split()[0])
        for line in out.splitlines()[2:]
        if line and not line.startswith("*")
    }
    assert types <= listed
    assert "measured on" in out


def test_plan_needs_a_size() -> None:
    result = CliRunner().invoke(cli, ["plan"])
    assert result.exit_code != 0 and "give -b BENCHMARK or --questions N" in result.output


def test_plan_tests_a_paired_difference_from_two_haystacks() -> None:
    # Until issue 39 the sign-flip test needed 6 haystacks (2^K patterns, p ≥ 2/2^K); the CR2 t needs 2.
    out = _plan(
        "--questions", "200", "--haystacks", "4", "--accuracy", "0.6", "--icc", "0.05", "--delta", "0.5"
    )
    mde = bench_nb.minimum_detectable_effect(
        200, 0.6, cluster_size=50, icc=0.05, paired=True, correlation=0.5
    )
    assert _row(out, "all")[5] == f"{mde * 100:.1f}"
    assert "paired n/a" not in out
    one = _plan("--questions", "50", "--haystacks", "1", "--accuracy", "0.6", "--icc", "0.05")
    assert _row(one, "all")[5] == "n/a"
    assert "paired n/a: the clustered paired test compares 2 haystacks at least" in one
