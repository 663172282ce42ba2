"""Repeated runs: how much a run's accuracy moves when it is run again, split into the answer/provider part
and the judge part, and paired tests that pool the repeats.

Runs are repeats of one another when they share their provider and settings: the provider and the settings
fingerprint when the frame has one (a ``settings_fingerprint`` column, which leaves the provider out), else
provider, benchmark, judge, answering model, k and the question set. ``bench-nb run --repeat N`` makes N
such runs. Definitions: docs/statistics.md ("Repeated runs").
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Literal

import polars as pl

from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike, as_questions
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.metrics.clustered import outcomes
from bench_nb.metrics.clustered_paired import clustered_paired_comparisons_frame
from bench_nb.metrics.ordered import means_by

_SETTINGS = ("provider", "benchmark", "judge", "answering_model", "k")


def repeat_groups(questions: Any) -> dict[str, str]:
    """run_id -> its group: the first run (in order of appearance) with the same settings."""
    q = as_questions(questions)
    keys: dict[str, tuple[Any, ...]] = {}
    for (rid,), part in q.group_by("run_id", maintain_order=True):
        if "settings_fingerprint" in part.columns and part["settings_fingerprint"].drop_nulls().len():
            provider = part["provider"][0] if "provider" in part.columns else None
            key: tuple[Any, ...] = (provider, part["settings_fingerprint"].drop_nulls()[0])
        else:
            ids = "\n".join(sorted(part["question_id"].to_list()))
            values = tuple(
                part[c].drop_nulls()[0] if c in part.columns and part[c].drop_nulls().len() else None
                for c in _SETTINGS
            )
            key = (*values, hashlib.sha256(ids.encode()).hexdigest())
        keys[str(rid)] = key
    first: dict[tuple[Any, ...], str] = {}
    return {rid: first.setdefault(key, rid) for rid, key in keys.items()}


def _replicate_accuracies(questions: pl.DataFrame, judgments: pl.DataFrame | None) -> pl.DataFrame:
    """run_id, replicate, accuracy: each judge replicate's accuracy (replicate 1 only without judgments)."""
    if judgments is not None and "replicate" in judgments.columns:
        j = judgments.filter(pl.col("primary")) if "primary" in judgments.columns else judgments
        j = with_verdicts(j.drop("status", "correct", strict=False)).filter(pl.col("score").is_not_null())
        j = j.with_columns(accuracy=pl.col("score").cast(pl.Float64))
        return means_by(j, ["run_id", "replicate"], ["accuracy"])  # one fixed order: the same bits every call
    values = outcomes(questions).rename({"value": "accuracy"})
    return means_by(values, ["run_id"], ["accuracy"]).with_columns(replicate=pl.lit(1, pl.Int64))


def variance_components(accuracies: list[list[float]]) -> tuple[float, float, float]:
    """(answer/provider, judge, total) variance of one run's accuracy under one judging, from a balanced
    runs × judge-replicates table, by the one-way random-effects ANOVA (method of moments):
    σ²_judge = MS_within, σ²_answer = max(0, (MS_between − MS_within) / J), total = σ²_answer + σ²_judge.

    With one judge replicate the two parts cannot be told apart: total is the runs' sample variance and both
    parts are ``nan``. With one run only σ²_judge is known.
    """
    r = len(accuracies)
    j = min((len(a) for a in accuracies), default=0)
    nan = math.nan
    if r == 0 or j == 0:
        return (nan, nan, nan)
    rows = [a[:j] for a in accuracies]
    means = [sum(a) / j for a in rows]
    grand = sum(means) / r
    ms_within = (
        sum((x - m) ** 2 for a, m in zip(rows, means, strict=True) for x in a) / (r * (j - 1))
        if j > 1
        else nan
    )
    ms_between = j * sum((m - grand) ** 2 for m in means) / (r - 1) if r > 1 else nan
    if r == 1:
        return (nan, ms_within, nan)
    if j == 1:
        return (nan, nan, ms_between)
    answer = max(0.0, (ms_between - ms_within) / j)
    return (answer, ms_within, answer + ms_within)


def repeat_variance_frame(questions: QuestionsLike, judgments: Any = None) -> pl.DataFrame:
    """Between-run variance of accuracy per group of repeated runs, split into answer/provider and judge.

    Args:
        questions: a questions frame or run sources.
        judgments: a judgments frame (``judgments_df``) with judge replicates; without it the judge part is
            not estimated.

    Columns: ``group`` (its first run), ``provider``, ``runs``, ``replicates`` (judge replicates per answer),
    ``accuracy_mean``, ``accuracy_sd`` (sample SD of the runs' accuracies, their replicates averaged),
    ``var_answer``, ``var_judge``, ``var_total`` (the variance of one run's accuracy under one judging; see
    ``variance_components`` for what a single run or a single replicate leaves unknown), ``judge_share``
    (σ²_judge / total); proportions, not percent.
    """
    q = as_questions(questions)
    groups = repeat_groups(q)
    jframe = None if judgments is None else as_questions(judgments)
    acc = _replicate_accuracies(q, jframe)
    providers = (
        dict(q.select("run_id", "provider").unique("run_id").iter_rows()) if "provider" in q.columns else {}
    )
    rows: list[dict[str, Any]] = []
    for group in dict.fromkeys(groups.values()):
        members = [r for r, g in groups.items() if g == group]
        table = [acc.filter(pl.col("run_id") == r).sort("replicate")["accuracy"].to_list() for r in members]
        table = [t for t in table if t]
        if not table:
            continue
        var_answer, var_judge, total = variance_components(table)
        means = [sum(t) / len(t) for t in table]
        mean = sum(means) / len(means)
        sd = math.sqrt(sum((m - mean) ** 2 for m in means) / (len(means) - 1)) if len(means) > 1 else math.nan
        rows.append(
            {
                "group": group,
                "provider": providers.get(group, ""),
                "runs": len(table),
                "replicates": min(len(t) for t in table),
                "accuracy_mean": mean,
                "accuracy_sd": sd,
                "var_answer": var_answer,
                "var_judge": var_judge,
                "var_total": total,
                "judge_share": var_judge / total if total > 0 and not math.isnan(var_judge) else math.nan,
            }
        )
    schema = {
        "group": pl.Utf8,
        "provider": pl.Utf8,
        "runs": pl.Int64,
        "replicates": pl.Int64,
    } | dict.fromkeys(
        ("accuracy_mean", "accuracy_sd", "var_answer", "var_judge", "var_total", "judge_share"), pl.Float64
    )
    return pl.DataFrame(rows, schema=schema)


repeat_variance = with_backend(repeat_variance_frame, "repeat_variance")


def pool_repeats(questions: Any) -> pl.DataFrame:
    """One pseudo-run per group of repeats: ``run_id`` = the group, ``provider``, ``question_id``,
    ``haystack_id``, ``question_type``, and ``score`` = the question's mean score over the repeats that
    scored it (a fractional score, which the clustered metrics take)."""
    q = as_questions(questions)
    groups = repeat_groups(q)
    values = outcomes(q, "question_type").with_columns(group=pl.col("run_id").replace_strict(groups))
    providers = (
        dict(q.select("run_id", "provider").unique("run_id").iter_rows()) if "provider" in q.columns else {}
    )
    return (
        values.group_by("group", "question_id", maintain_order=True)
        .agg(pl.col("haystack_id").first(), pl.col("question_type").first(), score=pl.col("value").mean())
        .rename({"group": "run_id"})
        .with_columns(provider=pl.col("run_id").replace_strict(providers, default=""))
    )


def pooled_paired_comparisons_frame(
    questions: QuestionsLike, *, by: Literal["question_type"] | None = None
) -> pl.DataFrame:
    """The clustered paired comparisons between groups of repeated runs, each group pooled: a question's
    score is its mean over the group's repeats (``clustered_paired_comparisons`` on ``pool_repeats``)."""
    return clustered_paired_comparisons_frame(pool_repeats(questions), by=by)


pooled_paired_comparisons = with_backend(pooled_paired_comparisons_frame, "pooled_paired_comparisons")
