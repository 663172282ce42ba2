"""What charts share: a readable label per run, and each question's outcome."""

from __future__ import annotations

from typing import Any

import polars as pl

OUTCOMES = ("correct", "incorrect", "unscored", "failed", "in_progress", "pending")


def run_labels(frame: pl.DataFrame) -> dict[str, str]:
    """run_id -> label: the provider when it names one run only, else ``provider · run_id``."""
    runs = frame.select("run_id", "provider").unique(maintain_order=True)
    counts = runs.group_by("provider").len()
    shared = set(counts.filter(pl.col("len") > 1)["provider"].to_list())
    return {
        rid: (f"{prov} · {rid}" if prov in shared or not prov else prov) for rid, prov in runs.iter_rows()
    }


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


def category_scale(domain: list[str]) -> Any:
    """A colour scale fixing ``domain``'s order to the theme's palette, so colours match across charts."""
    import altair as alt

    from bench_nb.charts.theme import PALETTE

    return alt.Scale(domain=domain, range=[PALETTE[i % len(PALETTE)] for i in range(len(domain))])


def provider_order(frame: pl.DataFrame) -> list[str]:
    """Providers in order of first appearance."""
    return [p or "" for p in frame["provider"].unique(maintain_order=True).to_list()]
