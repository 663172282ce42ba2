"""MemScore, JavaScript rounding and token summaries on hand-made frames and on the shared example."""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

import pytest
from metric_frames import frame, row

from bench_nb import memscore
from bench_nb.frames.questions import questions_frame
from bench_nb.metrics import format_memscore, js_round, token_summary, wilson_interval
from bench_nb.runformat import rounding
from bench_nb.runformat.rounding import js_sum


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (0.5, 1),
        (1.5, 2),
        (2.5, 3),
        (-0.5, 0),
        (-1.5, -1),
        (-2.5, -2),
        (2.4999999999999996, 2),
        (12.5, 13),
        (0.49999999999999994, 0),
        (-0.0, 0),
        (1e15 + 0.5, 1e15 + 1),
    ],
)
def test_js_round_rounds_halves_up(x: float, expected: float) -> None:
    assert js_round(x) == expected
    # Math.round(x) == floor(x + 0.5) except where x + 0.5 itself rounds; exact halves agree with it
    if x == math.floor(x) + 0.5:
        assert js_round(x) == math.floor(x + 0.5)


def test_js_sum_adds_left_to_right_without_compensation() -> None:
    xs = [0.1] * 10
    assert js_sum(xs) == 0.9999999999999999  # what JavaScript's reduce gives
    assert sum(xs) in (1.0, 0.9999999999999999)  # Python 3.12 compensates; 3.11 does not


@pytest.mark.parametrize("plain_sum", [False, True])
def test_js_sum_is_the_same_additions_either_way(monkeypatch: pytest.MonkeyPatch, plain_sum: bool) -> None:
    if plain_sum and sys.version_info >= (3, 12):
        pytest.skip("Python 3.12's sum compensates: js_sum uses it only before 3.12")
    monkeypatch.setattr(rounding, "_PLAIN_SUM", plain_sum)
    rng = random.Random(7)
    xs: list[float] = [rng.uniform(-1e6, 1e6) for _ in range(5000)] + [0.1, 3, 1e-17, -0.0] * 50
    expected = 0.0
    for x in xs:  # JavaScript's reduce: one rounded addition after another
        expected += x
    assert js_sum(xs) == expected
    assert js_sum(iter(xs)) == expected
    assert js_sum([]) == 0.0


def _one(df: object) -> dict:
    out = memscore(df, backend="polars")
    assert len(out) == 1
    return out.row(0, named=True)


def test_half_rounding_in_every_component() -> None:
    # quality 1/8 = 12.5% -> 13; search mean of [1, 2] = 1.5 -> 2; context mean 2.5 -> 3
    rows = [
        row(i == 0, search_ms=1.0 if i % 2 else 2.0, prompt_tokens=10, context_tokens=2 + (i % 2))
        for i in range(8)
    ]
    m = _one(frame(*rows))
    assert (m["quality"], m["latency_ms"], m["context_tokens"]) == (13, 2, 3)
    assert m["memscore"] == "13% / 2ms / 3tok"
    assert m["accuracy"] == 1 / 8 and (m["evaluated"], m["correct"]) == (8, 1)


def test_one_question() -> None:
    m = _one(frame(row(True, search_ms=321.0, prompt_tokens=900, context_tokens=250)))
    assert m["memscore"] == "100% / 321ms / 250tok"
    assert (m["accuracy_ci_low"], m["accuracy_ci_high"]) == pytest.approx(wilson_interval(1, 1))
    z = 1.959963984540054
    assert m["accuracy_ci_low"] == pytest.approx(1 / (1 + z * z), rel=1e-12)  # Wilson at 1/1: 1/(1+z²)
    assert m["accuracy_ci_high"] == 1.0


def test_all_questions_failed() -> None:
    df = frame(*[row(None, status="failed", failed_phase="search", error="429") for _ in range(3)])
    m = _one(df)
    assert m["memscore"] == "n/a / n/a / n/a"
    assert (m["quality"], m["latency_ms"], m["context_tokens"], m["accuracy"]) == (None, None, None, None)
    assert (m["evaluated"], m["target"], m["failed"]) == (0, 3, 3)
    assert math.isnan(m["accuracy_ci_low"]) and math.isnan(m["accuracy_ci_high"])


def test_failed_and_pending_questions_do_not_count_but_are_counted() -> None:
    df = frame(
        row(True, search_ms=100.0, prompt_tokens=5, context_tokens=1),
        row(False, search_ms=300.0, prompt_tokens=5, context_tokens=3),
        row(None, status="failed", search_ms=9999.0),
        row(None, status="pending"),
    )
    m = _one(df)
    assert m["memscore"] == "50% / 200ms / 2tok"
    assert (m["evaluated"], m["target"], m["failed"]) == (2, 4, 1)


def test_missing_token_fields_show_na() -> None:
    old = frame(row(True, search_ms=100.0), row(False, search_ms=200.0))  # runs before 2026-03-23
    assert _one(old)["memscore"] == "50% / 150ms / n/a"
    # MemoryBench shows tokens only when every evaluated question has promptTokens
    partial = frame(
        row(True, search_ms=100.0, prompt_tokens=9, context_tokens=4), row(False, search_ms=200.0)
    )
    assert _one(partial)["context_tokens"] is None
    summary = token_summary(partial, backend="polars").row(0, named=True)
    assert (summary["evaluated"], summary["with_tokens"], summary["total_context_tokens"]) == (2, 1, 4)
    assert summary["mean_context_tokens"] == 4


def test_unscored_answers_are_left_out_and_counted() -> None:
    df = frame(
        row(True, search_ms=10.0), row(None, unscored=True, search_ms=50.0), row(False, search_ms=20.0)
    )
    m = _one(df)
    assert (m["quality"], m["latency_ms"], m["evaluated"], m["unscored"]) == (50, 15, 2, 1)


def test_zero_search_durations_are_skipped_as_memorybench_does() -> None:
    df = frame(row(True, search_ms=0.0), row(True, search_ms=None), row(True, search_ms=7.0))
    assert _one(df)["latency_ms"] == 7


def test_empty_frame_gives_no_rows() -> None:
    assert memscore(frame(), backend="polars").is_empty()


def test_one_row_per_run_in_order() -> None:
    df = frame(row(True, run_id="b", search_ms=1.0), row(False, run_id="a", search_ms=3.0))
    assert memscore(df)["run_id"].tolist() == ["b", "a"]


def test_format_memscore() -> None:
    assert format_memscore(84, 450, 178) == "84% / 450ms / 178tok"
    assert format_memscore(0, 0, 0) == "0% / 0ms / 0tok"
    assert format_memscore(None, 12, None) == "n/a / 12ms / n/a"


def test_example_memscore_equals_memorybench_report(mb_example: Path) -> None:
    report = json.loads((mb_example / "expected" / "report.json").read_text())
    df = questions_frame(mb_example / "data" / "runs" / "fx-compare-supermemory")
    m = _one(df)
    assert m["memscore"] == report["memscore"] == "84% / 450ms / 178tok"
    assert {"quality": m["quality"], "latencyMs": m["latency_ms"], "contextTokens": m["context_tokens"]} == (
        report["memscoreComponents"]
    )
    assert m["accuracy"] == report["summary"]["accuracy"]
    assert (m["evaluated"], m["correct"], m["target"], m["failed"]) == (19, 16, 20, 1)
    tokens = token_summary(df, backend="polars").row(0, named=True)
    assert tokens["total_prompt_tokens"] == report["tokens"]["totalTokens"]
    assert tokens["total_base_prompt_tokens"] == report["tokens"]["basePromptTokens"]
    assert tokens["total_context_tokens"] == report["tokens"]["contextTokens"]
    assert js_round(tokens["mean_prompt_tokens"]) == report["tokens"]["avgTokensPerQuestion"]


def test_a_report_json_only_run_has_the_reports_own_memscore(tmp_path: Path, mb_example: Path) -> None:
    # report.json has no per-question tokens: the run's context tokens are the report's own, so its
    # MemScore reads as MemoryBench printed it instead of "n/a" tokens.
    report = json.loads((mb_example / "expected" / "report.json").read_text())
    run = tmp_path / "report-only"
    run.mkdir()
    (run / "report.json").write_text(json.dumps(report))
    df = questions_frame(run)
    assert df["context_tokens"].null_count() == len(df) == 19
    m = _one(df)
    assert m["memscore"] == report["memscore"] == "84% / 450ms / 178tok"
    assert {"quality": m["quality"], "latencyMs": m["latency_ms"], "contextTokens": m["context_tokens"]} == (
        report["memscoreComponents"]
    )
    # MemoryBench leaves memscoreComponents out when some question had no promptTokens: tokens stay n/a.
    del report["memscoreComponents"]
    (run / "report.json").write_text(json.dumps(report))
    assert _one(questions_frame(run))["memscore"] == "84% / 450ms / n/a"
