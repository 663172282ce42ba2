"""BEAM's scores, aggregated by its own rules, with intervals over chats (Student's t).

For one run (one tier) and one reading of partial credit:

1. a question's score: the rubric judge's (``score``: 0.5 as 0.5; ``published_score``: the official code's
   reading, each item's 0.5 truncated to 0; event ordering is the same number in both);
2. a chat's ability score: the mean over its scored questions of that ability;
3. the ability's score: the mean over chats (of the chats that have a scored question of it);
4. overall: the mean of the ten abilities' scores, each weighted equally.

Intervals: Student's t over the chats, deterministic. An ability's score is the mean of K chat values, so
its interval is mean ± t_{K−1}·s/√K (the one-sample t interval of the chat means); the overall score is
linearised over the chats (uₖ: chat k's contribution to the overall's deviation, the mean over abilities
of (vₖₐ − mₐ)/Kₐ), V = K/(K−1)·Σuₖ², which is s²/K of the chats' own overall when every chat has every
ability. Both clipped to [0, 1], at ``confidence``; none with fewer than 2 chats. Until session 9 this was a
seeded cluster bootstrap (2,000 resamples, the expanded percentile interval), whose ends moved by up to
0.025 across seeds where the table shows 0.001; the t interval is the limit that interval approximates
(docs/statistics.md, "BEAM scores").

A run is partial when one of its BEAM questions is not scored (failed, not finished, unscored), an ability
has no scored question, or (for a named tier, ``beam-100k`` ...) it covers fewer chats than the tier has: its
rows say ``partial``, and its overall row says ``comparable = False`` (an overall score over fewer than ten
abilities, or over a subset of the questions, is not BEAM's overall score).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from bench_nb.benchmarks.beam import PartialCredit
from bench_nb.benchmarks.registry import benchmark_traits
from bench_nb.frames.backend import with_backend
from bench_nb.frames.questions import QuestionsLike, as_questions
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.metrics.intervals import check_level, student_t_quantile
from bench_nb.metrics.ordered import means_by
from bench_nb.taxonomy import BEAM_ABILITIES, BEAM_TO_NORM

READINGS: dict[str, str] = {"float": "0.5 as 0.5", "as-published": "as published (0.5 counted as 0)"}
OVERALL = "overall"
SCHEMA: dict[str, Any] = {
    "run_id": pl.Utf8,
    "provider": pl.Utf8,
    "benchmark": pl.Utf8,
    "ability": pl.Utf8,
    "norm_type": pl.Utf8,
    "score": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "chats": pl.Int64,
    "questions": pl.Int64,
    "target": pl.Int64,
    "partial": pl.Boolean,
    "comparable": pl.Boolean,
    "partial_credit": pl.Utf8,
    "reading": pl.Utf8,
}


def beam_scores_frame(
    data: QuestionsLike, partial_credit: PartialCredit = "float", *, confidence: float = 0.95
) -> pl.DataFrame:
    """BEAM's scores by its own rules: one row per run and ability (``run_id, provider, benchmark, ability,
    norm_type`` (the ability's normalised question type), ``score, ci_low, ci_high, chats`` (chats with a
    scored question), ``questions`` (scored), ``target`` (asked), ``partial``, ``comparable``,
    ``partial_credit`` and its ``reading`` in words) plus an ``overall`` row per run: per
    ability the mean over chats of each chat's mean question score, overall the ten abilities weighted
    equally, intervals by Student's t over the chats (deterministic: ``bench_nb.metrics.beam``).

    Args:
        data: BEAM runs, or a questions frame (runs of other benchmarks in it are left out).
        partial_credit: ``"float"`` (a rubric item's 0.5 counts 0.5) or ``"as-published"`` (BEAM's own code:
            each item's 0.5 counts 0). Every row says which in ``reading``.
        confidence: the intervals' coverage.
    """
    if partial_credit not in READINGS:
        raise ValueError(f"partial_credit must be 'float' or 'as-published', not {partial_credit!r}")
    check_level("confidence", confidence, "0.95")
    rows: list[dict[str, Any]] = []
    questions = as_questions(data)
    graded = [b for b in questions["benchmark"].drop_nulls().unique().to_list() if benchmark_traits(b).graded]
    beam = questions.filter(
        pl.col("benchmark").is_in(graded) & pl.col("question_type").is_in(list(BEAM_ABILITIES))
    )
    for (run_id,), run in beam.partition_by(["run_id"], as_dict=True, maintain_order=True).items():
        rows.extend(_run_rows(str(run_id), run, partial_credit, confidence))
    return pl.DataFrame(rows, schema=SCHEMA)


beam_scores = with_backend(beam_scores_frame, "beam_scores")


def _run_rows(
    run_id: str, run: pl.DataFrame, partial_credit: PartialCredit, confidence: float
) -> list[dict[str, Any]]:
    value = pl.col("score") if partial_credit == "float" else pl.coalesce("published_score", "score")
    scored = with_verdicts(run).filter(pl.col("score").is_not_null())  # frames.verdicts' one rule
    # each chat's mean per ability added in one fixed order (metrics.ordered): the same bits on every call
    per_chat = means_by(
        scored.with_columns(v=value.cast(pl.Float64)), ["haystack_id", "question_type"], ["v"]
    )
    chats = sorted(run["haystack_id"].unique().to_list(), key=_natural)
    index = {c: i for i, c in enumerate(chats)}
    matrix = np.full((len(chats), len(BEAM_ABILITIES)), np.nan)
    for hid, ability, v in per_chat.select("haystack_id", "question_type", "v").iter_rows():
        matrix[index[hid], BEAM_ABILITIES.index(ability)] = v
    point = _ability_means(np.ones((1, len(chats))), matrix)[0]
    targets = run.group_by("question_type").len()
    target_of = dict(targets.iter_rows())
    n_scored = dict(scored.group_by("question_type").len().iter_rows())
    base = {
        "run_id": run_id,
        "provider": run["provider"][0],
        "benchmark": run["benchmark"][0],
        "partial_credit": partial_credit,
        "reading": READINGS[partial_credit],
    }
    rows = []
    partial_any = False
    for j, ability in enumerate(BEAM_ABILITIES):
        present = int((~np.isnan(matrix[:, j])).sum())
        low, high = _t_interval(point[j], _deviations(matrix[:, j : j + 1], point[j : j + 1]), confidence)
        partial = n_scored.get(ability, 0) < target_of.get(ability, 0) or present == 0
        partial_any |= partial
        rows.append(
            base
            | {
                "ability": ability,
                "norm_type": BEAM_TO_NORM[ability],
                "score": None if np.isnan(point[j]) else float(point[j]),
                "ci_low": _num(low),
                "ci_high": _num(high),
                "chats": present,
                "questions": int(n_scored.get(ability, 0)),
                "target": int(target_of.get(ability, 0)),
                "partial": partial,
                "comparable": not partial,
            }
        )
    expected = benchmark_traits(str(base["benchmark"])).haystacks
    partial_any |= expected is not None and len(chats) < expected
    overall = _overall(point[None, :])[0]
    low, high = _t_interval(overall, _deviations(matrix, point), confidence)
    rows.append(
        base
        | {
            "ability": OVERALL,
            "norm_type": OVERALL,
            "score": None if np.isnan(overall) else float(overall),
            "ci_low": _num(low),
            "ci_high": _num(high),
            "chats": len(chats),
            "questions": len(scored),
            "target": len(run),
            "partial": partial_any,
            "comparable": not partial_any,
        }
    )
    return rows


def _ability_means(weights: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Per row of chat weights (resample counts), each ability's mean over the chats that have it."""
    present = ~np.isnan(matrix)
    total = weights @ np.where(present, matrix, 0.0)
    count = weights @ present.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def _overall(ability_scores: np.ndarray) -> np.ndarray:
    """The equal-weight mean of the abilities that have a score (NaN when none has)."""
    present = ~np.isnan(ability_scores)
    count = present.sum(axis=1)
    total = np.where(present, ability_scores, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def _deviations(matrix: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Each chat's uₖ: its contribution to the equal-weight mean of the columns' (abilities') means, the
    mean over the columns with a score of (vₖₐ − mₐ)/Kₐ (0 where chat k has no value); only the chats with
    a value in some column (the mean's linearisation over chats)."""
    present = ~np.isnan(matrix)
    used = present.any(axis=0) & ~np.isnan(means)
    if not used.any():
        return np.zeros(0)
    counts = present[:, used].sum(axis=0)
    dev = np.where(present[:, used], matrix[:, used] - means[used], 0.0) / counts
    return np.asarray(dev.mean(axis=1)[present[:, used].any(axis=1)])


def _t_interval(mean: float, u: np.ndarray, confidence: float) -> tuple[float, float]:
    """mean ± t_{K−1, (1+confidence)/2}·√(K/(K−1)·Σuₖ²), clipped to [0, 1]; ``nan`` with fewer than 2 chats."""
    k = len(u)
    if k < 2 or np.isnan(mean):
        return (np.nan, np.nan)
    half = student_t_quantile((1 + confidence) / 2, k - 1) * float(np.sqrt(k / (k - 1) * (u**2).sum()))
    return (max(0.0, mean - half), min(1.0, mean + half))


def _num(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _natural(hid: str) -> tuple[str, int]:
    head, _, tail = hid.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (hid, 0)
