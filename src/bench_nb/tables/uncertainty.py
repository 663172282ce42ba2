"""Tables of the uncertainty in a comparison: clustered intervals with rank intervals (the leaderboard), the
smallest detectable difference per question type, "can we tell them apart?", and the Pareto frontier.

Definitions: docs/statistics.md ("Clustered questions", "Power and sample size"). The metrics are imported
when a table is built (they resample with numpy, which the other tables never import).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from bench_nb.errors import ComparisonError
from bench_nb.metrics import as_questions
from bench_nb.tables.html import (
    STYLE,
    Cell,
    Table,
    esc,
    interval,
    labelled,
    labels_of,
    missing,
    num,
    pct,
    render,
    run_cell,
)

if TYPE_CHECKING:
    from bench_nb.metrics.uncertainty import ClusterBootstrap

_ALL = "all"


def _points(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None or missing(x) else f"{x * 100:.{digits}f} pts"


def _detectable_cell(x: float | None) -> Cell:
    """A detectable difference: in points, or "cannot detect any difference" when it exceeds the whole scale
    (over 100 points: too few questions for any difference of accuracy to reach significance)."""
    if x is not None and not missing(x) and x > 1:
        return Cell("cannot detect any difference", "num", title=f"{x * 100:.1f} pts: more than the scale")
    return Cell(_points(x), "num")


def _warning(text: str) -> str:
    return f'<div class="bnb-warning">⚠ {esc(text)}</div>'


def _rank(r: dict[str, Any]) -> str:
    if r["rank_low"] == r["rank_high"]:
        return f"{r['rank']} [{r['rank_low']}]"
    return f"{r['rank']} [{r['rank_low']}–{r['rank_high']}]"


def _bootstrap(data: Any, seed: int = 0) -> ClusterBootstrap:
    from bench_nb.metrics.uncertainty import cluster_bootstrap

    return cluster_bootstrap(data, seed)


def _uncertainty_frame(boot: ClusterBootstrap) -> pl.DataFrame:
    keys = ["run_id", "question_type"]

    def both(statistic: Callable[[Literal["question_type"] | None], pl.DataFrame]) -> pl.DataFrame:
        return pl.concat(
            [statistic(None).with_columns(question_type=pl.lit(_ALL)), statistic("question_type")],
            how="diagonal",
        )

    clustered = both(lambda by: boot.accuracy_intervals("clustered", by))
    wilson = both(lambda by: boot.accuracy_intervals("wilson", by)).select(
        *keys, wilson_low="ci_low", wilson_high="ci_high"
    )
    paired, _ = boot.comparable()  # ranks among the runs on one question set; the others n/a
    rank_columns = {"rank": pl.Int64, "rank_low": pl.Int64, "rank_high": pl.Int64, "group": pl.Int64}
    try:
        if paired is not boot and paired.questions["run_id"].n_unique() < 2:
            raise ComparisonError("no two runs on one question set")
        ranks = both(paired.rank_intervals).select(*keys, *rank_columns)
    except ComparisonError:  # no two runs on one question set: no ranks (the table says why)
        ranks = clustered.select(keys).with_columns(pl.lit(None, t).alias(c) for c, t in rank_columns.items())
    from bench_nb.metrics.accuracy import unscored_bounds

    bounds = both(lambda by: unscored_bounds(boot.questions, by)).select(
        *keys, "unscored", "unscored_share", "all_wrong", "all_right", "show_bounds"
    )
    return (
        clustered.join(ranks, on=keys, how="left", maintain_order="left")
        .join(wilson, on=keys, how="left", maintain_order="left")
        .join(bounds, on=keys, how="left", maintain_order="left")
        .select(
            *keys,
            "accuracy",
            "ci_low",
            "ci_high",
            "wilson_low",
            "wilson_high",
            "n",
            "clusters",
            "design_effect",
            "effective_n",
            "effective_clusters",
            "warning",
            "rank",
            "rank_low",
            "rank_high",
            "group",
            "unscored",
            "unscored_share",
            "all_wrong",
            "all_right",
            "show_bounds",
        )
    )


def table_uncertainty(data: Any, *, seed: int = 0) -> Table:
    """The leaderboard with its uncertainty: for each run, overall then per question type, the accuracy with
    its clustered 95% interval beside Wilson's (flagged, with a note, where it may cover less), the design
    effect, the effective number of questions and of haystacks, the rank with its 95% interval and the group
    of runs that cannot be told apart. When some run has more than 5% of its questions without a verdict, or
    the runs' shares differ (``metrics.accuracy.unscored_bounds``), a column beside the accuracy gives its
    bounds: every unscored question wrong, every one right. ``data``: a questions
    frame, run sources, or a ``ClusterBootstrap`` (shared with the other uncertainty tables; its own seed)."""
    boot = _bootstrap(data, seed)
    labels = labels_of(boot.questions)
    frame = _uncertainty_frame(boot)
    refused = _refused(boot)
    rows = []
    warned = 0
    show_bounds = bool(frame["show_bounds"].any())
    for r in frame.iter_rows(named=True):
        overall = r["question_type"] == _ALL
        flag: tuple[tuple[str, str], ...] = ()
        if r["warning"]:
            warned += 1
            flag = (("may under-cover", "bnb-flag"),)
        rows.append(
            [
                Cell("overall" if overall else r["question_type"], "" if overall else "bnb-sub"),
                run_cell(r["run_id"], labels),
                Cell(
                    f"{pct(r['accuracy'])} {interval(r['ci_low'], r['ci_high'])}",
                    "num",
                    title=r["warning"] or "",
                    badges=flag,
                ),
                *(
                    [
                        Cell(
                            f"{interval(r['all_wrong'], r['all_right'])} ({r['unscored']} unscored)",
                            "num",
                            title=f"{pct(r['unscored_share'])} of the questions have no verdict",
                        )
                    ]
                    if show_bounds
                    else []
                ),
                Cell(interval(r["wilson_low"], r["wilson_high"]) or "n/a", "num"),
                Cell(f"{r['n']} / {r['clusters']}", "num"),
                Cell(num(r["design_effect"], 2), "num"),
                Cell(num(r["effective_n"]), "num"),
                Cell(num(r["effective_clusters"], 1), "num"),
                Cell("n/a" if r["rank"] is None else _rank(r), "num"),
                Cell("n/a" if r["group"] is None else str(r["group"]), "num"),
            ]
        )
    notes = [
        "Clustered: 95% design-adjusted Wilson interval over the haystacks (conversations, chats), with the "
        "CR2 cluster-robust variance and Bell-McCaffrey degrees of freedom: deterministic, and it holds its "
        "level when a few haystacks hold most questions. Effective haystacks = those degrees of freedom + 1 "
        "(the number of haystacks when they are the same size, fewer when one dominates). Wilson's interval "
        "treats every question as independent and is too narrow when the design effect is above 1. "
        "Effective n = questions / design effect.",
        "Rank: 1 = best, with its 95% interval from the same resampling; runs in one group cannot be told "
        "apart by the clustered paired test (p ≥ 0.05 against the group's best run).",
        *_left_out(boot, labels),
    ]
    if warned:
        notes.append(
            f'{warned} interval{"s" if warned > 1 else ""} marked "may under-cover" rest on fewer than 10 '
            "effective wrong (or right) answers, or could not absorb one more haystack at 50% accuracy: with a "
            "few haystacks near 100%, a rare bad haystack the benchmark did not draw leaves the interval too "
            "high (in the simulations of docs/statistics.md such intervals covered as little as 27-59% at "
            "90-98% accuracy and a strong haystack effect, depending on the effective haystacks). "
            "Hover for the effective answers and haystacks; more haystacks, not more questions, would help."
        )
    if show_bounds:
        overall = frame.filter(pl.col("question_type") == _ALL)
        shares = ", ".join(
            f"{labels.get(r['run_id'], r['run_id'])} {pct(r['unscored_share'])}"
            for r in overall.iter_rows(named=True)
        )
        notes.append(
            f"Questions without a verdict (unscored, failed or not run): {shares}. Every accuracy here leaves "
            "them out; where more than 5% of a run's questions have none, or the runs differ in how many, that "
            "can decide a comparison (a judge that fails on long wrong answers, a provider that times out on "
            'hard questions). "if unscored wrong–right" gives the accuracy were every one of them wrong, and '
            "were every one right: a difference between runs that holds at the bounds does not rest on them."
        )
    html = render(
        [
            "type",
            "run",
            "accuracy [clustered 95% CI]",
            *(["if unscored wrong–right"] if show_bounds else []),
            "Wilson 95% CI",
            "questions / haystacks",
            "design effect",
            "effective n",
            "effective haystacks",
            "rank [95% CI]",
            "group",
        ],
        rows,
        caption="Accuracy with clustered intervals, and rank intervals",
        notes=notes,
        warnings=refused,
    )
    return Table(frame, html, tuple(refused))


def _refused(boot: ClusterBootstrap) -> list[str]:
    """Why the paired statistics (ranks, tell-apart) are not shown at all: no two runs hold the same
    questions."""
    from bench_nb.metrics.clustered_paired import same_questions

    paired, _ = boot.comparable()
    if paired.questions["run_id"].n_unique() >= 2:
        return []
    try:
        same_questions(boot.questions)
    except ComparisonError as e:
        return [f"No ranks or paired verdicts: no two runs hold the same questions ({e})."]
    return []  # one run: nothing to pair


def _left_out(boot: ClusterBootstrap, labels: dict[str, str]) -> list[str]:
    """The note naming the runs left out of ranks and paired verdicts: they hold other questions than the
    runs compared (``ClusterBootstrap.comparable``)."""
    paired, left_out = boot.comparable()
    if not left_out or _refused(boot):
        return []
    counts = dict(boot.questions.group_by("run_id").agg(pl.col("question_id").n_unique()).iter_rows())
    kept = paired.questions["run_id"].unique(maintain_order=True).to_list()
    names = ", ".join(f"{labels.get(r, r)} ({counts[r]} questions)" for r in left_out)
    return [
        f"Left out of ranks and paired verdicts: {names}: they hold other questions than the {len(kept)} runs "
        f"compared here ({counts[kept[0]]} questions each); paired statistics compare runs on one question set."
    ]


def table_detectable(data: Any, *, alpha: float = 0.05, power: float = 0.8) -> Table:
    """The smallest difference of accuracy this benchmark can detect (80% power, 5% two-sided), overall and
    per question type, from its size, its haystacks and the runs' own intraclass correlation."""
    from bench_nb.metrics.power import detectable_differences_frame

    q = as_questions(data)
    frame = detectable_differences_frame(q, alpha=alpha, power=power)
    labels = labels_of(q)
    several = frame["question_set"].n_unique() > 1
    rows = []
    for r in frame.iter_rows(named=True):
        row: list[object] = []
        if several:
            names = ", ".join(labels.get(x, x) for x in r["runs"].split(", "))
            row.append(Cell(f"{r['question_set']}: {names}" if r["question_type"] == _ALL else ""))
        row += [
            "overall" if r["question_type"] == _ALL else r["question_type"],
            Cell(f"{r['n']} / {r['clusters']}", "num"),
            Cell(num(r["cluster_size"], 1), "num"),
            Cell(pct(r["accuracy"]), "num"),
            Cell(num(r["icc"], 3), "num"),
            Cell(num(r["correlation"], 2), "num"),
            *(_detectable_cell(r[c]) for c in ("mde_naive", "mde", "mde_paired")),
        ]
        rows.append(row)
    html = render(
        [
            *(["question set"] if several else []),
            "type",
            "questions / haystacks",
            "questions per haystack",
            "mean accuracy",
            "ICC",
            "correlation of runs",
            "detectable, if independent",
            "detectable, two samples",
            "detectable, same questions",
        ],
        rows,
        caption=f"Smallest detectable difference ({power:.0%} power, {alpha:.0%} two-sided)",
        notes=[
            "Design effect 1 + (m − 1)·ICC with m questions per haystack and the runs' own ICC (one-way ANOVA "
            "estimate). 'If independent' ignores the haystacks, as most leaderboards do; 'same questions' is "
            "the paired design every run here uses (the runs' correlation on a question helps); n/a there "
            "with one haystack (the clustered paired test compares 2 at least). "
            "Plan a benchmark's size before a run with `bench-nb plan`.",
            *(
                [
                    "Runs on different questions are planned apart, one block per question set (runs that share "
                    "questions): pooling two benchmarks' haystacks would plan for a benchmark nobody runs."
                ]
                if several
                else []
            ),
        ],
    )
    return Table(frame, html)


def _signed_interval(low: float | None, high: float | None) -> str:
    """``[−1.5, +0.4]``: a difference's interval, whose bounds can be negative (a dash would read as minus)."""
    if low is None or high is None or missing(low) or missing(high):
        return ""
    return f"[{low * 100:+.1f}, {high * 100:+.1f}]".replace("-", "−")


_DECIDED = ("A higher", "B higher")


def _verdict_text(verdict: str, a: str, b: str) -> str:
    return {"A higher": f"{a} higher", "B higher": f"{b} higher"}.get(verdict, "cannot tell")


def _difference_cell(r: dict[str, Any]) -> Cell:
    """A difference with its interval, or a badge saying why there is none (one haystack)."""
    diff = "n/a" if missing(r["difference"]) else f"{r['difference'] * 100:+.1f} pts".replace("-", "−")
    if r["clusters"] >= 2 and not (missing(r["ci_low"]) or missing(r["ci_high"])):
        return Cell(f"{diff} {_signed_interval(r['ci_low'], r['ci_high'])}", "num")
    if not r["n"]:
        return Cell(diff, "num")
    return Cell(diff, "num", badges=(("one haystack: no test", "bnb-flag"),))


def table_tell_apart(data: Any, *, alpha: float = 0.05) -> Table:
    """The table "Can we tell them apart?": every pair of runs, overall and per question type, the clustered paired
    verdict with its interval next to what the Wilson-interval-overlap rule says; rows where the two rules
    disagree are marked. ``data`` as for ``table_uncertainty``."""
    boot = _bootstrap(data)
    labels = labels_of(boot.questions)
    if refused := _refused(boot):  # a warning alone: no empty table under it
        return Table(pl.DataFrame(), "".join([STYLE, *(_warning(w) for w in refused)]), tuple(refused))
    paired, _ = boot.comparable()
    left_out = _left_out(boot, labels)
    frame = paired.tell_apart(alpha)
    rows: list[list[Cell]] = []
    # Per pair, the types on which both rules cannot tell are one line (their numbers stay in ``data``).
    undecided: dict[tuple[str, str], list[str]] = {}
    for r in frame.iter_rows(named=True):
        if (
            r["question_type"] != _ALL
            and r["verdict"] not in _DECIDED
            and r["overlap_verdict"] not in _DECIDED
            and r["agree"]
        ):
            undecided.setdefault((r["run_a"], r["run_b"]), []).append(r["question_type"])
    for r in frame.iter_rows(named=True):
        a, b = labels.get(r["run_a"], r["run_a"]), labels.get(r["run_b"], r["run_b"])
        overall = r["question_type"] == _ALL
        pair_types = undecided.get((r["run_a"], r["run_b"]), [])
        if len(pair_types) > 1 and r["question_type"] in pair_types:
            if r["question_type"] == pair_types[0]:
                rows.append(
                    [
                        Cell(f"{a} vs {b}", title=f"{r['run_a']} vs {r['run_b']}"),
                        Cell(", ".join(pair_types), "bnb-sub"),
                        *(Cell("") for _ in range(3)),
                        Cell(f"cannot tell on these {len(pair_types)} types"),
                        Cell(""),
                        Cell("cannot tell"),
                    ]
                )
            continue
        rows.append(
            [
                Cell(f"{a} vs {b}", title=f"{r['run_a']} vs {r['run_b']}"),
                Cell("overall" if overall else r["question_type"], "" if overall else "bnb-sub"),
                Cell(f"{r['n']} / {r['clusters']}", "num"),
                _difference_cell(r),
                Cell("n/a" if missing(r["p_value"]) else f"{r['p_value']:.3g}", "num"),
                Cell(
                    _verdict_text(r["verdict"], a, b),
                    title=labelled(r["warning"], labels) if r["warning"] else "",
                    badges=(("may not hold its level", "bnb-flag"),) if r["warning"] else (),
                ),
                Cell("n/a" if missing(r["mcnemar_p"]) else f"{r['mcnemar_p']:.3g}", "num"),
                Cell(
                    _verdict_text(r["overlap_verdict"], a, b),
                    badges=() if r["agree"] else (("disagrees", "bnb-band bnb-investigate"),),
                ),
            ]
        )
    html = render(
        [
            "pair (A vs B)",
            "type",
            "questions / haystacks",
            "A − B [clustered 95% CI]",
            "clustered p",
            "paired verdict",
            "McNemar p (independent)",
            "Wilson-overlap rule",
        ],
        rows,
        caption="Can we tell them apart?",
        notes=[
            f"Paired verdict: the clustered paired test at {alpha:.0%}, and the interval that inverts it (it "
            f"excludes 0 exactly when p < {alpha:g}): the CR2 cluster-robust t on Bell-McCaffrey degrees of "
            "freedom (haystacks − 1 when they are of equal size, fewer when one holds most questions), the same "
            "test at every number of haystacks. McNemar's test ignores the "
            "haystacks and is too eager under clustering. The overlap rule calls two runs different only when "
            "their Wilson intervals do not overlap: unpaired and conservative. No correction for the number of "
            "pairs or types. The types on which both rules cannot tell are one line per pair.",
            *left_out,
        ],
        warnings=_tell_apart_warnings(frame, labels),
    )
    return Table(frame, html)


def _tell_apart_warnings(frame: pl.DataFrame, labels: Mapping[str, str]) -> list[str]:
    """One warning per pair and reason, naming the question types it holds for (a run steady on every type
    would otherwise repeat the same warning once a type)."""
    types: dict[tuple[str, str, str], list[str]] = {}
    for r in frame.iter_rows(named=True):
        if r["warning"]:
            kind = "overall" if r["question_type"] == _ALL else r["question_type"]
            types.setdefault((r["run_a"], r["run_b"], r["warning"]), []).append(kind)
    return [
        f"{labels.get(a, a)} vs {labels.get(b, b)} ({', '.join(kinds)}): {labelled(warning, labels)}"
        for (a, b, warning), kinds in types.items()
    ]


def table_pareto(data: Any) -> Table:
    """The Pareto frontier: accuracy (with its clustered interval), search latency, context tokens and cost
    per run; which runs are dominated and by which. ``data`` as for ``table_uncertainty``."""
    boot = _bootstrap(data)
    labels = labels_of(boot.questions)
    frame = boot.pareto_frontier()
    from bench_nb.metrics.pareto import compared_cost_of

    cost = compared_cost_of(frame.to_dicts())
    with_memory = cost == "total_cost_usd"
    rows = []
    for r in frame.iter_rows(named=True):
        by = ", ".join(labels.get(x, x) for x in r["dominated_by"].split(", ") if x)
        if r["missing"]:
            by = f"not comparable: no {r['missing']}"
        rows.append(
            [
                run_cell(
                    r["run_id"],
                    labels,
                    badges=(("frontier", "bnb-band bnb-good"),) if r["on_frontier"] else (),
                ),
                Cell(f"{pct(r['accuracy'])} {interval(r['ci_low'], r['ci_high'])}", "num"),
                Cell(num(r["search_ms"]), "num"),
                Cell(num(r["context_tokens"]), "num"),
                Cell("n/a" if missing(r[cost]) else f"${r[cost]:.4f}", "num"),
                Cell(by or "—"),
            ]
        )
    html = render(
        [
            "run",
            "accuracy [clustered 95% CI]",
            "search ms",
            "context tokens",
            "cost / question" + (" (with memory)" if with_memory else ""),
            "dominated by",
        ],
        rows,
        caption="Pareto frontier: accuracy against search latency, context tokens and cost",
        notes=[
            "A run is dominated when another is at least as good on every objective (higher accuracy; lower "
            "latency, tokens, cost: each one any run reports) and better on one; a run that lacks one of them "
            "is not comparable. Decided on point estimates: when the accuracy intervals overlap, a "
            "'dominated' may rest on a difference the benchmark cannot resolve.",
            "Cost: answer, judges and the memory system's own model calls (total_cost_usd), every run with a "
            "cost reporting its memory side; a part that calls no model costs 0, n/a means not known."
            if with_memory
            else "Cost: answer and judges (cost_usd); a memory system's own model calls are counted only when "
            "every run with a cost reports them. A part that calls no model costs 0; n/a means not known.",
        ],
    )
    return Table(frame, html)


def _sd_points(var: float | None) -> str:
    return "n/a" if var is None or missing(var) else f"{math.sqrt(var) * 100:.2f} pts"


def table_repeats(data: Any, judgments: Any = None) -> Table:
    """Repeated runs and judge replicates: per group of runs with the same settings, the mean accuracy, the
    between-run standard deviation, and its split into the answer/provider part and the judge part (from
    judge replicates in ``judgments``), as standard deviations in points."""
    from bench_nb.metrics.repeats import repeat_variance_frame

    q = as_questions(data)
    labels = labels_of(q)
    frame = repeat_variance_frame(q, judgments)
    rows = [
        [
            run_cell(r["group"], labels),
            Cell(str(r["runs"]), "num"),
            Cell(str(r["replicates"]), "num"),
            Cell(pct(r["accuracy_mean"], 2), "num"),
            Cell(_sd_points(None if missing(r["accuracy_sd"]) else r["accuracy_sd"] ** 2), "num"),
            Cell(_sd_points(r["var_answer"]), "num"),
            Cell(_sd_points(r["var_judge"]), "num"),
            Cell(_sd_points(r["var_total"]), "num"),
            Cell(pct(r["judge_share"], 0), "num"),
        ]
        for r in frame.iter_rows(named=True)
    ]
    repeated = bool(len(frame)) and bool((frame["runs"] > 1).any() or (frame["replicates"] > 1).any())
    notes = [
        "Runs with the same settings are repeats (bench-nb run --repeat N makes them); judge replicates are the "
        "same judge grading each answer again. SD of one run's accuracy under one judging, split by a one-way "
        "ANOVA into the answer/provider part (what rerunning changes) and the judge part (noise on fixed "
        "answers); n/a where the data cannot separate them (one run, or one replicate)."
    ]
    if not repeated:
        notes.append("No run here is repeated and no answer was judged more than once: nothing to split.")
    html = render(
        [
            "runs like",
            "runs",
            "judge replicates",
            "mean accuracy",
            "between-run SD",
            "answer/provider SD",
            "judge SD",
            "total SD",
            "judge share",
        ],
        rows,
        caption="Repeated runs: how much a run's accuracy moves",
        notes=notes,
    )
    return Table(frame, html)
