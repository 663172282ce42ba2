"""Judge agreement: Cohen's kappa for each pair of judges, as a heatmap."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import polars as pl

from bench_nb.charts.altair_import import alt


def chart_judge_kappa(
    agreement: Any, *, statistic: str = "cohen_kappa", title: str = "Judge agreement (Cohen's kappa)"
) -> alt.TopLevelMixin:
    """A judges × judges heatmap of a pairwise statistic, the value written in each cell.

    Args:
        agreement: a ``JudgeAgreement`` (``bench_nb.judge_agreement``) or its ``pairwise`` table
            (columns ``judge_a, judge_b, n`` and the statistic).
        statistic: the pairwise column to show: ``cohen_kappa``, ``percent_agreement`` or ``gwet_ac1``.
        title: the chart title.
    """
    pairwise = getattr(agreement, "pairwise", agreement)
    if isinstance(pairwise, pl.DataFrame):
        pairwise = pairwise.to_pandas()
    if not isinstance(pairwise, pd.DataFrame) or statistic not in pairwise.columns:
        raise ValueError(f"expected a JudgeAgreement or a pairwise table with a {statistic!r} column")
    judges: list[str] = []
    for a, b in zip(pairwise["judge_a"], pairwise["judge_b"], strict=True):
        judges.extend(j for j in (a, b) if j not in judges)
    rows = []
    for _, r in pairwise.iterrows():
        value = r[statistic]
        value = None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
        for a, b in ((r["judge_a"], r["judge_b"]), (r["judge_b"], r["judge_a"])):
            rows.append({"judge_a": a, "judge_b": b, "value": value, "n": int(r["n"])})
    for j in judges:
        rows.append({"judge_a": j, "judge_b": j, "value": 1.0, "n": None})
    cells = pd.DataFrame(rows)
    cells["text"] = [("n/a" if v is None or pd.isna(v) else f"{v:.2f}") for v in cells["value"]]
    cells["dark"] = [(v is not None and not pd.isna(v) and v > 0.6) for v in cells["value"]]
    base = alt.Chart(cells).encode(
        x=alt.X("judge_b:N", title=None, sort=judges, axis=alt.Axis(labelAngle=-30)),
        y=alt.Y("judge_a:N", title=None, sort=judges),
    )
    heat = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color(
            "value:Q",
            title=statistic.replace("_", " "),
            scale=alt.Scale(domain=[0, 1], scheme="blues"),
        ),
        tooltip=[
            alt.Tooltip("judge_a:N", title="judge"),
            alt.Tooltip("judge_b:N", title="judge"),
            alt.Tooltip("value:Q", title=statistic, format=".3f"),
            alt.Tooltip("n:Q", title="items both scored"),
        ],
    )
    text = base.mark_text(fontSize=13).encode(
        text="text:N",
        color=alt.condition(alt.datum.dark, alt.value("white"), alt.value("#1f2328")),
    )
    size = max(120, 70 * len(judges))
    return alt.layer(heat, text).properties(
        title=alt.Title(title, subtitle="1 = perfect agreement, 0 = chance; n/a = undefined"),
        width=size,
        height=size,
    )
