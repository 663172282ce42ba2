"""Tables of the judge report: the leniency audit, the prompt sweep, judges against human labels, corrected
accuracy, length bias, and the plain-words verdict at the top (``judge_verdict``). Every number with its
interval; every text escaped. The numbers come from ``bench_nb.metrics.judge_quality``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from bench_nb.frames.backend import as_polars
from bench_nb.tables.html import Cell, Table, interval, labels_of, missing, num, pct, render, run_cell
from bench_nb.text import STYLE, esc

# An audit's false-positive rate (percent) above which a judge is not to be believed on that kind of answer.
FPR_INVESTIGATE = 10.0
FPR_ADEQUATE = 3.0
FEW_LABELS = 30  # fewer human labels than this: the verdict says its error rates are rough
# Fewer labels than this on either side (answers people call right, or wrong): the labels decide nothing. At 10
# a 90% rate's 95% Wilson interval is about 60-98%, just narrow enough to tell a judge that accepts half of the
# wrong answers from one that rejects most; below it the verdict and the corrected scores say "cannot tell".
MIN_LABELS_EACH = 10


def _frame(data: Any) -> pl.DataFrame:
    frame = as_polars(data)
    if frame is None:
        raise ValueError("expected a frame (pandas or polars) from bench_nb.metrics.judge_quality")
    return frame


def _pts(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None or missing(x) else f"{x:.{digits}f}%"


def _fpr_badge(rate: float | None) -> tuple[tuple[str, str], ...]:
    if rate is None or missing(rate):
        return ()
    if rate > FPR_INVESTIGATE:
        return (("lenient", "bnb-band bnb-investigate"),)
    if rate > FPR_ADEQUATE:
        return (("adequate", "bnb-band bnb-adequate"),)
    return (("sound", "bnb-band bnb-excellent"),)


_SET_TEXT = {
    "specific": "specific but wrong",
    "vague": "vague but topical",
    "dont-know": "“I don't know”",
    "imported": "imported wrong answers",
    "paraphrase": "paraphrased gold (right)",
}


def _rate_cell(r: dict[str, Any] | None, unit: str, *, badged: bool) -> Cell:
    """An accept rate with its interval ("—" without a row); the count of ``unit`` as its tooltip, and the
    false-positive badge on a known-wrong set (``badged``)."""
    if r is None:
        return Cell("—", "num")
    return Cell(
        f"{_pts(r['accept_rate'])} {interval(r['ci_low'], r['ci_high'], scale=1)}",
        "num",
        title=f"{r['n']} {unit}",
        badges=_fpr_badge(r["accept_rate"]) if badged else (),
    )


def table_judge_audit(rates: Any) -> Table:
    """``judge_error_rates`` output as one row per judge: the accept rate on each known-wrong set (its
    false-positive rate) and on the known-correct set (its sensitivity), with Wilson intervals."""
    frame = _frame(rates)
    sets = [s for s in ("specific", "vague", "dont-know", "imported") if s in set(frame["generator"])]
    sets += [s for s in sorted(set(frame["generator"])) if s not in sets and s != "paraphrase"]
    has_correct = "paraphrase" in set(frame["generator"])
    rows = []
    for judge in frame["judge"].unique(maintain_order=True).to_list():
        mine = {r["generator"]: r for r in frame.filter(pl.col("judge") == judge).iter_rows(named=True)}
        row: list[object] = [Cell(judge)]
        row += [_rate_cell(mine.get(s), "answers", badged=True) for s in sets]
        if has_correct:
            row.append(_rate_cell(mine.get("paraphrase"), "answers", badged=False))
        rows.append(row)
    n = {
        s: int(frame.filter(pl.col("generator") == s)["n"].fill_null(0).sum()) for s in [*sets, "paraphrase"]
    }
    n = {s: v // max(1, frame.filter(pl.col("generator") == s)["judge"].n_unique()) for s, v in n.items()}
    headers = ["judge", *[f"accepts {_SET_TEXT.get(s, s)} (n={n[s]})" for s in sets]]
    if has_correct:
        headers.append(f"accepts {_SET_TEXT['paraphrase']} (n={n['paraphrase']})")
    html = render(
        headers,
        rows,
        caption="Leniency audit: how often each judge accepts answers known to be wrong",
        notes=[
            "Accept rate on a known-wrong set = the judge's false-positive rate; on the paraphrased gold answers "
            "= its sensitivity (100% minus the false-negative rate). 95% Wilson intervals over the questions. "
            f"Badges: above {FPR_INVESTIGATE:g}% lenient, above {FPR_ADEQUATE:g}% adequate, else sound."
        ],
    )
    return Table(frame, html)


def table_judge_audit_by_type(rates: Any) -> Table:
    """``judge_error_rates(..., by="question_type")`` output: the false-positive rate per wrong-answer set,
    judge and question type."""
    order = {"specific": 0, "vague": 1, "dont-know": 2}
    frame = (
        _frame(rates)
        .filter(pl.col("kind") == "wrong")
        .with_columns(_o=pl.col("generator").replace_strict(order, default=3, return_dtype=pl.Int64))
        .sort("_o", "generator", "judge")
    )
    types = sorted(set(frame["question_type"]))
    rows = []
    for (generator, judge), part in frame.group_by(["generator", "judge"], maintain_order=True):
        by = {r["question_type"]: r for r in part.iter_rows(named=True)}
        row: list[object] = [Cell(str(generator), title=_SET_TEXT.get(str(generator), "")), Cell(str(judge))]
        row += [_rate_cell(by.get(t), "questions", badged=True) for t in types]
        rows.append(row)
    html = render(
        ["wrong-answer set", "judge", *types],
        rows,
        caption="False-positive rate per question type",
        notes=["95% Wilson intervals over the questions of each type."],
    )
    return Table(frame, html)


def table_prompt_sweep(sweep: Any) -> Table:
    """``prompt_sweep`` output: each run's accuracy under each judge prompt, the move against the standard
    prompt, and the run's rank under that prompt."""
    frame = _frame(sweep)
    labels = labels_of(frame) if not frame.is_empty() else {}
    rows = [
        [
            run_cell(r["run_id"], labels),
            Cell(r["model"]),
            Cell(r["judge_prompt"]),
            Cell(
                f"{_pts(r['accuracy'])} {interval(r['ci_low'], r['ci_high'], scale=1)}",
                "num",
                title=f"{r['scored']} scored",
            ),
            Cell("" if missing(r["change"]) else f"{r['change']:+.1f} pts", "num"),
            Cell(str(r["rank"]), "num"),
        ]
        for r in frame.iter_rows(named=True)
    ]
    from bench_nb.metrics.judge_quality import ranking_moves

    moved = ranking_moves(frame) if not frame.is_empty() else None
    warnings = ["The ranking of the runs CHANGES with the judge prompt."] if moved else []
    html = render(
        ["run", "judge model", "prompt", "accuracy [95% CI]", "vs standard", "rank"],
        rows,
        caption="Prompt sweep: accuracy under judge prompts of graded strictness",
        notes=[
            "The same answers graded by one judge model with the lenient, standard and strict prompts "
            "(bench_nb.judges.prompts). Rank 1 = best run under that prompt."
        ],
        warnings=warnings,
    )
    return Table(frame, html, tuple(warnings))


def table_judge_vs_human(versus: Any) -> Table:
    """``judge_vs_human`` output: per judge, sensitivity and specificity against the human labels with
    their intervals, agreement, Cohen's kappa and Gwet's AC1."""
    frame = _frame(versus)
    rows = [
        [
            Cell(r["judge"]),
            Cell(str(r["n"]), "num", title=f"{r['n_correct']} right, {r['n_incorrect']} wrong by the labels"),
            Cell(f"{pct(r['sensitivity'])} {interval(r['sensitivity_low'], r['sensitivity_high'])}", "num"),
            Cell(f"{pct(r['specificity'])} {interval(r['specificity_low'], r['specificity_high'])}", "num"),
            Cell(pct(r["agreement"]), "num"),
            Cell(num(r["cohen_kappa"], 3), "num"),
            Cell(num(r["gwet_ac1"], 3), "num"),
        ]
        for r in frame.iter_rows(named=True)
    ]
    html = render(
        [
            "judge",
            "labelled answers",
            "sensitivity [95% CI]",
            "specificity [95% CI]",
            "agreement",
            "Cohen's κ",
            "Gwet's AC1",
        ],
        rows,
        caption="Judges against the human labels",
        notes=[
            "Sensitivity: share of the answers people call right that the judge accepts; specificity: share of "
            "those people call wrong that it rejects. Weighted by the sample's strata, Wilson intervals on the "
            "effective sample size. Unsure labels are left out."
        ],
    )
    return Table(frame, html)


def table_corrected(corrected: Any) -> Table:
    """``corrected_accuracy_table`` output: raw accuracy beside the Rogan-Gladen corrected accuracy, and
    where the error rates came from (human labels, or the leniency audit, labelled as such)."""
    frame = _frame(corrected)
    labels = labels_of(frame) if not frame.is_empty() else {}
    rows = []
    for r in frame.iter_rows(named=True):
        fixed = r["corrected"]
        move = None if fixed is None or missing(fixed) else fixed - r["accuracy"]
        rows.append(
            [
                run_cell(r["run_id"], labels),
                Cell(r["judge"]),
                Cell(
                    f"{_pts(r['accuracy'])} {interval(r['ci_low'], r['ci_high'], scale=1)}",
                    "num",
                    title=f"{r['scored']} scored",
                ),
                Cell(
                    "—"
                    if move is None
                    else f"{_pts(fixed)} {interval(r['corrected_low'], r['corrected_high'], scale=1)}",
                    "num",
                ),
                Cell("" if move is None else f"{move:+.1f} pts", "num"),
                Cell(r["source"] or "no error rates for this judge"),
            ]
        )
    html = render(
        ["run", "judge", "raw accuracy [95% CI]", "corrected [95% CI]", "moves", "error rates from"],
        rows,
        caption="Accuracy corrected for the judge's errors (Rogan-Gladen)",
        notes=[
            "corrected = (raw + specificity − 1) / (sensitivity + specificity − 1), clipped to [0, 100%]; the "
            "interval carries the uncertainty of the raw accuracy and of the error rates (Lang & Reiczigel's "
            "adjusted delta method, which holds when an error rate is estimated as 0). Both intervals count "
            "the answers of one haystack (conversation) as one cluster: the raw one is the clustered interval, "
            "and the correction takes the raw accuracy as worth n / design effect independent answers. From "
            "the leniency audit it assumes the run's wrong answers are as hard to catch as the audit's "
            "specific-but-wrong ones."
        ],
    )
    return Table(frame, html)


def table_length_bias(bias: Any, lengths: Any) -> Table:
    """``length_bias`` (per judge: accuracy points per 10 words, with its interval) and ``answer_lengths``
    (per run: the distribution of answer lengths) as two tables."""
    b, n = _frame(bias), _frame(lengths)
    labels = labels_of(n) if not n.is_empty() else {}
    brows = []
    for r in b.iter_rows(named=True):
        slope, lo, hi = r["slope"], r["ci_low"], r["ci_high"]
        flag = (
            (("longer answers score higher", "bnb-band bnb-adequate"),)
            if lo is not None and not missing(lo) and lo > 0
            else ()
        )
        brows.append(
            [
                Cell(r["judge"]),
                Cell(str(r["n"]), "num"),
                Cell(num(r["mean_words"], 1), "num"),
                Cell(
                    "n/a" if slope is None or missing(slope) else f"{slope:+.2f} pts [{lo:+.2f}, {hi:+.2f}]",
                    "num",
                    badges=flag,
                ),
            ]
        )
    lrows = [
        [
            run_cell(r["run_id"], labels),
            Cell(str(r["n"]), "num"),
            Cell(num(r["mean"], 1), "num"),
            Cell(num(r["median"], 0), "num"),
            Cell(f"{num(r['p25'], 0)}–{num(r['p75'], 0)}", "num"),
            Cell(num(r["p90"], 0), "num"),
            Cell(num(r["max"], 0), "num"),
        ]
        for r in n.iter_rows(named=True)
    ]
    html = render(
        ["judge", "answers", "mean words", "accuracy per 10 more words [95% CI]"],
        brows,
        caption="Does the judge reward longer answers?",
        notes=[
            "Least-squares slope of the verdict (0/100) on the answer's length, all runs pooled, with a "
            "heteroskedasticity-robust (HC1) 95% interval. A positive slope can be real (longer answers carry "
            "more facts) or the judge's bias: read it beside the audit."
        ],
    ) + render(
        ["run", "answers", "mean words", "median", "middle half", "90th pct", "longest"],
        lrows,
        caption="Answer length per run (words)",
        notes=["A run that wins by talking more shows here."],
    )
    return Table(b, html)


def judge_verdict(
    *,
    rates: Any = None,
    versus: Any = None,
    corrected: Any = None,
    sweep: Any = None,
    agreement: Any = None,
    used: Sequence[str] | None = None,
) -> Table:
    """The report's verdict in plain words: which judge to trust and why, how far each run's score moves
    under correction, and whether the runs' order depends on the judge or its prompt. ``used``: the judges
    the runs were graded by; a lenient audited judge outside them (an audit may test one on purpose, as the
    demo's does ``overlap``) gets no "do not believe" line."""
    lines: list[str] = []
    data: list[dict[str, Any]] = []
    trust: str | None = None
    v = _frame(versus) if versus is not None else None
    r = _frame(rates) if rates is not None else None
    if r is not None and "unreadable" in r.columns:  # a judge none of whose audit verdicts could be read
        per_judge = r.group_by("judge", maintain_order=True).agg(pl.col("n", "unreadable").sum())
        for judge, _, count in per_judge.filter(pl.col("n") == 0).iter_rows():
            lines.append(f"Do not use {judge}: none of its {count} verdicts on the audit sets could be read.")
            data.append({"kind": "do not use", "judge": judge, "basis": "leniency audit", "youden": None})
        r = r.filter(pl.col("n") > 0)
    # judge -> its false-positive rate on specific-but-wrong answers, when high
    lenient: dict[str, float] = {}
    if r is not None:
        high = (
            (pl.col("kind") == "wrong")
            & (pl.col("generator") == "specific")
            & (pl.col("accept_rate") > FPR_INVESTIGATE)
        )
        lenient = dict(r.filter(high).select("judge", "accept_rate").iter_rows())
    few: dict[str, str] = {}  # judge -> why its human labels decide nothing
    if v is not None:
        for row in v.filter(
            (pl.col("n_correct") < MIN_LABELS_EACH) | (pl.col("n_incorrect") < MIN_LABELS_EACH)
        ).iter_rows(named=True):
            few[row["judge"]] = (
                f"{row['n']} human labels ({row['n_correct']} right, {row['n_incorrect']} wrong; at least "
                f"{MIN_LABELS_EACH} of each are needed)"
            )
        if few and v.filter(~pl.col("judge").is_in(list(few))).is_empty():
            judge, why = next(iter(few.items()))
            lines.append(
                f"Cannot tell which judge to trust from the human labels: {judge} has {why}. "
                + ("The leniency audit below is the better guide; label" if rates is not None else "Label")
                + " more answers with bench_nb.widgets.label_answers."
            )
    both = ~pl.col("judge").is_in(list(few)) & (pl.col("n_correct") > 0) & (pl.col("n_incorrect") > 0)
    if v is not None and not v.filter(both).is_empty():
        scored = v.filter(both).with_columns(
            youden=pl.col("sensitivity") + pl.col("specificity") - 1,
            flagged=pl.col("judge").is_in(list(lenient)),
        )
        best = scored.sort(["flagged", "youden"], descending=[False, True]).row(0, named=True)
        trust = best["judge"]
        caveat = (
            f" It is also the one the leniency audit flags ({lenient[trust]:.1f}% of specific-but-wrong "
            "answers accepted): label more answers before believing it."
            if trust in lenient
            else ""
        )
        if best["n"] < FEW_LABELS:
            caveat += f" Only {best['n']} labels: the intervals below are wide; label more to be sure."
        lines.append(
            f"Trust {trust}: against {best['n']} human labels it accepts {pct(best['sensitivity'])} of the "
            f"answers people call right and rejects {pct(best['specificity'])} of those they call wrong "
            f"(κ {num(best['cohen_kappa'], 2)}, AC1 {num(best['gwet_ac1'], 2)}).{caveat}"
        )
        data.append({"kind": "trust", "judge": trust, "basis": "human labels", "youden": best["youden"]})
    if r is not None and not r.is_empty():
        wrong = r.filter(pl.col("kind") == "wrong")
        main = wrong.filter(pl.col("generator") == "specific")
        main = main if not main.is_empty() else wrong
        graded = main if used is None else main.filter(pl.col("judge").is_in(list(used)))
        worst = (
            graded.sort("accept_rate", descending=True).row(0, named=True) if not graded.is_empty() else None
        )
        if trust is None:
            right = r.filter(pl.col("kind") == "correct").select("judge", se=pl.col("accept_rate"))
            j = main.select("judge", fpr=pl.col("accept_rate")).join(
                right, on="judge", how="left", maintain_order="left"
            )
            j = j.with_columns(score=pl.col("se").fill_null(100) - pl.col("fpr")).sort(
                "score", descending=True
            )
            if not j.is_empty():
                best = j.row(0, named=True)
                trust = best["judge"]
                se = "" if best["se"] is None else f" and accepts {best['se']:.1f}% of right answers reworded"
                lines.append(
                    f"Trust {trust} most ({'too few' if few else 'no'} human labels yet: from the leniency "
                    f"audit): it accepts "
                    f"{best['fpr']:.1f}% of specific-but-wrong answers{se}."
                )
                data.append({"kind": "trust", "judge": trust, "basis": "leniency audit", "youden": None})
        if worst is not None and worst["accept_rate"] > FPR_INVESTIGATE:
            lines.append(
                f"Do not believe {worst['judge']} on its own: it accepts {worst['accept_rate']:.1f}% "
                f"{interval(worst['ci_low'], worst['ci_high'], scale=1)} of answers known to be wrong "
                f"({_SET_TEXT.get(worst['generator'], worst['generator'])})."
            )
    if trust is None:
        lines.append(
            "No leniency audit and no human labels: nothing here says which judge to believe. Run "
            "bench-nb judge-audit RUN -j JUDGES, or label a sample with bench_nb.widgets.label_answers."
        )
    if corrected is not None:
        c = _frame(corrected)
        labels = labels_of(c) if not c.is_empty() else {}
        c = c.filter(pl.col("corrected").is_not_null())
        if trust is not None:
            c = c.filter(pl.col("judge") == trust)
        unsure = c.filter((pl.col("source") == "human labels") & pl.col("judge").is_in(list(few)))
        for judge in unsure["judge"].unique(maintain_order=True).to_list():
            lines.append(f"Corrected for {judge}'s errors: cannot tell from {few[judge]}.")
        c = c.filter(~((pl.col("source") == "human labels") & pl.col("judge").is_in(list(few))))
        moves = []
        for row in c.iter_rows(named=True):
            move = row["corrected"] - row["accuracy"]
            moves.append(
                f"{labels.get(row['run_id'], row['run_id'])} {row['accuracy']:.1f}% → {row['corrected']:.1f}% "
                f"{interval(row['corrected_low'], row['corrected_high'], scale=1)} ({move:+.1f} pts)"
            )
            data.append({"kind": "move", "run_id": row["run_id"], "judge": row["judge"], "move": move})
        if moves:
            source = c["source"][0]
            lines.append(
                f"Corrected for {trust or 'the judge'}'s errors ({source}): " + "; ".join(moves) + "."
            )
    if sweep is not None:
        s = _frame(sweep)
        if not s.is_empty():
            from bench_nb.metrics.judge_quality import ranking_moves

            spread = s.group_by("run_id").agg(
                (pl.col("accuracy").max() - pl.col("accuracy").min()).alias("d")
            )
            widest = float(spread["d"].cast(pl.Float64).max() or 0.0)  # type: ignore[arg-type]
            lines.append(
                f"The judge prompt alone moves a run's accuracy by up to {widest:.1f} points"
                + ("; and it changes which run ranks first." if ranking_moves(s) else "; the ranking holds.")
            )
    if agreement is not None and getattr(agreement, "ranking_changes", None):
        lines.append(
            "Different judges rank the runs differently: compare them only under the judge you trust."
        )
    html = (
        f"{STYLE}<div class='bnb-settings' style='font-size:14px'><b>Verdict.</b> "
        + " ".join(esc(x) for x in lines)
        + "</div>"
    )
    return Table(pl.DataFrame(data) if data else pl.DataFrame({"kind": []}), html)
