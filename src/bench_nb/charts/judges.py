"""Judge agreement: Cohen's kappa for each pair of judges, as a heatmap."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from bench_nb.charts.spec import Chart, chart, field, mark, values
from bench_nb.frames.backend import as_polars


def chart_judge_kappa(
    agreement: Any, *, statistic: str = "cohen_kappa", title: str = "Judge agreement (Cohen's kappa)"
) -> Chart:
    """A judges × judges heatmap of a pairwise statistic, the value written in each cell.

    Args:
        agreement: a ``JudgeAgreement`` (``bench_nb.judge_agreement``) or its ``pairwise`` table
            (columns ``judge_a, judge_b, n`` and the statistic).
        statistic: the pairwise column to show: ``cohen_kappa``, ``percent_agreement`` or ``gwet_ac1``.
    """
    frames = getattr(agreement, "frames", None)  # a JudgeAgreement keeps its tables in polars
    pairwise = frames["pairwise"] if frames is not None else as_polars(agreement)
    if pairwise is None or not {"judge_a", "judge_b", "n"} <= set(pairwise.columns):
        raise ValueError(
            "expected a JudgeAgreement (bench_nb.judge_agreement) or its pairwise table (judge_a, judge_b, n and "
            f"{statistic!r}), not {type(agreement).__name__}"
        )
    if statistic not in pairwise.columns:
        from bench_nb.registry import did_you_mean

        known = [c for c in pairwise.columns if c not in ("judge_a", "judge_b", "n", "n_dropped")]
        raise ValueError(
            f"statistic={statistic!r}: not a column of the pairwise table{did_you_mean(statistic, known)}; "
            f"one of: {', '.join(known)}"
        )
    judges: list[str] = []
    for a, b in pairwise.select("judge_a", "judge_b").iter_rows():
        judges.extend(j for j in (a, b) if j not in judges)
    rows = []
    for r in pairwise.iter_rows(named=True):
        value = r[statistic]
        value = None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
        for a, b in ((r["judge_a"], r["judge_b"]), (r["judge_b"], r["judge_a"])):
            rows.append({"judge_a": a, "judge_b": b, "value": value, "n": int(r["n"])})
    for j in judges:
        rows.append({"judge_a": j, "judge_b": j, "value": 1.0, "n": None})
    for row in rows:
        v = row["value"]
        row["text"] = "n/a" if v is None else f"{v:.2f}"
        row["dark"] = v is not None and v > 0.6
    schema = {"judge_a": pl.Utf8, "judge_b": pl.Utf8, "value": pl.Float64, "n": pl.Int64}
    cells = pl.DataFrame(rows, schema=schema | {"text": pl.Utf8, "dark": pl.Boolean})
    base = {
        "x": field("judge_b:N", title=None, sort=judges, axis={"labelAngle": -30}),
        "y": field("judge_a:N", title=None, sort=judges),
    }
    heat = {
        "mark": mark("rect", stroke="white", strokeWidth=2),
        "encoding": base
        | {
            "color": field(
                "value:Q", title=statistic.replace("_", " "), scale={"domain": [0, 1], "scheme": "blues"}
            ),
            "tooltip": [
                field("judge_a:N", title="judge"),
                field("judge_b:N", title="judge"),
                field("value:Q", title=statistic, format=".3f"),
                field("n:Q", title="items both scored"),
            ],
        },
    }
    text = {
        "mark": mark("text", fontSize=13),
        "encoding": base
        | {
            "text": field("text:N"),
            "color": {"condition": {"test": "datum.dark", "value": "white"}, "value": "#1f2328"},
        },
    }
    size = max(120, 70 * len(judges))
    return chart(
        {
            "data": values(cells),
            "layer": [heat, text],
            "title": {"text": title, "subtitle": "1 = perfect agreement, 0 = chance; n/a = undefined"},
            "width": size,
            "height": size,
        }
    )
