"""Charts of the judge report: the leniency audit, the prompt sweep, answer lengths per run."""

from __future__ import annotations

from typing import Any

import polars as pl

from bench_nb.charts.labels import color_scale, provider_colors
from bench_nb.charts.spec import Chart, chart, field, mark, values
from bench_nb.tables.judges import _frame  # the judge-quality frames read as the judge tables read them

_SET_ORDER = ["specific", "vague", "dont-know", "imported", "paraphrase"]


def chart_judge_audit(rates: Any, *, title: str = "Leniency audit") -> Chart:
    """``judge_error_rates`` output: one bar per (audit set, judge), the accept rate with its 95% interval.
    On the known-wrong sets lower is better (the false-positive rate); on paraphrased gold higher is."""
    frame = _frame(rates).with_columns(
        set=pl.col("generator")
        + pl.when(pl.col("kind") == "wrong").then(pl.lit(" (wrong)")).otherwise(pl.lit(" (right)")),
        rate=pl.col("accept_rate") / 100,
        low=pl.col("ci_low") / 100,
        high=pl.col("ci_high") / 100,
    )
    order = [
        f"{g} ({'right' if g == 'paraphrase' else 'wrong'})"
        for g in _SET_ORDER
        if g in set(frame["generator"])
    ]
    judges = frame["judge"].unique(maintain_order=True).to_list()
    base = {"y": field("set:N", title=None, sort=order), "yOffset": field("judge:N", sort=judges)}
    bars = {
        "mark": mark("bar", opacity=0.85),
        "encoding": base
        | {
            "x": field(
                "rate:Q", title="accepted", stack=None, scale={"domain": [0, 1]}, axis={"format": "%"}
            ),
            "color": field("judge:N", scale=color_scale(provider_colors(judges))),
            "tooltip": [
                field("judge:N"),
                field("set:N", title="audit set"),
                field("rate:Q", title="accept rate", format=".1%"),
                field("low:Q", title="95% low", format=".1%"),
                field("high:Q", title="95% high", format=".1%"),
                field("n:Q"),
            ],
        },
    }
    rules = {
        "mark": mark("rule", color="#1f2328", strokeWidth=1.2),
        "encoding": base | {"x": field("low:Q"), "x2": field("high")},
    }
    subtitle = "share of answers each judge accepts; wrong sets: lower is better"
    return chart(
        {
            "data": values(frame),
            "layer": [bars, rules],
            "title": {"text": title, "subtitle": subtitle},
            "width": 460,
            "height": {"step": 14},
        }
    )


def chart_prompt_sweep(sweep: Any, *, title: str = "Accuracy by judge prompt") -> Chart:
    """``prompt_sweep`` output: each run's accuracy under the lenient, standard and strict prompts."""
    frame = _frame(sweep).with_columns(
        run=pl.coalesce(pl.col("provider"), pl.col("run_id")) + pl.lit(" · ") + pl.col("model"),
        acc=pl.col("accuracy") / 100,
        low=pl.col("ci_low") / 100,
        high=pl.col("ci_high") / 100,
    )
    runs = frame["run"].unique(maintain_order=True).to_list()
    base = {
        "x": field("judge_prompt:N", title="judge prompt", sort=["lenient", "standard", "strict"]),
        "color": field("run:N", title="run · judge", scale=color_scale(provider_colors(runs))),
    }
    lines = {
        "mark": mark("line", point=True),
        "encoding": base
        | {
            "y": field("acc:Q", title="accuracy", scale={"domain": [0, 1]}, axis={"format": "%"}),
            "tooltip": [
                field("run:N"),
                field("judge_prompt:N", title="prompt"),
                field("acc:Q", title="accuracy", format=".1%"),
                field("rank:Q"),
            ],
        },
    }
    rules = {
        "mark": mark("rule", strokeWidth=1.2),
        "encoding": base | {"y": field("low:Q"), "y2": field("high")},
    }
    return chart(
        {
            "data": values(frame),
            "layer": [lines, rules],
            "title": {"text": title, "subtitle": "lines: accuracy; bars: 95% Wilson interval"},
            "width": 360,
            "height": 240,
        }
    )


def chart_answer_lengths(lengths: Any, *, title: str = "Answer length per run") -> Chart:
    """``answer_lengths`` output: per run, the middle half of its answers' lengths, the median and the 90th
    percentile, in words (a run that wins by talking more shows here)."""
    frame = _frame(lengths).with_columns(run=pl.coalesce(pl.col("provider"), pl.col("run_id")))
    runs = frame["run"].unique(maintain_order=True).to_list()
    base = {"y": field("run:N", title=None, sort=runs)}
    whisker = {
        "mark": mark("rule", color="#57606a"),
        "encoding": base | {"x": field("p25:Q", title="words per answer"), "x2": field("p90")},
    }
    box = {
        "mark": mark("bar", size=12, opacity=0.85),
        "encoding": base
        | {
            "x": field("p25:Q"),
            "x2": field("p75"),
            "color": field("run:N", scale=color_scale(provider_colors(runs)), legend=None),
            "tooltip": [
                field("run:N"),
                field("n:Q", title="answers"),
                field("mean:Q", format=".1f"),
                field("median:Q"),
                field("p25:Q"),
                field("p75:Q"),
                field("p90:Q"),
            ],
        },
    }
    median = {
        "mark": mark("tick", color="#1f2328", thickness=2, size=14),
        "encoding": base | {"x": field("median:Q")},
    }
    subtitle = "box: middle half; tick: median; line to the 90th percentile"
    return chart(
        {
            "data": values(frame),
            "layer": [whisker, box, median],
            "title": {"text": title, "subtitle": subtitle},
            "width": 460,
            "height": {"step": 24},
        }
    )
