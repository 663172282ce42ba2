"""Tables that compare runs and judges: like-for-like warnings, paired tests, judge agreement, disputes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from bench_nb.frames.backend import as_polars
from bench_nb.frames.judgments import disputed_questions_frame, retrieved_texts_of
from bench_nb.tables.html import (
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
from bench_nb.text import one_line, question_href

if TYPE_CHECKING:
    from bench_nb.metrics.agreement import JudgeAgreement
    from bench_nb.metrics.paired import PairedMethod


def table_paired(
    runs: Any,
    *,
    judge: str | None = None,
    method: PairedMethod = "clustered",
    pairs: Literal["all", "neighbours"] = "all",
) -> Table:
    """The paired test of every pair of runs on the questions both scored, Holm-adjusted: by default the
    clustered paired test over the haystacks (the tell-apart section's); ``method="independent"`` for
    McNemar's test and Newcombe's interval, which treat every question as independent (notes say which).

    ``pairs="neighbours"``: only runs next to each other on the leaderboard (1st vs 2nd, 2nd vs 3rd, ...), as
    the compare report's summary shows them; p-values still Holm-adjusted over every pair. A pair that is not
    like for like is flagged, how in its tooltip (the sentences are ``table_settings``': said once).
    """
    from bench_nb.charts.labels import leaderboard_order
    from bench_nb.frames.questions import as_questions
    from bench_nb.metrics.paired import HEADERS, METHOD_NOTES, paired_comparisons_frame

    if pairs not in ("all", "neighbours"):
        raise ValueError(f"pairs must be 'all' or 'neighbours', not {pairs!r}")
    frame = paired_comparisons_frame(runs, judge=judge, method=method)
    labels = _pair_labels(frame)
    rows = []
    warnings = []
    # a pair with no question both scored has nothing to show (one run: no pair, and no columns to filter)
    shown = scored = frame.filter(pl.col("n_pairs") > 0) if "n_pairs" in frame.columns else frame
    if pairs == "neighbours" and scored.height:
        order = leaderboard_order(as_questions(runs))
        rank = {rid: i for i, rid in enumerate(order)}
        ra, rb = pl.col("run_a").replace_strict(rank), pl.col("run_b").replace_strict(rank)
        shown = scored.filter((ra - rb).abs() == 1).sort(pl.min_horizontal(ra, rb))
    for r in shown.iter_rows(named=True):
        pair = f"{labels[r['run_a']]} vs {labels[r['run_b']]}"
        title = f"{r['run_a']} vs {r['run_b']}"
        if r.get("warning"):
            warnings.append(f"{pair}: {labelled(r['warning'], labels)}")
            title += f": {labelled(r['warning'], labels)}"
        p, holm = r.get("p_value"), r.get("p_value_holm")
        rows.append(
            [
                Cell(
                    pair, title=title, badges=(("not like for like", "bnb-flag"),) if r.get("warning") else ()
                ),
                Cell(f"{r['n_pairs']} / {r['clusters']}", "num"),
                Cell(f"{pct(r['accuracy_a'])} / {pct(r['accuracy_b'])}", "num"),
                Cell(
                    f"{r['difference'] * 100:+.1f} pts {interval(r['ci_low'], r['ci_high'])}"
                    if not missing(r["difference"])
                    else "n/a",
                    "num",
                ),
                Cell(f"{r['a_only']} / {r['b_only']}", "num"),
                r["test"],
                Cell("n/a" if missing(p) else f"{p:.3g}", "num"),
                Cell(
                    "n/a" if missing(holm) else f"{holm:.3g}",
                    "num",
                    badges=(("significant", "bnb-band bnb-good"),)
                    if holm is not None and holm < 0.05
                    else (),
                ),
            ]
        )
    caption = "Paired comparisons" + (f" (judge {judge})" if judge else "")
    apart = frame.height - scored.height
    if not frame.height:  # one run: a note, not a table of headings over nothing
        note = f"{caption}: one run, so no pair of runs to test."
        return Table(frame, f'<div class="bnb-note">{esc(note)}</div>')
    if apart and not rows:
        note = f"{caption}: no two runs share a question both scored (as when they hold different question sets)."
        return Table(frame, f'<div class="bnb-note">{esc(note)}</div>')
    notes = [METHOD_NOTES[method], "p-values adjusted for the number of pairs with Holm's method."]
    if pairs == "neighbours":
        caption += ": neighbours on the leaderboard"
        notes.insert(
            0, "Each run against the next one down the leaderboard (every pair: the full paired table)."
        )
    if warnings:
        notes.append(
            "Flagged 'not like for like': the pair's runs differ in settings or question set (hover for how; "
            "the run-settings table lists every difference)."
        )
    if apart:
        notes.append(
            f"{apart} pair{'s' if apart != 1 else ''} of runs that share no question both scored left out "
            "(no question was scored in both runs, as when they hold different question sets: nothing to pair)."
        )
    html = render(
        [*HEADERS, "p (Holm)"],
        rows,
        caption=caption,
        notes=notes,
    )
    return Table(frame if pairs == "all" else shown, html, tuple(warnings))


def _pair_labels(pairs: pl.DataFrame) -> dict[str, str]:
    """run id -> label (``charts.labels.run_labels``) of every run in the pairs: the provider when it names one
    run, else what tells its runs apart, so two runs of one provider never read as "sqlite vs sqlite"."""
    from bench_nb.charts.labels import run_labels

    if pairs.is_empty():
        return {}
    runs = pl.concat(
        [
            pairs.select(run_id="run_a", provider="provider_a"),
            pairs.select(run_id="run_b", provider="provider_b"),
        ]
    )
    return run_labels(runs)


def _f1_contains_note(agreement: JudgeAgreement) -> str | None:
    """Which to read when the default judges, ``contains`` and ``f1``, differ: their accuracies side by side
    and why they part (token F1 scores a long answer low even when it holds the gold answer)."""
    if not {"f1", "contains"} <= set(agreement.judges):
        return None
    acc = {r["judge"]: r["accuracy"] for r in agreement.frames["accuracy"].iter_rows(named=True)}
    return (
        f"contains {pct(acc.get('contains'))} against f1 {pct(acc.get('f1'))}: token F1 counts every extra word "
        "against an answer, so a whole-sentence answer (the offline extractive answerer's) scores low under f1 "
        "even when it holds the gold answer, which contains accepts. Read contains for such answers (the "
        "default primary judge), f1 for short model-written ones."
    )


def _why_na(agreement: JudgeAgreement) -> str:
    """Why the statistics over every judge read n/a: no answer graded by all of them (a mix of runs each
    graded by its own judge), or, with such answers, verdicts that are all the same."""
    if agreement.n_items == 0:
        return (
            f"No answer was graded by all {len(agreement.judges)} judges (each run's judges grade only its own "
            "answers), so the statistics over every judge are n/a: read the pairs below."
        )
    return "Kappa and alpha are n/a when every verdict is the same."


def table_agreement(agreement: JudgeAgreement) -> Table:
    """A ``JudgeAgreement`` as two tables: the overall statistics and each pair of judges."""
    summary = agreement.summary_frame()
    srows = [
        [
            r["statistic"].replace("_", " "),
            Cell(num(r["value"], 3), "num"),
            Cell(str(r["items"]), "num"),
            Cell(str(r["dropped"]), "num"),
        ]
        for r in summary.iter_rows(named=True)
    ]
    pw = agreement.frames["pairwise"]
    apart = int((pw["n"] == 0).sum())  # pairs of judges that graded no answer in common
    pw = pw.filter(pl.col("n") > 0)
    prows = [
        [
            f"{r['judge_a']} × {r['judge_b']}",
            Cell(str(r["n"]), "num"),
            Cell(pct(r["percent_agreement"]), "num"),
            Cell(num(r["cohen_kappa"], 3), "num"),
            Cell(num(r["gwet_ac1"], 3), "num"),
        ]
        for r in pw.iter_rows(named=True)
    ]
    notes = ["Items: (run, question) pairs. " + _why_na(agreement)]
    if note := _f1_contains_note(agreement):
        notes.append(note)
    pair_notes = (
        [
            f"{apart} pair{'s' if apart != 1 else ''} of judges that graded no answer in common left out "
            "(each imported run brings its own judge to its own answers)."
        ]
        if apart
        else []
    )
    html = render(
        ["statistic", "value", "items", "dropped"],
        srows,
        caption=f"Judge agreement ({', '.join(agreement.judges)})",
        notes=notes,
    )
    if prows:
        html += render(
            ["pair", "items both scored", "agreement", "Cohen's kappa", "Gwet's AC1"],
            prows,
            caption="Per pair",
            notes=pair_notes,
        )
    else:
        html += f'<div class="bnb-note">{esc("Per pair: no two judges graded an answer in common.")}</div>'
    return Table(summary, html)


def table_disputed(
    data: Any, *, limit: int = 20, n_hits: int = 3, runs: Any = None, explore: str | None = None
) -> Table:
    """The answers judges split on (``bench_nb.disputed_questions``), most split first, at most ``limit``:
    question, ground truth, answer, retrieved context and each judge's label, all escaped.

    ``runs``: the loaded ``RunSet`` behind a judgments frame (as ``disputed_questions`` takes it).
    ``explore``: the explore report's address relative to the page (``explore.html``): each question id then
    links to its detail there.
    """
    disputed = disputed_questions_frame(data, n_hits=n_hits, runs=runs)
    frame = as_polars(data)
    labels = labels_of(frame if frame is not None and "run_id" in frame.columns else disputed)
    total = len(disputed)
    shown = disputed.head(limit)
    own = retrieved_texts_of(runs, shown) if runs is not None else [None] * len(shown)
    rows = [
        [
            run_cell(r["run_id"], labels),
            Cell(r["question_id"], href=question_href(explore, r["question_id"]) if explore else ""),
            Cell(r["question"] or "", "text"),
            Cell(r["ground_truth"] or "", "text"),
            Cell(r["hypothesis"] or "", "text"),
            Cell(_own_context(r, texts, n_hits), "text"),
            Cell(r["correct_judges"] or "—"),
            Cell(r["incorrect_judges"] or "—"),
        ]
        for r, texts in zip(shown.iter_rows(named=True), own, strict=True)
    ]
    html = render(
        [
            "run",
            "question id",
            "question",
            "ground truth",
            "answer",
            "retrieved context",
            "correct by",
            "incorrect by",
        ],
        rows,
        caption=f"Disputed questions ({total}; showing {len(shown)})",
        notes=[
            f"Retrieved context: the {n_hits} retrieved items that share the most words with the question, its "
            "ground truth and the answer, numbered by their rank in the run's results."
        ]
        if total
        else ["The judges agree on every question."],
    )
    return Table(disputed, html)


_WORD = re.compile(r"[a-z0-9]+")


# Not the answerer's or the audit's content words: only which retrieved items a row shows, no stop list to import.
def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def _own_context(row: dict[str, Any], texts: list[str] | None, n_hits: int) -> str:
    """The row's own context: of everything its run retrieved for the question (``texts``), the ``n_hits``
    items that share the most words with the question, ground truth and answer (ties by rank), in rank
    order, each numbered by its rank. (The top items alone would repeat a full-context run's first haystack
    messages for every question of a conversation.) Falls back to the frame's top items without the runs."""
    if texts is None:
        return str(row.get("context") or "")
    wanted = _content_words(
        " ".join(str(row.get(c) or "") for c in ("question", "ground_truth", "hypothesis"))
    )
    scored = sorted(range(len(texts)), key=lambda i: (-len(wanted & _content_words(texts[i])), i))[:n_hits]
    return "\n".join(f"{i + 1}. {one_line(texts[i], 500)}" for i in sorted(scored))
