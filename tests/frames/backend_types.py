"""What a type checker sees of the public frame API (checked by ``make typecheck``: pyproject.toml lists this
file in ``[tool.mypy] files``; never run). A public frame function (``with_backend``) returns ``Frame``
(pandas or polars) whichever ``backend``, and ``backend`` is a checked literal; its polars core
``<name>_frame``, which bench_nb's own code calls, is typed exactly. The lines marked ``type: ignore[...]``
are errors on purpose: mypy runs with ``warn_unused_ignores``, so if one stopped being an error (a core no
longer typed ``pl.DataFrame``, ``backend`` no longer checked) the check would fail.
``tests/frames/test_backend.py`` checks that every public function is here.
"""

from __future__ import annotations

from typing import Any, assert_type

import pandas as pd
import polars as pl

import bench_nb as bn
from bench_nb import metrics
from bench_nb.frames import judgments, questions
from bench_nb.frames.backend import Frame
from bench_nb.metrics import (
    beam,
    budget,
    clustered,
    errata,
    failures,
    judge_quality,
    latency,
    paired,
    pareto,
    ranks,
    repeats,
    replicates,
    retrieval,
)
from bench_nb.metrics.accuracy import accuracy_by_type_frame, success_rate_frame
from bench_nb.metrics.memscore import memscore_frame


def _frames(runs: bn.runformat.RunSet) -> None:
    assert_type(bn.questions_df(runs), Frame)
    assert_type(bn.questions_df(runs, backend="polars"), Frame)
    assert_type(questions.questions_frame(runs), pl.DataFrame)
    assert_type(bn.questions_df(runs), pd.DataFrame)  # type: ignore[assert-type]
    bn.questions_df(runs, backend="arrow")  # type: ignore[arg-type]
    questions.questions_frame(runs, backend="polars")  # type: ignore[call-arg]
    assert_type(bn.runs_df(runs), Frame)
    assert_type(bn.runs_df(runs, backend="polars"), Frame)
    assert_type(questions.runs_frame(runs), pl.DataFrame)
    assert_type(bn.judgments_df(runs), Frame)
    assert_type(bn.judgments_df(runs, backend="polars"), Frame)
    assert_type(judgments.judgments_frame(runs), pl.DataFrame)
    assert_type(bn.disputed_questions(runs), Frame)
    assert_type(bn.disputed_questions(runs, backend="polars"), Frame)
    assert_type(judgments.disputed_questions_frame(runs), pl.DataFrame)


def _metrics(runs: bn.runformat.RunSet, errata_: Any) -> None:
    assert_type(bn.memscore(runs), Frame)
    assert_type(bn.memscore(runs, backend="polars"), Frame)
    assert_type(memscore_frame(runs), pl.DataFrame)
    assert_type(bn.accuracy_by_type(runs), Frame)
    assert_type(bn.accuracy_by_type(runs, backend="polars"), Frame)
    assert_type(accuracy_by_type_frame(runs), pl.DataFrame)
    assert_type(bn.success_rate(runs), Frame)
    assert_type(bn.success_rate(runs, backend="polars"), Frame)
    assert_type(success_rate_frame(runs), pl.DataFrame)
    assert_type(bn.latency_stats(runs), Frame)
    assert_type(bn.latency_stats(runs, backend="polars"), Frame)
    assert_type(latency.latency_stats_frame(runs), pl.DataFrame)
    assert_type(bn.retrieval_summary(runs), Frame)
    assert_type(bn.retrieval_summary(runs, backend="polars"), Frame)
    assert_type(retrieval.retrieval_summary_frame(runs), pl.DataFrame)
    assert_type(bn.beam_scores(runs), Frame)
    assert_type(bn.beam_scores(runs, backend="polars"), Frame)
    assert_type(beam.beam_scores_frame(runs), pl.DataFrame)
    assert_type(bn.accuracy_intervals(runs), Frame)
    assert_type(bn.accuracy_intervals(runs, backend="polars"), Frame)
    assert_type(clustered.accuracy_intervals_frame(runs), pl.DataFrame)
    assert_type(bn.rank_intervals(runs), Frame)
    assert_type(bn.rank_intervals(runs, backend="polars"), Frame)
    assert_type(ranks.rank_intervals_frame(runs), pl.DataFrame)
    assert_type(bn.pareto_frontier(runs), Frame)
    assert_type(bn.pareto_frontier(runs, backend="polars"), Frame)
    assert_type(pareto.pareto_frontier_frame(runs), pl.DataFrame)
    assert_type(bn.lafs(runs), Frame)
    assert_type(bn.lafs(runs, backend="polars"), Frame)
    assert_type(budget.lafs_frame(runs), pl.DataFrame)
    assert_type(bn.budget_curve(runs), Frame)
    assert_type(bn.budget_curve(runs, backend="polars"), Frame)
    assert_type(budget.budget_curve_frame(runs), pl.DataFrame)
    assert_type(bn.failure_reasons(runs), Frame)
    assert_type(bn.failure_reasons(runs, backend="polars"), Frame)
    assert_type(failures.failure_reasons_frame(runs), pl.DataFrame)
    assert_type(bn.repeat_variance(runs), Frame)
    assert_type(bn.repeat_variance(runs, backend="polars"), Frame)
    assert_type(repeats.repeat_variance_frame(runs), pl.DataFrame)
    assert_type(bn.replicate_summary(runs), Frame)
    assert_type(bn.replicate_summary(runs, backend="polars"), Frame)
    assert_type(replicates.replicate_summary_frame(runs), pl.DataFrame)
    assert_type(bn.judge_audit(runs), Frame)
    assert_type(bn.judge_audit(runs, backend="polars"), Frame)
    assert_type(judge_quality.judge_audit_frame(runs), pl.DataFrame)
    assert_type(bn.answer_key_ceiling(errata_, runs), Frame)
    assert_type(bn.answer_key_ceiling(errata_, runs, backend="polars"), Frame)
    assert_type(errata.answer_key_ceiling_frame(errata_, runs), pl.DataFrame)
    assert_type(bn.regrade_with_errata(errata_, runs), Frame)
    assert_type(bn.regrade_with_errata(errata_, runs, backend="polars"), Frame)
    assert_type(errata.regrade_with_errata_frame(errata_, runs), pl.DataFrame)


def _result_objects(runs: bn.runformat.RunSet) -> None:
    """Functions that return a result object: its tables are ``Frame`` in its backend, and polars on it."""
    assert_type(bn.judge_agreement(runs), metrics.JudgeAgreement)
    assert_type(bn.judge_agreement(runs, backend="polars"), metrics.JudgeAgreement)
    assert_type(bn.judge_agreement(runs).pairwise, Frame)
    assert_type(bn.judge_agreement(runs).table("pairwise", "polars"), Frame)
    assert_type(bn.judge_agreement(runs).frames["pairwise"], pl.DataFrame)
    assert_type(bn.judge_agreement(runs).summary(), Frame)
    assert_type(bn.judge_agreement(runs).summary_frame(), pl.DataFrame)
    bn.judge_agreement(runs, backend="arrow")  # type: ignore[arg-type]
    assert_type(bn.compare_runs(runs), metrics.Comparison)
    assert_type(bn.compare_runs(runs, backend="polars"), metrics.Comparison)
    assert_type(bn.compare_runs(runs).frame, Frame)
    assert_type(bn.compare_runs(runs).polars, pl.DataFrame)
    assert_type(paired.paired_comparison(runs, "a", "b"), paired.PairedComparison)
    assert_type(paired.paired_comparison(runs, "a", "b").by_type, Frame)
    assert_type(paired.paired_comparison(runs, "a", "b").by_type_frame, pl.DataFrame)
