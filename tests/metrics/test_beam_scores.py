"""BEAM's aggregation on hand-made question frames: per chat, then per ability over chats, overall with the ten
abilities weighted equally, both readings of partial credit, partial runs, and the interval over chats
(Student's t)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy import stats

import bench_nb
from bench_nb.benchmarks.beam import read_beam
from bench_nb.benchmarks.registry import BenchmarkTraits, register_benchmark, unregister_benchmark
from bench_nb.metrics.beam import beam_scores_frame
from bench_nb.taxonomy import BEAM_ABILITIES


@pytest.fixture(autouse=True)
def beam_test() -> Any:
    """``beam-test``: a graded benchmark of no known size (a BEAM tier's own would make a 2-chat run partial)."""
    register_benchmark(
        "beam-test", read_beam, traits=BenchmarkTraits(default_judges=("rubric",), graded=True)
    )
    yield
    unregister_benchmark("beam-test")


def row(
    chat: int, ability: str, score: float | None, published: float | None = None, **kw: Any
) -> dict[str, Any]:
    return {
        "run_id": kw.get("run_id", "r1"),
        "provider": "sqlite",
        "benchmark": kw.get("benchmark", "beam-test"),
        "question_id": f"100K-{chat}-{ability}-{kw.get('i', 0)}",
        "haystack_id": f"100K-{chat}",
        "question_type": ability,
        "status": kw.get("status", "evaluated"),
        "unscored": score is None and kw.get("status", "evaluated") == "evaluated",
        "score": score,
        "published_score": score if published is None else published,
    }


def full_run(value: float = 1.0, chats: int = 2, run_id: str = "r1") -> list[dict[str, Any]]:
    return [row(c, a, value, run_id=run_id) for c in range(1, chats + 1) for a in BEAM_ABILITIES]


def frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema_overrides={"score": pl.Float64, "published_score": pl.Float64})


def by_ability(df: pl.DataFrame) -> dict[str, dict[str, Any]]:
    return {r["ability"]: r for r in df.iter_rows(named=True)}


def test_an_ability_is_the_mean_over_chats_of_each_chats_mean() -> None:
    rows = [r for r in full_run() if r["question_type"] != "summarization"]
    rows += [
        row(1, "summarization", 1.0, i=0),
        row(1, "summarization", 0.0, i=1),  # chat 1: mean 0.5
        row(2, "summarization", 1.0, i=0),  # chat 2: 1.0
    ]
    out = by_ability(beam_scores_frame(frame(rows)))
    s = out["summarization"]
    assert s["score"] == pytest.approx(0.75)  # not 2/3, the mean over questions
    assert (s["chats"], s["questions"], s["partial"]) == (2, 3, False)


def test_overall_weighs_the_ten_abilities_equally() -> None:
    rows = [r for r in full_run(chats=1) if r["question_type"] != "abstention"]
    rows += [row(1, "abstention", 0.0, i=i) for i in range(8)]  # 8 questions, one ability
    out = by_ability(beam_scores_frame(frame(rows)))
    assert out["abstention"]["score"] == 0.0
    assert out["overall"]["score"] == pytest.approx(9 / 10)  # not 9/17, the mean over questions
    assert out["overall"]["questions"] == 17 and out["overall"]["comparable"] is True


def test_the_two_readings_of_partial_credit() -> None:
    rows = full_run(chats=1)
    rows[0] = row(1, BEAM_ABILITIES[0], 0.5, published=0.0)  # one item of two at 0.5 -> (1 + 0.5)/2 vs 1/2
    rows[1] = row(1, BEAM_ABILITIES[1], 0.75, published=0.5)
    fl = by_ability(bench_nb.beam_scores(frame(rows), "float", backend="polars"))
    pub = by_ability(bench_nb.beam_scores(frame(rows), "as-published", backend="polars"))
    assert fl[BEAM_ABILITIES[0]]["score"] == 0.5 and pub[BEAM_ABILITIES[0]]["score"] == 0.0
    assert fl["overall"]["score"] == pytest.approx((0.5 + 0.75 + 8) / 10)
    assert pub["overall"]["score"] == pytest.approx((0 + 0.5 + 8) / 10)
    assert fl["overall"]["reading"] == "0.5 as 0.5"
    assert pub["overall"]["reading"] == "as published (0.5 counted as 0)"
    with pytest.raises(ValueError, match="partial_credit"):
        beam_scores_frame(frame(rows), "half")  # type: ignore[arg-type]


def test_a_run_missing_questions_is_partial_and_not_comparable() -> None:
    rows = full_run(chats=2)
    rows[3] = row(1, BEAM_ABILITIES[3], None, status="failed")
    rows[4] = row(1, BEAM_ABILITIES[4], None)  # unscored
    rows = [r for r in rows if r["question_type"] != "temporal_reasoning"]
    out = by_ability(beam_scores_frame(frame(rows)))
    assert out[BEAM_ABILITIES[3]]["partial"] and out[BEAM_ABILITIES[3]]["questions"] == 1
    assert out[BEAM_ABILITIES[3]]["target"] == 2 and out[BEAM_ABILITIES[4]]["partial"]
    assert out["temporal_reasoning"]["score"] is None and out["temporal_reasoning"]["partial"]
    assert not out[BEAM_ABILITIES[0]]["partial"]
    assert out["overall"]["partial"] and out["overall"]["comparable"] is False
    assert out["overall"]["score"] == pytest.approx(1.0)  # over the nine abilities it has: shown, labelled


def test_a_run_on_fewer_chats_than_its_tier_is_not_comparable() -> None:
    rows = [dict(r, benchmark="beam-100k") for r in full_run(chats=2)]
    out = by_ability(beam_scores_frame(frame(rows)))
    assert not out["abstention"]["partial"]  # every question it asked is scored
    assert out["overall"]["partial"] and out["overall"]["comparable"] is False  # 2 of the tier's 20 chats


def test_runs_are_scored_separately_and_other_benchmarks_left_out() -> None:
    rows = full_run(1.0, run_id="a") + full_run(0.0, run_id="b")
    other = dict(row(1, "abstention", 1.0, run_id="c"), benchmark="locomo")
    out = beam_scores_frame(frame([*rows, other]))
    overall = out.filter(pl.col("ability") == "overall")
    assert overall["run_id"].to_list() == ["a", "b"] and overall["score"].to_list() == [1.0, 0.0]
    assert len(out) == 22 and out.columns[:3] == ["run_id", "provider", "benchmark"]


def test_the_interval_is_students_t_over_the_chats() -> None:
    # An ability's score is the mean of 20 chat values: its interval is the one-sample t interval of them
    # (scipy), deterministic. Until session 9 a seeded bootstrap, whose ends moved by up to 0.025 across 20
    # seeds on the shared BEAM runs (bench/seed_stability.py) where the table shows 0.001.
    rng = np.random.default_rng(3)
    chat_scores = rng.uniform(0, 1, size=20)
    rows = [
        row(c + 1, a, float(chat_scores[c]) if a == "summarization" else 1.0)
        for c in range(20)
        for a in BEAM_ABILITIES
    ]
    out = by_ability(beam_scores_frame(frame(rows)))
    s = out["summarization"]
    ref = stats.ttest_1samp(chat_scores, 0.0).confidence_interval(0.95)
    assert s["score"] == pytest.approx(chat_scores.mean())
    assert (s["ci_low"], s["ci_high"]) == pytest.approx((ref.low, ref.high), rel=1e-9)
    # Overall: nine abilities at 1 and this one, so its interval is (9 + the ability's) / 10.
    assert (out["overall"]["ci_low"], out["overall"]["ci_high"]) == pytest.approx(
        ((9 + s["ci_low"]) / 10, (9 + s["ci_high"]) / 10), rel=1e-9
    )
    assert out["abstention"]["ci_low"] == out["abstention"]["ci_high"] == 1.0


def test_the_overall_interval_linearises_over_chats_with_missing_abilities() -> None:
    # Chat 1 has no temporal_reasoning question: the overall is the mean of ten ability means over different
    # chats. Its variance, linearised over the chats, is K/(K-1)·Σuₖ² (uₖ: chat k's share of the deviation),
    # which the bootstrap over chats approximates (scipy, 20,000 resamples, the same statistic).
    rng = np.random.default_rng(5)
    values = rng.uniform(0, 1, size=(12, len(BEAM_ABILITIES)))
    values[0, BEAM_ABILITIES.index("temporal_reasoning")] = np.nan
    rows = [
        row(c + 1, a, float(values[c, j]))
        for c in range(12)
        for j, a in enumerate(BEAM_ABILITIES)
        if not np.isnan(values[c, j])
    ]
    got = by_ability(beam_scores_frame(frame(rows)))["overall"]

    def overall(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        picked = values[np.asarray(idx, dtype=int)]
        return np.nanmean(np.nanmean(picked, axis=-2), axis=-1)

    assert got["score"] == pytest.approx(float(overall(np.arange(12))))
    boot = stats.bootstrap((np.arange(12),), overall, n_resamples=20000, random_state=1, vectorized=True)
    half = (got["ci_high"] - got["ci_low"]) / 2
    se = half / stats.t.ppf(0.975, 11)
    assert se == pytest.approx(boot.standard_error * math.sqrt(12 / 11), rel=0.05)


def test_scores_are_the_same_bits_in_any_row_order() -> None:
    """Each chat's mean per ability is added in one fixed order (a polars group_by mean gave other last bits
    for the same questions in another order)."""
    rng = np.random.default_rng(5)
    rows = [
        row(c, a, float(rng.choice([0.0, 1 / 3, 0.5, 2 / 3, 0.9, 1.0])), i=i)
        for c in range(1, 6)
        for a in BEAM_ABILITIES
        for i in range(40)
    ]
    df = frame(rows)
    first = beam_scores_frame(df).to_dicts()
    for seed in range(15):
        assert beam_scores_frame(df.sample(fraction=1.0, shuffle=True, seed=seed)).to_dicts() == first
