"""Charts of the judge report: the leniency audit, the prompt sweep, answer lengths per run."""

from __future__ import annotations

from typing import Any

import polars as pl

from bench_nb.charts.altair_import import alt
from bench_nb.charts.labels import color_scale, provider_colors
from bench_nb.frames.backend import as_polars

_SET_ORDER = ["specific", "vague", "dont-know", "imported", "paraphrase"]


def _frame(data: Any) -> pl.DataFrame:
    frame = as_polars(data)
    if frame is None:
        raise ValueError("expected a frame (pandas or polars) from bench_nb.metrics.judge_quality")
    return frame


def chart_judge_audit(rates: Any, *, title: str = "Leniency audit") -> alt.TopLevelMixin:
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
    base = alt.Chart(frame).encode(
        y=alt.Y("set:N", title=None, sort=order), yOffset=alt.YOffset("judge:N", sort=judges)
    )
    bars = base.mark_bar(opacity=0.85).encode(
        x=alt.X(
            "rate:Q", title="accepted", stack=None, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")
        ),
        color=alt.Color("judge:N", scale=color_scale(provider_colors(judges))),
        tooltip=[
            alt.Tooltip("judge:N"),
            alt.Tooltip("set:N", title="audit set"),
            alt.Tooltip("rate:Q", title="accept rate", format=".1%"),
            alt.Tooltip("low:Q", title="95% low", format=".1%"),
            alt.Tooltip("high:Q", title="95% high", format=".1%"),
            alt.Tooltip("n:Q"),
        ],
    )
    rules = base.mark_rule(color="#1f2328", strokeWidth=1.2).encode(x="low:Q", x2="high:Q")
    return alt.layer(
        bars,
        rules,
        title=alt.Title(title, subtitle="share of answers each judge accepts; wrong sets: lower is better"),
        width=460,
        height=alt.Step(14),
    )


def chart_prompt_sweep(sweep: Any, *, title: str = "Accuracy by judge prompt") -> alt.TopLevelMixin:
    """``prompt_sweep`` output: each run's accuracy under the lenient, standard and strict prompts."""
    frame = _frame(sweep).with_columns(
        run=pl.coalesce(pl.col("provider"), pl.col("run_id")) + pl.lit(" · ") + pl.col("model"),
        acc=pl.col("accuracy") / 100,
        low=pl.col("ci_low") / 100,
        high=pl.col("ci_high") / 100,
    )
    runs = frame["run"].unique(maintain_order=True).to_list()
    base = alt.Chart(frame).encode(
        x=alt.X("judge_prompt:N", title="judge prompt", sort=["lenient", "standard", "strict"]),
        color=alt.Color("run:N", title="run · judge", scale=color_scale(provider_colors(runs))),
    )
    lines = base.mark_line(point=True).encode(
        y=alt.Y("acc:Q", title="accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        tooltip=[
            alt.Tooltip("run:N"),
            alt.Tooltip("judge_prompt:N", title="prompt"),
            alt.Tooltip("acc:Q", title="accuracy", format=".1%"),
            alt.Tooltip("rank:Q"),
        ],
    )
    rules = base.mark_rule(strokeWidth=1.2).encode(y="low:Q", y2="high:Q")
    return alt.layer(
        lines,
        rules,
        title=alt.Title(title, subtitle="lines: accuracy; bars: 95% Wilson interval"),
        width=360,
        height=240,
    )


def chart_answer_lengths(lengths: Any, *, title: str = "Answer length per run") -> alt.TopLevelMixin:
    """``answer_lengths`` output: per run, the middle half of its answers' lengths, the median and the 90th
    percentile, in words (a run that wins by talking more shows here)."""
    frame = _frame(lengths).with_columns(run=pl.coalesce(pl.col("provider"), pl.col("run_id")))
    runs = frame["run"].unique(maintain_order=True).to_list()
    base = alt.Chart(frame).encode(y=alt.Y("run:N", title=None, sort=runs))
    whisker = base.mark_rule(color="#57606a").encode(x=alt.X("p25:Q", title="words per answer"), x2="p90:Q")
    box = base.mark_bar(size=12, opacity=0.85).encode(
        x="p25:Q",
        x2="p75:Q",
        color=alt.Color("run:N", scale=color_scale(provider_colors(runs)), legend=None),
        tooltip=[
            alt.Tooltip("run:N"),
            alt.Tooltip("n:Q", title="answers"),
            alt.Tooltip("mean:Q", format=".1f"),
            alt.Tooltip("median:Q"),
            alt.Tooltip("p25:Q"),
            alt.Tooltip("p75:Q"),
            alt.Tooltip("p90:Q"),
        ],
    )
    median = base.mark_tick(color="#1f2328", thickness=2, size=14).encode(x="median:Q")
    return alt.layer(
        whisker,
        box,
        median,
        title=alt.Title(title, subtitle="box: middle half; tick: median; line to the 90th percentile"),
        width=460,
        height=alt.Step(24),
    )
