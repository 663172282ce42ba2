"""How much judges agree: percent agreement, Cohen's and Fleiss' kappa, Krippendorff's alpha, Gwet's AC1.

Every statistic is computed from its definition (formulas in docs/statistics.md) on a matrix of items ×
judges, and the tests check each against its reference implementation (scikit-learn, statsmodels, the
krippendorff package, Gwet's published example). An item is one (run, question); a judge's score is 0 or 1,
or missing when the judge left it unscored (or never saw it).

Missing verdicts: Krippendorff's alpha is defined on incomplete data and uses every item with at least two
verdicts. Percent agreement, Fleiss' kappa and AC1 use the items every judge scored and report how many were
dropped (``n_dropped``); each pair in ``pairwise`` uses the items both of its judges scored.

Where a statistic is undefined (zero expected disagreement, i.e. every verdict in one category; no item to
use) it is ``nan``, as the reference libraries return it: Cohen's and Fleiss' kappa and alpha are ``nan``
when every verdict is the same, even though the judges agree perfectly. AC1 stays defined there (1.0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from bench_nb.frames.questions import Backend, to_backend
from bench_nb.metrics.intervals import wilson_interval

CATEGORIES: tuple[int, ...] = (0, 1)  # a verdict's score: 0 incorrect, 1 correct
_NAN = math.nan


# --- the statistics, on counts: one row per item, one column per category ---------------------------------


def rating_counts(ratings: np.ndarray, categories: Sequence[Any] = CATEGORIES) -> np.ndarray:
    """Items × categories counts from an items × raters matrix (``nan`` marks a missing rating)."""
    ratings = np.asarray(ratings, dtype=float)
    if ratings.ndim != 2:
        raise ValueError(f"ratings must be a 2-D items × raters matrix, got shape {ratings.shape}")
    return np.stack([(ratings == c).sum(axis=1) for c in categories], axis=1).astype(float)


def percent_agreement(counts: np.ndarray) -> float:
    """Mean over items (with ≥ 2 ratings) of the share of agreeing rater pairs: Σₖ rₖ(rₖ−1) / r(r−1)."""
    r = counts.sum(axis=1)
    keep = r >= 2
    if not keep.any():
        return _NAN
    c, r = counts[keep], r[keep]
    return float(np.mean((c * (c - 1)).sum(axis=1) / (r * (r - 1))))


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa (1971) on complete data (every item rated by the same number of raters m ≥ 2).

    κ = (P̄ − P̄ₑ) / (1 − P̄ₑ), P̄ = mean percent agreement, P̄ₑ = Σⱼ pⱼ², pⱼ = share of all ratings in j.
    ``nan`` when every rating falls in one category (P̄ₑ = 1), as statsmodels returns it.
    """
    if counts.shape[0] == 0:
        return _NAN
    m = counts.sum(axis=1)
    if np.any(m != m[0]):
        raise ValueError("Fleiss' kappa needs every item rated by the same number of raters")
    if m[0] < 2 or (counts.sum(axis=0) > 0).sum() <= 1:
        return _NAN
    p = counts.sum(axis=0) / counts.sum()
    p_bar = percent_agreement(counts)
    p_e = float((p * p).sum())
    return (p_bar - p_e) / (1 - p_e)


def gwet_ac1(counts: np.ndarray) -> float:
    """Gwet's AC1 (Gwet 2008; Handbook of Inter-Rater Reliability, 4th ed., 2014), missing ratings allowed.

    AC1 = (pₐ − pₑ) / (1 − pₑ); pₐ = percent agreement over items with ≥ 2 ratings;
    pₑ = Σₖ πₖ(1 − πₖ) / (q − 1), πₖ = mean over rated items of rₖ/r, q = number of categories.
    """
    q = counts.shape[1]
    r = counts.sum(axis=1)
    rated = r >= 1
    if q < 2 or not (r >= 2).any():
        return _NAN
    pi = (counts[rated] / r[rated, None]).mean(axis=0)
    p_e = float((pi * (1 - pi)).sum() / (q - 1))
    return (percent_agreement(counts) - p_e) / (1 - p_e)


def krippendorff_alpha_nominal(counts: np.ndarray) -> float:
    """Krippendorff's alpha for nominal data, from the coincidence matrix of pairable values.

    α = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k, over items with ≥ 2 ratings (n = their ratings).
    ``nan`` when no item has two ratings or when every pairable rating is in one category.
    """
    m = counts.sum(axis=1)
    keep = m >= 2
    if not keep.any():
        return _NAN
    c, m = counts[keep], m[keep]
    pairs = c[:, :, None] * c[:, None, :]
    pairs -= np.einsum("ij,jk->ijk", c, np.eye(c.shape[1]))  # a rating is not paired with itself
    o = (pairs / (m - 1)[:, None, None]).sum(axis=0)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    observed = o.sum() - np.trace(o)
    expected = (n_c.sum() ** 2 - (n_c * n_c).sum()) / (n - 1)
    if expected == 0:
        return _NAN
    return float(1 - observed / expected)


def cohen_kappa(a: np.ndarray, b: np.ndarray, categories: Sequence[Any] = CATEGORIES) -> float:
    """Cohen's kappa of two raters on the same items: (pₒ − pₑ) / (1 − pₑ).

    ``nan`` with zero expected disagreement (both raters constant in the same category), as
    scikit-learn's ``cohen_kappa_score`` returns it.
    """
    table = confusion_counts(a, b, categories)
    n = table.sum()
    if n == 0:
        return _NAN
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    expected_disagreement = (rows.sum() * cols.sum() - rows @ cols) / (n * n)
    if expected_disagreement == 0:
        return _NAN
    observed_disagreement = (n - np.trace(table)) / n
    return float(1 - observed_disagreement / expected_disagreement)


def confusion_counts(a: np.ndarray, b: np.ndarray, categories: Sequence[Any] = CATEGORIES) -> np.ndarray:
    """Counts of (a's category, b's category) over items both rated: rows a, columns b."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.array([[float(np.sum((a == x) & (b == y))) for y in categories] for x in categories])


# --- frames -> result -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeAgreement:
    """Agreement among judges on the same items (see the module docstring for how gaps are handled).

    Tables are pandas frames (polars with ``backend="polars"``):

    - ``pairwise``: judge_a, judge_b, n, n_dropped, percent_agreement, cohen_kappa, gwet_ac1
    - ``by_type``: per question type, the same statistics as the whole (type column as given)
    - ``confusion``: judge_a, judge_b, score_a, score_b, n (all pairs; ``confusion_matrix`` shapes one)
    - ``accuracy``: per judge: scored, correct, accuracy, ci_low, ci_high (Wilson 95%), unscored
    - ``accuracy_by_run``: per run and judge, with ``rank`` of the run under that judge (1 = best)
    """

    judges: tuple[str, ...]
    n_items: int
    n_dropped: int
    percent_agreement: float
    unanimous: float
    fleiss_kappa: float
    krippendorff_alpha: float
    krippendorff_items: int
    gwet_ac1: float
    pairwise: Any
    by_type: Any
    confusion: Any
    accuracy: Any
    accuracy_by_run: Any
    ranking_changes: bool | None

    def summary(self, backend: Backend = "pandas") -> pd.DataFrame | pl.DataFrame:
        """One row per overall statistic: statistic, value, items used, items dropped."""
        total = self.n_items + self.n_dropped
        rows = [
            ("percent_agreement", self.percent_agreement, self.n_items),
            ("unanimous", self.unanimous, self.n_items),
            ("fleiss_kappa", self.fleiss_kappa, self.n_items),
            ("gwet_ac1", self.gwet_ac1, self.n_items),
            ("krippendorff_alpha", self.krippendorff_alpha, self.krippendorff_items),
        ]
        df = pl.DataFrame(
            {
                "statistic": [r[0] for r in rows],
                "value": [r[1] for r in rows],
                "items": [r[2] for r in rows],
                "dropped": [total - r[2] for r in rows],
            },
            schema={"statistic": pl.Utf8, "value": pl.Float64, "items": pl.Int64, "dropped": pl.Int64},
        )
        return to_backend(df, backend)

    def confusion_matrix(self, judge_a: str, judge_b: str) -> pd.DataFrame:
        """The 2×2 table of one pair: rows judge_a's score, columns judge_b's score."""
        conf = self.confusion if isinstance(self.confusion, pl.DataFrame) else pl.from_pandas(self.confusion)
        swap = False
        sel = conf.filter((pl.col("judge_a") == judge_a) & (pl.col("judge_b") == judge_b))
        if sel.is_empty():
            sel = conf.filter((pl.col("judge_a") == judge_b) & (pl.col("judge_b") == judge_a))
            swap = True
        if sel.is_empty():
            raise KeyError(f"no pair ({judge_a!r}, {judge_b!r}); judges are {list(self.judges)}")
        table = pd.DataFrame(0, index=list(CATEGORIES), columns=list(CATEGORIES))
        for row in sel.iter_rows(named=True):
            x, y = (row["score_b"], row["score_a"]) if swap else (row["score_a"], row["score_b"])
            table.loc[x, y] = row["n"]
        table.index.name, table.columns.name = judge_a, judge_b
        return table


def judge_agreement(
    data: Any,
    *,
    judges: Sequence[str] | None = None,
    type_column: str | None = None,
    backend: Backend = "pandas",
) -> JudgeAgreement:
    """Agreement among judges who graded the same answers.

    Args:
        data: a long frame (pandas or polars) with ``question_id``, ``judge``, ``score`` (0/1, null when
            unscored) and optionally ``run`` or ``run_id`` (part of the item), ``unscored``, ``provider`` and
            a question type column; ``judgments_df`` output works as is. Anything ``load_runs`` accepts
            is read with ``judgments_df`` first.
        judges: compare only these judges (default: every judge in ``data``, in order of appearance).
        type_column: the column for ``by_type`` (default ``question_type_norm``, else ``question_type``).
        backend: ``"pandas"`` (default) or ``"polars"`` for the tables.
    """
    long = _long_form(data, judges)
    judge_names = tuple(long["judge"].unique(maintain_order=True).to_list())
    if judges is not None:
        missing = [j for j in judges if j not in judge_names]
        if missing:
            raise ValueError(f"judge(s) {missing} have no verdict here; judges present: {list(judge_names)}")
        judge_names = tuple(judges)
    matrix, _ = _matrix(long, judge_names)
    stats = _statistics(matrix)
    if type_column is None:
        type_column = next((c for c in ("question_type_norm", "question_type") if c in long.columns), None)
    by_type = _by_type(long, judge_names, type_column)
    pairwise, confusion = _pairwise(matrix, judge_names)
    acc = _accuracy(long, ["judge"])
    by_run, changes = _accuracy_by_run(long, judge_names)
    return JudgeAgreement(
        judges=judge_names,
        n_items=stats["n_items"],
        n_dropped=stats["n_dropped"],
        percent_agreement=stats["percent_agreement"],
        unanimous=stats["unanimous"],
        fleiss_kappa=stats["fleiss_kappa"],
        krippendorff_alpha=stats["krippendorff_alpha"],
        krippendorff_items=stats["krippendorff_items"],
        gwet_ac1=stats["gwet_ac1"],
        pairwise=to_backend(pairwise, backend),
        by_type=to_backend(by_type, backend),
        confusion=to_backend(confusion, backend),
        accuracy=to_backend(acc, backend),
        accuracy_by_run=to_backend(by_run, backend),
        ranking_changes=changes,
    )


def _long_form(data: Any, judges: Sequence[str] | None) -> pl.DataFrame:
    if isinstance(data, pd.DataFrame):
        df = pl.from_pandas(data)
    elif isinstance(data, pl.DataFrame):
        df = data
    else:
        from bench_nb.frames.judgments import judgments_frame

        df = judgments_frame(data)
    missing = [c for c in ("question_id", "judge", "score") if c not in df.columns]
    if missing:
        raise ValueError(f"judge_agreement needs columns question_id, judge, score; missing {missing}")
    run_col = "run" if "run" in df.columns else "run_id" if "run_id" in df.columns else None
    df = df.with_columns(
        run_id=pl.col(run_col).cast(pl.Utf8) if run_col else pl.lit("", dtype=pl.Utf8),
        question_id=pl.col("question_id").cast(pl.Utf8),
        judge=pl.col("judge").cast(pl.Utf8),
        score=pl.col("score").cast(pl.Float64),
    )
    if "unscored" in df.columns:
        df = df.with_columns(score=pl.when(pl.col("unscored").fill_null(False)).then(None).otherwise("score"))
    bad = df.filter(pl.col("score").is_not_null() & ~pl.col("score").is_in([0.0, 1.0]))
    if len(bad):
        row = bad.row(0, named=True)
        raise ValueError(
            f"score must be 0, 1 or null; got {row['score']!r} for question {row['question_id']!r} "
            f"(judge {row['judge']!r}, run {row['run_id']!r})"
        )
    if judges is not None:
        df = df.filter(pl.col("judge").is_in(list(judges)))
    dup = df.filter(pl.struct("run_id", "question_id", "judge").is_duplicated())
    if len(dup):
        row = dup.row(0, named=True)
        raise ValueError(
            f"judge {row['judge']!r} has more than one verdict for question {row['question_id']!r} "
            f"(run {row['run_id']!r}); keep one row per (run, question, judge)"
        )
    return df


def _matrix(long: pl.DataFrame, judges: Sequence[str]) -> tuple[np.ndarray, pl.DataFrame]:
    """Items × judges scores (``nan`` = missing) and the items' keys, in order of first appearance."""
    items = long.select("run_id", "question_id").unique(maintain_order=True)
    if not judges or items.is_empty():
        return np.empty((len(items), len(judges))), items
    wide = items.join(
        long.pivot(on="judge", index=["run_id", "question_id"], values="score"),
        on=["run_id", "question_id"],
        how="left",
        maintain_order="left",
    )
    cols = [
        wide[j].cast(pl.Float64).fill_null(_NAN).to_numpy() if j in wide.columns else None for j in judges
    ]
    matrix = np.column_stack([c if c is not None else np.full(len(items), _NAN) for c in cols])
    return matrix, items


def _statistics(matrix: np.ndarray) -> dict[str, Any]:
    complete = ~np.isnan(matrix).any(axis=1) if matrix.size else np.zeros(len(matrix), dtype=bool)
    full = matrix[complete]
    out: dict[str, Any] = {"n_items": int(complete.sum()), "n_dropped": int((~complete).sum())}
    counts_all = rating_counts(matrix) if matrix.size else np.zeros((0, len(CATEGORIES)))
    if matrix.shape[1] < 2:
        nan_stats = ("percent_agreement", "unanimous", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
        return out | dict.fromkeys(nan_stats, _NAN) | {"krippendorff_items": 0}
    counts = rating_counts(full)
    out["percent_agreement"] = percent_agreement(counts)
    out["unanimous"] = float(np.mean(counts.max(axis=1) == full.shape[1])) if len(full) else _NAN
    out["fleiss_kappa"] = fleiss_kappa(counts)
    out["gwet_ac1"] = gwet_ac1(counts) if len(full) else _NAN
    out["krippendorff_alpha"] = krippendorff_alpha_nominal(counts_all)
    out["krippendorff_items"] = int((counts_all.sum(axis=1) >= 2).sum())
    return out


def _by_type(long: pl.DataFrame, judges: Sequence[str], column: str | None) -> pl.DataFrame:
    schema = {
        "question_type": pl.Utf8,
        "n_items": pl.Int64,
        "n_dropped": pl.Int64,
        "percent_agreement": pl.Float64,
        "fleiss_kappa": pl.Float64,
        "krippendorff_alpha": pl.Float64,
        "gwet_ac1": pl.Float64,
    }
    rows: list[dict[str, Any]] = []
    if column is not None and column in long.columns:
        item_type = (
            long.group_by("run_id", "question_id", maintain_order=True)
            .agg(pl.col(column).drop_nulls().first().alias("_type"))
            .with_columns(pl.col("_type").cast(pl.Utf8).fill_null("(none)"))
        )
        typed = long.join(item_type, on=["run_id", "question_id"], how="left")
        for (qtype,), part in typed.group_by("_type", maintain_order=True):
            matrix, _ = _matrix(part, judges)
            s = _statistics(matrix)
            rows.append({"question_type": qtype} | {k: s[k] for k in list(schema)[1:]})
    return pl.DataFrame(rows, schema=schema).rename({"question_type": column or "question_type"})


def _pairwise(matrix: np.ndarray, judges: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    rows: list[dict[str, Any]] = []
    conf_rows: list[dict[str, Any]] = []
    for i in range(len(judges)):
        for j in range(i + 1, len(judges)):
            a, b = matrix[:, i], matrix[:, j]
            both = ~np.isnan(a) & ~np.isnan(b)
            either = ~np.isnan(a) | ~np.isnan(b)
            a, b = a[both], b[both]
            counts = rating_counts(np.column_stack([a, b]))
            rows.append(
                {
                    "judge_a": judges[i],
                    "judge_b": judges[j],
                    "n": int(both.sum()),
                    "n_dropped": int((either & ~both).sum()),
                    "percent_agreement": percent_agreement(counts),
                    "cohen_kappa": cohen_kappa(a, b),
                    "gwet_ac1": gwet_ac1(counts),
                }
            )
            table = confusion_counts(a, b)
            for x, sx in enumerate(CATEGORIES):
                for y, sy in enumerate(CATEGORIES):
                    conf_rows.append(
                        {
                            "judge_a": judges[i],
                            "judge_b": judges[j],
                            "score_a": sx,
                            "score_b": sy,
                            "n": int(table[x, y]),
                        }
                    )
    pair_schema = {
        "judge_a": pl.Utf8,
        "judge_b": pl.Utf8,
        "n": pl.Int64,
        "n_dropped": pl.Int64,
        "percent_agreement": pl.Float64,
        "cohen_kappa": pl.Float64,
        "gwet_ac1": pl.Float64,
    }
    conf_schema = {
        "judge_a": pl.Utf8,
        "judge_b": pl.Utf8,
        "score_a": pl.Int64,
        "score_b": pl.Int64,
        "n": pl.Int64,
    }
    return pl.DataFrame(rows, schema=pair_schema), pl.DataFrame(conf_rows, schema=conf_schema)


def _accuracy(long: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    out = long.group_by(keys, maintain_order=True).agg(
        scored=pl.col("score").is_not_null().sum().cast(pl.Int64),
        correct=(pl.col("score") == 1).sum().cast(pl.Int64),
        unscored=pl.col("score").is_null().sum().cast(pl.Int64),
    )
    cis = [wilson_interval(c, n) for c, n in zip(out["correct"], out["scored"], strict=True)]
    return out.with_columns(
        accuracy=pl.when(pl.col("scored") > 0).then(pl.col("correct") / pl.col("scored")).otherwise(None),
        ci_low=pl.Series([lo for lo, _ in cis], dtype=pl.Float64),
        ci_high=pl.Series([hi for _, hi in cis], dtype=pl.Float64),
    ).select(*keys, "scored", "correct", "accuracy", "ci_low", "ci_high", "unscored")


def _accuracy_by_run(long: pl.DataFrame, judges: Sequence[str]) -> tuple[pl.DataFrame, bool | None]:
    keys = ["run_id", "provider"] if "provider" in long.columns else ["run_id"]
    acc = _accuracy(long.with_columns(pl.col(k).cast(pl.Utf8) for k in keys), [*keys, "judge"])
    acc = acc.with_columns(
        rank=pl.col("accuracy").rank(method="min", descending=True).over("judge").cast(pl.Int64)
    )
    runs = acc["run_id"].unique().to_list()
    if len(judges) < 2 or len(runs) < 2:
        return acc, None
    ranks = acc.filter(pl.col("accuracy").is_not_null()).pivot(on="judge", index="run_id", values="rank")
    present = [j for j in judges if j in ranks.columns]
    ranks = ranks.drop_nulls(present)
    if len(present) < 2 or len(ranks) < 2:
        return acc, None
    # Re-rank on the runs every judge scored, so a run missing under one judge cannot fake a change.
    orders = {tuple(ranks[j].rank(method="min").to_list()) for j in present}
    return acc, len(orders) > 1
