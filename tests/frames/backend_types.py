"""What a type checker sees of the public frame API (checked by ``make typecheck``: pyproject.toml lists this
file in ``[tool.mypy] files``; never run). Each function appears twice: pandas by default, polars with
``backend="polars"``. The lines marked ``type: ignore[assert-type]`` assert the wrong library on purpose:
mypy runs with ``warn_unused_ignores``, so if an overload stopped telling the two apart, the ignore would go
unused and the check would fail. ``tests/frames/test_backend.py`` checks that every public function is here.
"""

from __future__ import annotations

from typing import Any, assert_type

import pandas as pd
import polars as pl

import bench_nb as bn
from bench_nb import metrics
from bench_nb.metrics import clustered_paired, paired, repeats


def _frames(runs: bn.runformat.RunSet, errata: Any) -> None:
    assert_type(bn.questions_df(runs), pd.DataFrame)
    assert_type(bn.questions_df(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.questions_df(runs, backend="pandas"), pd.DataFrame)
    assert_type(bn.questions_df(runs), pl.DataFrame)  # type: ignore[assert-type]
    assert_type(bn.questions_df(runs, backend="polars"), pd.DataFrame)  # type: ignore[assert-type]
    assert_type(bn.runs_df(runs), pd.DataFrame)
    assert_type(bn.runs_df(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.judgments_df(runs), pd.DataFrame)
    assert_type(bn.judgments_df(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.disputed_questions(runs), pd.DataFrame)
    assert_type(bn.disputed_questions(runs, backend="polars"), pl.DataFrame)


def _metrics(runs: bn.runformat.RunSet, errata: Any) -> None:
    assert_type(bn.memscore(runs), pd.DataFrame)
    assert_type(bn.memscore(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.memscore(runs), pl.DataFrame)  # type: ignore[assert-type]
    assert_type(metrics.accuracy(runs), pd.DataFrame)
    assert_type(metrics.accuracy(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.accuracy_by_type(runs), pd.DataFrame)
    assert_type(bn.accuracy_by_type(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.latency_stats(runs), pd.DataFrame)
    assert_type(bn.latency_stats(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.success_rate(runs), pd.DataFrame)
    assert_type(bn.success_rate(runs, backend="polars"), pl.DataFrame)
    assert_type(metrics.token_summary(runs), pd.DataFrame)
    assert_type(metrics.token_summary(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.retrieval_summary(runs), pd.DataFrame)
    assert_type(bn.retrieval_summary(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.beam_scores(runs), pd.DataFrame)
    assert_type(bn.beam_scores(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.accuracy_intervals(runs), pd.DataFrame)
    assert_type(bn.accuracy_intervals(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.rank_intervals(runs), pd.DataFrame)
    assert_type(bn.rank_intervals(runs, backend="polars"), pl.DataFrame)
    assert_type(clustered_paired.clustered_paired_comparisons(runs), pd.DataFrame)
    assert_type(clustered_paired.clustered_paired_comparisons(runs, backend="polars"), pl.DataFrame)
    assert_type(clustered_paired.tell_apart(runs), pd.DataFrame)
    assert_type(clustered_paired.tell_apart(runs, backend="polars"), pl.DataFrame)
    assert_type(metrics.detectable_differences(runs), pd.DataFrame)
    assert_type(metrics.detectable_differences(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.pareto_frontier(runs), pd.DataFrame)
    assert_type(bn.pareto_frontier(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.lafs(runs), pd.DataFrame)
    assert_type(bn.lafs(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.budget_curve(runs), pd.DataFrame)
    assert_type(bn.budget_curve(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.failure_reasons(runs), pd.DataFrame)
    assert_type(bn.failure_reasons(runs, backend="polars"), pl.DataFrame)
    assert_type(metrics.failure_summary(runs), pd.DataFrame)
    assert_type(metrics.failure_summary(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.repeat_variance(runs), pd.DataFrame)
    assert_type(bn.repeat_variance(runs, backend="polars"), pl.DataFrame)
    assert_type(repeats.pooled_paired_comparisons(runs), pd.DataFrame)
    assert_type(repeats.pooled_paired_comparisons(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.replicate_summary(runs), pd.DataFrame)
    assert_type(bn.replicate_summary(runs, backend="polars"), pl.DataFrame)
    assert_type(paired.paired_comparisons(runs), pd.DataFrame)
    assert_type(paired.paired_comparisons(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.judge_audit(runs), pd.DataFrame)
    assert_type(bn.judge_audit(runs, backend="polars"), pl.DataFrame)
    assert_type(bn.answer_key_ceiling(errata, runs), pd.DataFrame)
    assert_type(bn.answer_key_ceiling(errata, runs, backend="polars"), pl.DataFrame)
    assert_type(bn.regrade_with_errata(errata, runs), pd.DataFrame)
    assert_type(bn.regrade_with_errata(errata, runs, backend="polars"), pl.DataFrame)


def _result_objects(runs: bn.runformat.RunSet) -> None:
    """Functions that return a result object: generic in the frame type of its tables."""
    assert_type(bn.judge_agreement(runs), metrics.JudgeAgreement[pd.DataFrame])
    assert_type(bn.judge_agreement(runs, backend="polars"), metrics.JudgeAgreement[pl.DataFrame])
    assert_type(bn.judge_agreement(runs).pairwise, pd.DataFrame)
    assert_type(bn.judge_agreement(runs, backend="polars").pairwise, pl.DataFrame)
    assert_type(bn.judge_agreement(runs, backend="polars").accuracy, pd.DataFrame)  # type: ignore[assert-type]
    assert_type(bn.judge_agreement(runs, backend="polars").by_type, pl.DataFrame)
    assert_type(bn.judge_agreement(runs).confusion, pd.DataFrame)
    assert_type(bn.judge_agreement(runs).accuracy_by_run, pd.DataFrame)
    assert_type(bn.judge_agreement(runs).table("pairwise"), pd.DataFrame)
    assert_type(bn.judge_agreement(runs).table("pairwise", "polars"), pl.DataFrame)
    assert_type(bn.judge_agreement(runs, backend="polars").summary(), pd.DataFrame)
    assert_type(bn.judge_agreement(runs).summary(backend="polars"), pl.DataFrame)
    assert_type(bn.compare_runs(runs), metrics.Comparison[pd.DataFrame])
    assert_type(bn.compare_runs(runs, backend="polars"), metrics.Comparison[pl.DataFrame])
    assert_type(bn.compare_runs(runs, backend="polars").frame, pl.DataFrame)
    assert_type(paired.paired_comparison(runs, "a", "b"), paired.PairedComparison[pd.DataFrame])
    assert_type(paired.paired_comparison(runs, "a", "b").by_type, pd.DataFrame)
    assert_type(paired.paired_comparison(runs, "a", "b", backend="polars").by_type, pl.DataFrame)
