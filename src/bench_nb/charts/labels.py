"""What charts share: a readable label per run, and each question's outcome."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterable
from typing import Any

import polars as pl

from bench_nb.frames.backend import once_per_frame

OUTCOMES = ("correct", "incorrect", "unscored", "failed", "in_progress", "pending")


LABEL_CHARS = 40  # charts cut axis labels at this many characters (theme.AXIS_LABEL_CHARS)


def run_labels(frame: pl.DataFrame) -> dict[str, str]:
    """run_id -> label, in the leaderboard's order (``leaderboard_order``: every chart and table lists runs in
    this order): the provider when it names one run only, else ``provider · run_id``. A label longer
    than ``LABEL_CHARS`` keeps what tells its run apart: the run id without the prefix the provider's runs
    share (``sqlite · …T040000Z`` for ``sqlite-locomo-20261202T040000Z``), its end if still too long, so
    long run ids neither overlap in a chart nor cut to the same text."""
    # once per frame: every table and chart labels and orders the runs (0.1 s a pass at 200,000 rows)
    return dict(once_per_frame("labels", frame, _run_labels))


def _run_labels(frame: pl.DataFrame) -> dict[str, str]:
    runs = frame.select("run_id", "provider").unique(maintain_order=True).rows()
    rank = {rid: i for i, rid in enumerate(leaderboard_order(frame))}
    runs.sort(key=lambda r: rank.get(r[0], len(rank)))
    shared = {prov for prov, n in Counter(prov for _, prov in runs).items() if n > 1}
    out = {}
    for rid, prov in runs:
        if prov and prov not in shared:
            out[rid] = prov
            continue
        label = f"{prov} · {rid}" if prov else rid
        if len(label) > LABEL_CHARS:
            siblings = [r for r, p in runs if p == prov]
            common = os.path.commonprefix(siblings) if len(siblings) > 1 else ""  # noqa: RUF071 (characters)
            tail = rid[len(common) :] or rid
            room = LABEL_CHARS - len(f"{prov} · …") if prov else LABEL_CHARS - 1
            tail = tail[-room:]
            label = f"{prov} · …{tail}" if prov else f"…{tail}"
        out[rid] = label
    return out


def leaderboard_order(frame: pl.DataFrame) -> list[str]:
    """The run ids of a questions frame in the MemScore leaderboard's order: best accuracy first (the mean score
    of the scored questions, ``metrics.accuracy``), runs with none scored last, ties in order of first
    appearance. Another frame (without a question's status, verdict and score) keeps its order of first
    appearance."""
    return list(once_per_frame("order", frame, _leaderboard_order))


def _leaderboard_order(frame: pl.DataFrame) -> list[str]:
    runs = frame["run_id"].unique(maintain_order=True).to_list()
    if not {"status", "correct", "unscored", "score"} <= set(frame.columns):
        return runs
    from bench_nb.metrics.accuracy import accuracy_frame

    scores = dict(accuracy_frame(frame).select("run_id", "accuracy").iter_rows())
    return sorted(runs, key=lambda rid: -s if (s := scores.get(rid)) is not None else 1.0)


def with_run_label(frame: pl.DataFrame, labels: dict[str, str]) -> pl.DataFrame:
    """``frame`` with a ``run`` column holding each run's label."""
    return frame.with_columns(run=pl.col("run_id").replace_strict(labels, default=pl.col("run_id")))


def outcome_expr() -> pl.Expr:
    """A question's outcome: correct, incorrect, unscored, failed, in_progress or pending."""
    return (
        pl.when(pl.col("status") != "evaluated")
        .then(pl.col("status"))
        .when(pl.col("unscored"))
        .then(pl.lit("unscored"))
        .when(pl.col("correct"))
        .then(pl.lit("correct"))
        .otherwise(pl.lit("incorrect"))
    )


def provider_colors(providers: Iterable[str]) -> dict[str, str]:
    """provider -> colour, the same in every chart and build: ``theme.PROVIDER_COLORS`` for known ones, a
    palette colour picked from the name (sha-256) for others; a provider whose colour another provider of
    ``providers`` already has takes the next free one (in name order, so the result depends only on the set)."""
    from bench_nb.charts.theme import PALETTE, PROVIDER_COLORS

    names = list(dict.fromkeys(providers))
    colors: dict[str, str] = {p: PROVIDER_COLORS[p] for p in names if p in PROVIDER_COLORS}
    for name in sorted(p for p in names if p not in PROVIDER_COLORS):
        start = int(hashlib.sha256(name.encode()).hexdigest(), 16) % len(PALETTE)
        free = [PALETTE[(start + i) % len(PALETTE)] for i in range(len(PALETTE))]
        colors[name] = next((c for c in free if c not in colors.values()), free[0])
    return {p: colors[p] for p in names}


def run_colors(frame: pl.DataFrame, labels: dict[str, str]) -> dict[str, str]:
    """run label -> colour: each run its provider's colour (``provider_colors``); a provider's second and
    later runs (by run id) take palette colours no provider of ``frame`` uses."""
    from bench_nb.charts.theme import PALETTE

    runs = frame.select("run_id", "provider").unique(maintain_order=True)
    providers = [p or "" for p in runs["provider"].to_list()]
    by_provider = provider_colors(providers)
    spare = [c for c in PALETTE if c not in by_provider.values()]
    first: dict[str, str] = {}
    for rid, prov in sorted(runs.iter_rows(), key=lambda r: str(r[0])):
        first.setdefault(prov or "", rid)
    extra = sorted(rid for rid, prov in runs.iter_rows() if first[prov or ""] != rid)
    colors = {rid: by_provider[prov or ""] for rid, prov in runs.iter_rows() if first[prov or ""] == rid}
    colors.update(
        {rid: spare[i % len(spare)] if spare else PALETTE[i % len(PALETTE)] for i, rid in enumerate(extra)}
    )
    return {labels.get(rid, rid): colors[rid] for rid in runs["run_id"].to_list()}


def color_scale(colors: dict[str, str]) -> Any:
    """A colour scale giving each domain value (in the legend's order) its colour in ``colors``."""
    return {"domain": list(colors), "range": list(colors.values())}


def provider_order(frame: pl.DataFrame) -> list[str]:
    """Providers in order of first appearance."""
    return [p or "" for p in frame["provider"].unique(maintain_order=True).to_list()]
