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
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from bench_nb.frames.backend import Backend, Frame, as_polars, to_backend
from bench_nb.frames.judgments import collapse_replicates, judgments_frame, judgments_given, known_judges
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.metrics.accuracy import accuracy_frame
from bench_nb.text import Cell, fmt_number, render

if TYPE_CHECKING:
    import pandas as pd

CATEGORIES: tuple[int, ...] = (0, 1)  # a verdict's score: 0 incorrect, 1 correct
_NAN = math.nan

# A 2-D table as rows: a list of lists, or a 2-D numpy array (its rows are iterated, numpy is not needed).
Matrix = Sequence[Sequence[float]]
# An items × categories count table as its distinct rows, each with how many items have it. Every statistic
# here depends on the count rows only through this (with two categories and a few judges there are only a
# handful of distinct rows, so 100,000 items cost no more than ten).
Tally = list[tuple[tuple[float, ...], int]]


def _num(value: Any) -> float:
    """A rating as a float; None (missing) becomes ``nan``."""
    return _NAN if value is None else float(value)


def _tally(counts: Matrix | Tally) -> Tally:
    """The distinct rows of an items × categories count table, each with its number of items (a ``Tally``
    is returned as it is)."""
    if len(counts) and isinstance(counts[0][0], tuple):
        return cast(Tally, list(counts))
    return list(Counter(tuple(float(c) for c in row) for row in cast(Matrix, counts)).items())


# --- the statistics, on counts (one row per item, one column per category) or their tally -------------------


def rating_counts(ratings: Matrix, categories: Sequence[Any] = CATEGORIES) -> list[list[float]]:
    """Items × categories counts from an items × raters matrix (``nan`` marks a missing rating)."""
    try:
        rows = [[_num(v) for v in item] for item in ratings]
    except TypeError:
        raise ValueError("ratings must be a 2-D items × raters matrix (a sequence of rows)") from None
    return [[float(sum(1 for v in row if v == c)) for c in categories] for row in rows]


def percent_agreement(counts: Matrix | Tally) -> float:
    """Mean over items (with ≥ 2 ratings) of the share of agreeing rater pairs: Σₖ rₖ(rₖ−1) / r(r−1)."""
    agreeing = items = 0.0
    for row, w in _tally(counts):
        r = sum(row)
        if r >= 2:
            agreeing += w * sum(c * (c - 1) for c in row) / (r * (r - 1))
            items += w
    return agreeing / items if items else _NAN


def fleiss_kappa(counts: Matrix | Tally) -> float:
    """Fleiss' kappa (1971) on complete data (every item rated by the same number of raters m ≥ 2).

    κ = (P̄ − P̄ₑ) / (1 − P̄ₑ), P̄ = mean percent agreement, P̄ₑ = Σⱼ pⱼ², pⱼ = share of all ratings in j.
    ``nan`` when every rating falls in one category (P̄ₑ = 1), as statsmodels returns it.
    """
    t = _tally(counts)
    if not t:
        return _NAN
    raters = {sum(row) for row, _ in t}
    if len(raters) > 1:
        raise ValueError("Fleiss' kappa needs every item rated by the same number of raters")
    per_category = [sum(w * row[k] for row, w in t) for k in range(len(t[0][0]))]
    if raters.pop() < 2 or sum(1 for n in per_category if n > 0) <= 1:
        return _NAN
    total = sum(per_category)
    p_e = sum((n / total) ** 2 for n in per_category)
    return (percent_agreement(t) - p_e) / (1 - p_e)


def gwet_ac1(counts: Matrix | Tally) -> float:
    """Gwet's AC1 (Gwet 2008; Handbook of Inter-Rater Reliability, 4th ed., 2014), missing ratings allowed.

    AC1 = (pₐ − pₑ) / (1 − pₑ); pₐ = percent agreement over items with ≥ 2 ratings;
    pₑ = Σₖ πₖ(1 − πₖ) / (q − 1), πₖ = mean over rated items of rₖ/r, q = number of categories.
    """
    t = _tally(counts)
    q = len(t[0][0]) if t else 0
    if q < 2 or not any(sum(row) >= 2 for row, _ in t):
        return _NAN
    rated = [(row, w, sum(row)) for row, w in t if sum(row) >= 1]
    items = sum(w for _, w, _ in rated)
    pi = [sum(w * row[k] / r for row, w, r in rated) / items for k in range(q)]
    p_e = sum(x * (1 - x) for x in pi) / (q - 1)
    return (percent_agreement(t) - p_e) / (1 - p_e)


def krippendorff_alpha_nominal(counts: Matrix | Tally) -> float:
    """Krippendorff's alpha for nominal data, from the coincidence matrix of pairable values.

    α = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k, over items with ≥ 2 ratings (n = their ratings).
    ``nan`` when no item has two ratings or when every pairable rating is in one category.
    """
    t = _tally(counts)
    pairable = [(row, w) for row, w in t if sum(row) >= 2]
    if not pairable:
        return _NAN
    q = len(pairable[0][0])
    o = [[0.0] * q for _ in range(q)]  # coincidences; a rating is not paired with itself
    for row, w in pairable:
        m = sum(row)
        for c in range(q):
            for k in range(q):
                o[c][k] += w * (row[c] * row[k] - (row[c] if c == k else 0.0)) / (m - 1)
    n_c = [sum(r) for r in o]
    n = sum(n_c)
    observed = sum(map(sum, o)) - sum(o[c][c] for c in range(q))
    expected = (n * n - sum(x * x for x in n_c)) / (n - 1)
    if expected == 0:
        return _NAN
    return 1 - observed / expected


def cohen_kappa(a: Sequence[float], b: Sequence[float], categories: Sequence[Any] = CATEGORIES) -> float:
    """Cohen's kappa of two raters on the same items: (pₒ − pₑ) / (1 − pₑ).

    ``nan`` with zero expected disagreement (both raters constant in the same category), as
    scikit-learn's ``cohen_kappa_score`` returns it.
    """
    pairs = Counter(zip(map(_num, a), map(_num, b), strict=True))  # (a's category, b's category) -> items
    return _cohen_kappa([[float(pairs.get((x, y), 0)) for y in categories] for x in categories])


def _cohen_kappa(table: list[list[float]]) -> float:
    """Cohen's kappa from the raters' confusion table (rows a, columns b)."""
    n = sum(map(sum, table))
    if n == 0:
        return _NAN
    rows = [sum(r) for r in table]
    cols: list[float] = [sum(c) for c in zip(*table, strict=True)]
    by_chance = sum(r * c for r, c in zip(rows, cols, strict=True))
    expected_disagreement = (sum(rows) * sum(cols) - by_chance) / (n * n)
    if expected_disagreement == 0:
        return _NAN
    observed_disagreement = (n - sum(table[i][i] for i in range(len(table)))) / n
    return 1 - observed_disagreement / expected_disagreement


# --- frames -> result -----------------------------------------------------------------------------------------


def _table(name: str) -> cached_property[Frame]:
    """``JudgeAgreement.table(name)`` as an attribute, converted on first access (the class lists the tables)."""

    def get(self: JudgeAgreement) -> Frame:
        return self.table(name)

    return cached_property(get)


@dataclass(frozen=True)
class JudgeAgreement:
    """Agreement among judges on the same items (see the module docstring for how gaps are handled).

    Tables are pandas frames (polars with ``judge_agreement(..., backend="polars")``), converted on first
    access (``table(name, backend)`` gives any of them
    in either library; ``frames`` holds them in polars):

    - ``pairwise``: judge_a, judge_b, n, n_dropped, percent_agreement, cohen_kappa, gwet_ac1
    - ``by_type``: per question type, the same statistics as the whole (type column as given)
    - ``confusion``: judge_a, judge_b, score_a, score_b, n (all pairs; ``confusion_matrix`` shapes one)
    - ``accuracy``: per judge: scored, correct, accuracy, ci_low, ci_high (Wilson 95%; the mean score and
      ``mean_interval`` for graded scores), unscored
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
    ranking_changes: bool | None
    frames: Mapping[str, pl.DataFrame] = field(repr=False)  # the tables above, in polars
    backend: Backend = "pandas"
    # "nominal" for 0/1 verdicts; "interval" for graded scores (BEAM's rubric: fractions in [0, 1]), where
    # krippendorff_alpha is the interval-level alpha, percent_agreement counts identical scores, and the
    # kappas and AC1 (statistics of categories) are n/a.
    alpha_level: str = "nominal"

    def table(self, name: str, backend: Backend | None = None) -> Frame:
        """One of the tables (``pairwise``, ``by_type``, ``confusion``, ``accuracy``, ``accuracy_by_run``)
        as pandas or polars (default: this result's backend)."""
        if name not in self.frames:
            raise KeyError(f"no table {name!r}; tables are {sorted(self.frames)}")
        return to_backend(self.frames[name], backend or self.backend)

    pairwise = _table("pairwise")
    by_type = _table("by_type")
    confusion = _table("confusion")
    accuracy = _table("accuracy")
    accuracy_by_run = _table("accuracy_by_run")

    def summary(self, backend: Backend = "pandas") -> Frame:
        """One row per overall statistic: statistic, value, items used, items dropped (pandas by default,
        polars with ``backend="polars"``, whatever the result's backend)."""
        return to_backend(self.summary_frame(), backend)

    def summary_frame(self) -> pl.DataFrame:
        """``summary`` in polars."""
        total = self.n_items + self.n_dropped
        rows = [
            ("percent_agreement", self.percent_agreement, self.n_items),
            ("unanimous", self.unanimous, self.n_items),
            ("fleiss_kappa", self.fleiss_kappa, self.n_items),
            ("gwet_ac1", self.gwet_ac1, self.n_items),
            (
                "krippendorff_alpha" if self.alpha_level == "nominal" else "krippendorff_alpha_interval",
                self.krippendorff_alpha,
                self.krippendorff_items,
            ),
        ]
        return pl.DataFrame(
            {
                "statistic": [r[0] for r in rows],
                "value": [r[1] for r in rows],
                "items": [r[2] for r in rows],
                "dropped": [total - r[2] for r in rows],
            },
            schema={"statistic": pl.Utf8, "value": pl.Float64, "items": pl.Int64, "dropped": pl.Int64},
        )

    def _repr_html_(self) -> str:
        """The overall statistics and each pair, rounded for reading (exact: ``summary()``, ``pairwise``)."""
        pct = "{:.1%}".format
        rows = [
            [label, Cell(fmt(value), "num"), Cell(str(items), "num")]
            for label, fmt, value, items in (
                ("percent agreement", pct, self.percent_agreement, self.n_items),
                ("unanimous", pct, self.unanimous, self.n_items),
                ("Fleiss' kappa", fmt_number, self.fleiss_kappa, self.n_items),
                ("Gwet's AC1", fmt_number, self.gwet_ac1, self.n_items),
                ("Krippendorff's alpha", fmt_number, self.krippendorff_alpha, self.krippendorff_items),
            )
        ]
        pairs = [
            [
                f"{r['judge_a']} × {r['judge_b']}",
                Cell(str(r["n"]), "num"),
                Cell(f"{r['percent_agreement']:.1%}", "num"),
                Cell(fmt_number(r["cohen_kappa"]), "num"),
                Cell(fmt_number(r["gwet_ac1"]), "num"),
            ]
            for r in self.frames["pairwise"].iter_rows(named=True)
        ]
        ranking = {
            True: "the ranking of the runs changes with the judge",
            False: "every judge ranks the runs alike",
        }
        notes = [f"{self.n_dropped} item(s) left unscored by some judge."] if self.n_dropped else []
        if self.ranking_changes is not None:
            notes.append(f"Runs: {ranking[self.ranking_changes]}.")
        notes.append("Exact values: .summary(), .pairwise, .by_type, .accuracy, .accuracy_by_run.")
        return render(
            ["statistic", "value", "items"], rows, caption=f"Judge agreement ({', '.join(self.judges)})"
        ) + render(
            ["pair", "items", "agreement", "Cohen's kappa", "Gwet's AC1"],
            pairs,
            caption="Per pair",
            notes=notes,
        )

    def confusion_matrix(self, judge_a: str, judge_b: str) -> pd.DataFrame:
        """The 2×2 table of one pair (pandas): rows judge_a's score, columns judge_b's score."""
        import pandas as pd

        conf = self.frames["confusion"]
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
        judges: compare only these judges (a string is one judge; default: every judge in ``data``, in order
            of appearance).
        type_column: the column for ``by_type`` (default ``question_type_norm``, else ``question_type``).
        backend: ``"pandas"`` (default) or ``"polars"`` for the tables.
    """
    if isinstance(judges, str):  # one judge (known_judges reads it so), not its letters
        judges = [judges]
    long = _long_form(data, judges)
    judge_names = tuple(long["judge"].unique(maintain_order=True).to_list())
    if judges is not None:
        judge_names = tuple(judges)
    if type_column is None:
        type_column = next((c for c in ("question_type_norm", "question_type") if c in long.columns), None)
    elif type_column not in long.columns:
        from bench_nb.registry import did_you_mean

        raise ValueError(
            f"type_column={type_column!r}: the judgments have no such column"
            f"{did_you_mean(type_column, long.columns)}; their columns: {', '.join(long.columns)}"
        )
    graded = bool(long.filter(pl.col("score").is_not_null() & ~pl.col("score").is_in([0.0, 1.0])).height)
    if graded:
        stats, by_type, pairwise, confusion = _graded(long, judge_names, type_column)
    else:
        # One row per item with its counts and type: the overall statistics and those per type read it.
        items = _item_counts(long, type_column if type_column in long.columns else None)
        stats = _statistics(_tallies(items)[None], len(judge_names))
        by_type = _by_type(items, judge_names, type_column)
        pairwise, confusion = _pairwise(long, judge_names)
    by_run, changes = _accuracy_by_run(long, judge_names, graded=graded)
    return JudgeAgreement(
        judges=judge_names,
        ranking_changes=changes,
        frames={
            "pairwise": pairwise,
            "by_type": by_type,
            "confusion": confusion,
            "accuracy": _accuracy(long, ["judge"], graded=graded),
            "accuracy_by_run": by_run,
        },
        backend=backend,
        alpha_level="interval" if graded else "nominal",
        **stats,
    )


def _long_form(data: Any, judges: Sequence[str] | None) -> pl.DataFrame:
    df = as_polars(data)
    df = judgments_frame(data) if df is None else judgments_given(df)
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
    # judgments: score is the verdict; an unscored one is null, one outside [0, 1] raises (frames.verdicts)
    df = with_verdicts(df.drop("status", "correct", strict=False))
    judges = known_judges(df, judges)  # before the filter, which would leave none of them to name
    if judges is not None:
        df = df.filter(pl.col("judge").is_in(judges))
    df = collapse_replicates(df)  # a judge's replicates: their majority (frames.judgments)
    dup = df.filter(pl.struct("run_id", "question_id", "judge").is_duplicated())
    if len(dup):
        row = dup.row(0, named=True)
        raise ValueError(
            f"judge {row['judge']!r} has more than one verdict for question {row['question_id']!r} "
            f"(run {row['run_id']!r}); keep one row per (run, question, judge)"
        )
    return df


_COUNTS: tuple[str, ...] = tuple(f"_n{c}" for c in CATEGORIES)  # an item's verdicts per category


def _item_counts(long: pl.DataFrame, type_column: str | None = None) -> pl.DataFrame:
    """One row per item (run, question): its verdicts per category, and with ``type_column`` the item's
    type as ``_type`` (its first non-null one; ``(none)`` without)."""
    counts = [
        (pl.col("score") == c).sum().cast(pl.Int64).alias(col)
        for c, col in zip(CATEGORIES, _COUNTS, strict=True)
    ]
    if type_column is not None:
        counts.append(
            pl.col(type_column).drop_nulls().first().cast(pl.Utf8).fill_null("(none)").alias("_type")
        )
    return long.group_by("run_id", "question_id", maintain_order=True).agg(counts)


def _tallies(items: pl.DataFrame, by: str | None = None) -> dict[Any, Tally]:
    """The tally of ``_item_counts`` rows (their distinct count rows, sorted so that every call sums them in
    the same order), per value of ``by`` in order of first appearance, or under the key None."""
    keys = [by] if by is not None else []
    distinct = items.group_by(*keys, *_COUNTS).len().sort(*keys, *_COUNTS)
    groups = items[by].unique(maintain_order=True).to_list() if by is not None else [None]
    out: dict[Any, Tally] = {g: [] for g in groups}
    for r in distinct.iter_rows():
        group, row = (r[0], r[1:-1]) if by is not None else (None, r[:-1])
        out[group].append((tuple(float(v) for v in row), r[-1]))
    return out


def _statistics(every: Tally, n_judges: int) -> dict[str, Any]:
    """The statistics of a tally of all items (``_tallies``)."""
    # Scores are 0/1 or null and a judge has one row per item: an item is complete when its counts add up to
    # the number of judges.
    complete = [(row, w) for row, w in every if sum(row) == n_judges] if n_judges else []
    every = every if n_judges else []
    n_items = sum(w for _, w in complete)
    out: dict[str, Any] = {"n_items": n_items, "n_dropped": sum(w for _, w in every) - n_items}
    if n_judges < 2:
        nan_stats = ("percent_agreement", "unanimous", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
        return out | dict.fromkeys(nan_stats, _NAN) | {"krippendorff_items": 0}
    unanimous = sum(w for row, w in complete if max(row) == n_judges)
    out["percent_agreement"] = percent_agreement(complete)
    out["unanimous"] = unanimous / n_items if n_items else _NAN
    out["fleiss_kappa"] = fleiss_kappa(complete)
    out["gwet_ac1"] = gwet_ac1(complete) if n_items else _NAN
    out["krippendorff_alpha"] = krippendorff_alpha_nominal(every)
    out["krippendorff_items"] = sum(w for row, w in every if sum(row) >= 2)
    return out


def _by_type(items: pl.DataFrame, judges: Sequence[str], column: str | None) -> pl.DataFrame:
    """The statistics per question type, from ``_item_counts(long, column)`` (types in order of first
    appearance)."""
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
    if column is not None and "_type" in items.columns:
        for qtype, tally in _tallies(items, by="_type").items():
            s = _statistics(tally, len(judges))
            rows.append({"question_type": qtype} | {k: s[k] for k in list(schema)[1:]})
    return pl.DataFrame(rows, schema=schema).rename({"question_type": column or "question_type"})


def _pairwise(long: pl.DataFrame, judges: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    rows: list[dict[str, Any]] = []
    conf_rows: list[dict[str, Any]] = []
    wide = long.pivot(on="judge", index=["run_id", "question_id"], values="score") if judges else long
    for ja, jb in combinations(judges, 2):
        a, b = (pl.col(x) if x in wide.columns else pl.lit(None, pl.Float64) for x in (ja, jb))
        # (a's score, b's score) -> items; a score is null where that judge did not score the item.
        joint = {(x, y): n for x, y, n in wide.group_by(a.alias("a"), b.alias("b")).len().iter_rows()}
        both = {(x, y): n for (x, y), n in joint.items() if x is not None and y is not None}
        table = [[float(both.get((x, y), 0)) for y in CATEGORIES] for x in CATEGORIES]
        counts: Tally = [
            (tuple(float((x == c) + (y == c)) for c in CATEGORIES), n) for (x, y), n in both.items()
        ]
        n_both = sum(both.values())
        rows.append(
            {
                "judge_a": ja,
                "judge_b": jb,
                "n": n_both,
                "n_dropped": sum(n for (x, y), n in joint.items() if x is not None or y is not None) - n_both,
                "percent_agreement": percent_agreement(counts),
                "cohen_kappa": _cohen_kappa(table),
                "gwet_ac1": gwet_ac1(counts),
            }
        )
        for x, sx in enumerate(CATEGORIES):
            for y, sy in enumerate(CATEGORIES):
                conf_rows.append(
                    {
                        "judge_a": ja,
                        "judge_b": jb,
                        "score_a": sx,
                        "score_b": sy,
                        "n": int(table[x][y]),
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
    return pl.DataFrame(rows, schema=pair_schema), pl.DataFrame(conf_rows, schema=_CONFUSION_SCHEMA)


_CONFUSION_SCHEMA = {
    "judge_a": pl.Utf8,
    "judge_b": pl.Utf8,
    "score_a": pl.Int64,
    "score_b": pl.Int64,
    "n": pl.Int64,
}


def _accuracy(long: pl.DataFrame, keys: list[str], *, graded: bool = False) -> pl.DataFrame:
    """Per group of ``keys``: scored, correct (scores of 1), accuracy, its 95% interval, unscored: the
    verdicts read as ``metrics.accuracy`` reads questions (for graded scores ``accuracy`` is the mean score
    with ``mean_interval``, not the share of perfect scores; else correct / scored with Wilson's interval)."""
    verdicts = long.with_columns(status=pl.lit("evaluated"), graded=pl.lit(graded))
    return accuracy_frame(verdicts, by=keys).drop("measure")


def _accuracy_by_run(
    long: pl.DataFrame, judges: Sequence[str], *, graded: bool = False
) -> tuple[pl.DataFrame, bool | None]:
    keys = ["run_id", "provider"] if "provider" in long.columns else ["run_id"]
    acc = _accuracy(long.with_columns(pl.col(k).cast(pl.Utf8) for k in keys), [*keys, "judge"], graded=graded)
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


def krippendorff_alpha_interval(units: Sequence[Sequence[float]]) -> float:
    """Krippendorff's alpha at the interval level (squared differences), from each unit's values (the scores
    the judges gave one item; units with fewer than two values are not pairable and left out):
    alpha = 1 − D_o / D_e, D_o = (1/n) Σ_u Σ_{i≠j} (v_ui − v_uj)² / (m_u − 1), D_e = Σ_{c≠k} (v_c − v_k)² /
    (n (n − 1)) over all n pairable values. NaN when every value is the same (D_e = 0)."""
    pairable = [list(u) for u in units if len(u) >= 2]
    values = [v for u in pairable for v in u]
    n = len(values)
    if n < 2:
        return _NAN

    # Σ_{i≠j} (a_i − a_j)² = 2 (m Σ a² − (Σ a)²) for a list a of m values.
    def spread(a: Sequence[float]) -> float:
        return 2 * (len(a) * sum(x * x for x in a) - sum(a) ** 2)

    d_o = sum(spread(u) / (len(u) - 1) for u in pairable) / n
    d_e = spread(values) / (n * (n - 1))
    return 1 - d_o / d_e if d_e > 0 else _NAN


def _graded_stats(long: pl.DataFrame, n_judges: int) -> dict[str, Any]:
    """The statistics of graded scores: interval alpha, and identical-score agreement on complete items."""
    # each item's scores sorted, the items in order: the alpha's sums are the same bits in any row order
    items = (
        long.filter(pl.col("score").is_not_null())
        .group_by("run_id", "question_id")
        .agg(pl.col("score").sort())
        .sort("run_id", "question_id")
    )
    units = [list(u) for u in items["score"].to_list()]
    complete = [u for u in units if len(u) == n_judges]
    total = long.select("run_id", "question_id").unique().height
    same = sum(1 for u in complete if max(u) == min(u))
    agree = same / len(complete) if complete and n_judges >= 2 else _NAN
    return {
        "n_items": len(complete),
        "n_dropped": total - len(complete),
        "percent_agreement": agree,
        "unanimous": agree,
        "fleiss_kappa": _NAN,
        "gwet_ac1": _NAN,
        "krippendorff_alpha": krippendorff_alpha_interval(units) if n_judges >= 2 else _NAN,
        "krippendorff_items": sum(1 for u in units if len(u) >= 2),
    }


def _graded(
    long: pl.DataFrame, judges: tuple[str, ...], type_column: str | None
) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The statistics, ``by_type``, ``pairwise`` and ``confusion`` of graded scores (``_graded_stats``)."""
    by_rows = []
    if type_column is not None and type_column in long.columns:
        for (qtype,), part in long.group_by(type_column, maintain_order=True):
            st = _graded_stats(part, len(judges))
            by_rows.append(
                {type_column: str(qtype)}
                | {k: st[k] for k in ("n_items", "n_dropped", "percent_agreement", "fleiss_kappa")}
                | {"krippendorff_alpha": st["krippendorff_alpha"], "gwet_ac1": _NAN}
            )
    pair_rows = []
    for ja, jb in combinations(judges, 2):
        st = _graded_stats(long.filter(pl.col("judge").is_in([ja, jb])), 2)
        pair_rows.append(
            {
                "judge_a": ja,
                "judge_b": jb,
                "n": st["n_items"],
                "n_dropped": st["n_dropped"],
                "percent_agreement": st["percent_agreement"],
                "cohen_kappa": _NAN,
                "gwet_ac1": _NAN,
                "krippendorff_alpha_interval": st["krippendorff_alpha"],
            }
        )
    return (
        _graded_stats(long, len(judges)),
        pl.DataFrame(by_rows, infer_schema_length=None),
        pl.DataFrame(pair_rows, infer_schema_length=None),
        pl.DataFrame(schema=_CONFUSION_SCHEMA),
    )
