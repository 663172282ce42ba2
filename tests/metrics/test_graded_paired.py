"""Paired comparison of graded runs (BEAM): mean score difference, a cluster bootstrap interval over chats,
and the Wilcoxon signed-rank test instead of McNemar's."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import bootstrap, wilcoxon

from bench_nb.metrics.clustered import expanded_alpha
from bench_nb.metrics.paired import paired_comparison


def frame(seed: int = 5, chats: int = 20, per_chat: int = 4) -> tuple[pl.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    rows, diffs = [], []
    for c in range(chats):
        shift = rng.normal(0.1, 0.1)
        for i in range(per_chat):
            a = float(np.clip(rng.choice([0, 0.25, 0.5, 0.75, 1]) + shift, 0, 1))
            b = float(rng.choice([0, 0.25, 0.5, 0.75, 1]))
            diffs.append(a - b)
            for run, score in (("a", a), ("b", b)):
                rows.append(
                    {
                        "run_id": run,
                        "provider": run,
                        "question_id": f"100K-{c}-x-{i}",
                        "haystack_id": f"100K-{c}",
                        "question_type_norm": "summarization",
                        "status": "evaluated",
                        "unscored": False,
                        "score": score,
                        "correct": score == 1,
                        "graded": True,
                        "benchmark": "beam-100k",
                    }
                )
    return pl.DataFrame(rows), np.array(diffs)


def test_graded_runs_get_the_mean_difference_a_cluster_interval_and_wilcoxon() -> None:
    q, diffs = frame()
    result = paired_comparison(q, "a", "b", backend="polars")
    assert result.test == "wilcoxon" and result.n_pairs == 80
    assert result.difference == pytest.approx(diffs.mean())
    ref = wilcoxon(diffs, zero_method="wilcox")
    assert result.p_value == pytest.approx(ref.pvalue) and result.statistic == pytest.approx(ref.statistic)
    # Equal chat sizes: the cluster bootstrap of the mean difference is the bootstrap of the chats' means,
    # and the expanded percentile interval is the percentile interval at a wider level.
    chat_means = diffs.reshape(20, 4).mean(axis=1)
    level = 1 - expanded_alpha(20, 0.95)
    boot = bootstrap(
        (chat_means,), np.mean, n_resamples=4000, method="percentile", confidence_level=level, random_state=3
    )
    assert result.ci_low == pytest.approx(boot.confidence_interval.low, abs=0.02)
    assert result.ci_high == pytest.approx(boot.confidence_interval.high, abs=0.02)


def test_identical_graded_runs_do_not_differ() -> None:
    q, _ = frame()
    same = pl.concat(
        [
            q.filter(pl.col("run_id") == "a"),
            q.filter(pl.col("run_id") == "a").with_columns(run_id=pl.lit("b"), provider=pl.lit("b")),
        ]
    )
    result = paired_comparison(same, "a", "b")
    assert (result.difference, result.p_value, result.test) == (0.0, 1.0, "wilcoxon")
