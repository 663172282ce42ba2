"""Repeated runs: the variance split against statsmodels' one-way ANOVA and a seeded simulation, the grouping
of runs by settings, pooled paired tests, and the judge part on the LoCoMo audit's replicates."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import statsmodels.api as sm
from statsmodels.formula.api import ols

import bench_nb
from bench_nb.metrics.repeats import (
    pool_repeats,
    pooled_paired_comparisons,
    repeat_groups,
    repeat_variance,
    variance_components,
)
from clustered_sim import LOCOMO_SIZES, frame


def test_variance_components_are_the_one_way_random_effects_anova() -> None:
    rng = np.random.default_rng(0)
    table = (0.7 + rng.normal(0, 0.02, (5, 1)) + rng.normal(0, 0.01, (5, 3))).tolist()
    runs = np.repeat(np.arange(5), 3)
    anova = sm.stats.anova_lm(ols("a ~ C(r)", data=pd.DataFrame({"a": np.ravel(table), "r": runs})).fit())
    msb, msw = anova["mean_sq"].iloc[0], anova["mean_sq"].iloc[1]
    answer, judge, total = variance_components(table)
    assert math.isclose(judge, msw, rel_tol=1e-9)
    assert math.isclose(answer, max(0.0, (msb - msw) / 3), rel_tol=1e-9)
    assert math.isclose(total, answer + judge)


def test_variance_components_recover_a_simulated_truth() -> None:
    rng = np.random.default_rng(1)
    answers, judges = [], []
    for _ in range(300):  # 300 simulated studies of 6 runs x 4 judge replicates
        table = 0.7 + rng.normal(0, 0.02, (6, 1)) + rng.normal(0, 0.01, (6, 4))
        a, j, _ = variance_components(table.tolist())
        answers.append(a)
        judges.append(j)
    assert abs(np.mean(judges) - 0.01**2) < 0.05 * 0.01**2  # MS_within is unbiased
    assert abs(np.mean(answers) - 0.02**2) < 0.1 * 0.02**2  # (slightly biased up by the floor at 0)


def test_single_run_or_single_replicate_leave_a_part_unknown() -> None:
    a, j, t = variance_components([[0.70, 0.72, 0.71]])
    assert math.isnan(a) and math.isnan(t) and math.isclose(j, np.var([0.70, 0.72, 0.71], ddof=1))
    a, j, t = variance_components([[0.70], [0.74]])
    assert math.isnan(a) and math.isnan(j) and math.isclose(t, np.var([0.70, 0.74], ddof=1))


def _repeats() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    n = int(LOCOMO_SIZES.sum())
    runs = {}
    for name, p in (("a-1", 0.75), ("a-2", 0.75), ("a-3", 0.75), ("b-1", 0.70), ("b-2", 0.70)):
        runs[name] = (rng.random(n) < p).astype(float)
    q = frame(runs)
    return q.with_columns(
        provider=pl.col("run_id").str.slice(0, 1),
        benchmark=pl.lit("locomo"),
        judge=pl.lit("f1"),
        answering_model=pl.lit("m"),
        k=pl.lit(10),
        question_type_norm=pl.lit("single-hop"),
    )


def test_runs_group_by_settings_and_pool_into_fractional_scores() -> None:
    q = _repeats()
    assert repeat_groups(q) == {"a-1": "a-1", "a-2": "a-1", "a-3": "a-1", "b-1": "b-1", "b-2": "b-1"}
    pooled = pool_repeats(q)
    assert sorted(pooled["run_id"].unique().to_list()) == ["a-1", "b-1"]
    first = pooled.filter((pl.col("run_id") == "a-1") & (pl.col("question_id") == "q0"))["score"].item()
    expected = q.filter(pl.col("run_id").str.starts_with("a") & (pl.col("question_id") == "q0"))["correct"]
    assert math.isclose(first, expected.cast(pl.Float64).mean())
    table = repeat_variance(q, backend="polars")
    assert table["runs"].to_list() == [3, 2]
    accs = [q.filter(pl.col("run_id") == r)["correct"].mean() for r in ("a-1", "a-2", "a-3")]
    row = table.row(0, named=True)
    assert math.isclose(row["accuracy_sd"], float(np.std(accs, ddof=1)))
    assert math.isclose(row["var_total"], float(np.var(accs, ddof=1)))


def test_pooled_paired_test_over_repeats() -> None:
    pairs = pooled_paired_comparisons(_repeats(), backend="polars")
    row = pairs.row(0, named=True)
    assert (row["run_a"], row["run_b"], row["n"]) == ("a-1", "b-1", 1540)
    assert row["verdict"] == "A higher" and math.isnan(row["mcnemar_p"])  # fractional: no McNemar


def test_judge_part_on_the_audit_replicates(locomo_audit: Path) -> None:
    runs = locomo_audit / "fc-baseline"
    src = str(runs / "*")
    table = repeat_variance(
        bench_nb.questions_df(src, backend="polars"),
        bench_nb.judgments_df(src, backend="polars"),
        backend="polars",
    )
    summary = bench_nb.replicate_summary(src, backend="polars")
    for r in table.iter_rows(named=True):
        ref = summary.filter(pl.col("run_id") == r["group"]).row(0, named=True)
        assert r["replicates"] == 3 and r["runs"] == 1
        assert math.isclose(r["var_judge"], (ref["accuracy_sd_sample"] / 100) ** 2, rel_tol=1e-9)
        assert math.isclose(r["accuracy_mean"] * 100, ref["accuracy_mean"], rel_tol=1e-9)


def test_a_shared_fingerprint_groups_runs_of_one_provider_only() -> None:
    q = _repeats().with_columns(settings_fingerprint=pl.lit("abc123"))  # like for like: one fingerprint
    assert repeat_groups(q) == {"a-1": "a-1", "a-2": "a-1", "a-3": "a-1", "b-1": "b-1", "b-2": "b-1"}
    other = q.with_columns(
        settings_fingerprint=pl.when(pl.col("run_id") == "a-3")
        .then(pl.lit("k=30"))
        .otherwise(pl.lit("abc123"))
    )
    assert repeat_groups(other)["a-3"] == "a-3"  # another setting: not a repeat


def test_repeat_variance_is_the_same_bits_in_any_row_order() -> None:
    """Each run's accuracy is added in one fixed order (fractional scores: a polars group_by mean gave other
    last bits for the same questions in another order)."""
    rng = np.random.default_rng(9)
    q = _repeats()
    q = q.with_columns(score=pl.Series(rng.choice([0.0, 1 / 3, 2 / 3, 0.9, 1.0], q.height)))
    first = repr(repeat_variance(q, backend="polars").to_dicts())  # repr: exact floats, nan equal to nan
    for seed in range(10):
        # the questions shuffled within each run (the runs' order names the groups: a-1 first)
        shuffled = q.sample(fraction=1.0, shuffle=True, seed=seed).sort("run_id", maintain_order=True)
        assert repr(repeat_variance(shuffled, backend="polars").to_dicts()) == first
