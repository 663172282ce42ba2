"""An ipywidgets explorer: filter runs, read one question across providers side by side.

Filters (provider, benchmark, question type, judge, outcome) narrow the (run, question) rows; the summary
and the question list follow them. The detail pane shows the chosen question's text and ground truth, then
one column per run: its answer, every judge's verdict, and the retrieved context. All text is escaped.

Drive it from code as from the browser: set ``explorer.providers.value = ("sqlite",)`` and read
``explorer.summary.value`` / ``explorer.detail.value`` (that is how the tests check it).
"""

from __future__ import annotations

import hashlib
from typing import Any

import ipywidgets as w
import polars as pl

from bench_nb.charts.labels import OUTCOMES, outcome_expr, run_labels
from bench_nb.frames.judgments import judgments_frame
from bench_nb.frames.questions import questions_frame
from bench_nb.metrics.accuracy import accuracy_frame
from bench_nb.runformat.format import decode_results
from bench_nb.runformat.load import RunSet, load_runs
from bench_nb.tables.html import STYLE, Cell, render
from bench_nb.text import esc, hit_text, one_line, question_anchor, question_href

PRIMARY = "(primary judge)"


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _expandable(text: object, width: int) -> str:
    """``text`` escaped; past ``width`` characters, its first line shown and the whole one click away."""
    full = "" if text is None else str(text)
    if len(full) <= width:
        return esc(full)
    return (
        f"<details class='bnb-long'><summary>{esc(one_line(full, width))} "
        f"<span class='bnb-count'>({len(full):,} characters: open)</span></summary>"
        f"<div style='white-space:pre-wrap'>{esc(full)}</div></details>"
    )


def _letters(n: int) -> list[str]:
    """The grid's short names for n runs: A, B, ... Z, then R27, R28..."""
    return [chr(65 + i) if i < 26 else f"R{i + 1}" for i in range(n)]


_LABEL = {"description_width": "80px"}


def _control() -> w.Layout:
    return w.Layout(width="236px")


def _select(options: list[str], description: str) -> w.SelectMultiple:
    """A list box that shows every option (up to 8 rows), narrow enough for four in a row; all selected."""
    return w.SelectMultiple(
        options=options,
        value=tuple(options),
        description=description,
        rows=max(2, min(len(options), 8)),
        style=_LABEL,
        layout=_control(),
    )


_STATIC_STYLE = """<style>
.bnb-explore .bnb-filter{margin:8px 0;font:13px Helvetica,Arial,sans-serif}
.bnb-explore input{width:260px;padding:3px 6px} .bnb-explore .bnb-count{color:#57606a;margin-left:8px}
.bnb-explore summary{cursor:pointer} .bnb-explore details[open] summary{font-weight:600;margin-bottom:6px}
.bnb-o{white-space:nowrap;font-size:12px} .bnb-o-correct{color:#116329} .bnb-o-incorrect{color:#a40e26}
.bnb-o-failed{color:#3a3a3a;font-weight:600} .bnb-o-unscored{color:#7d4e00}
.bnb-detail{display:none;border-top:2px solid #0969da;margin-top:12px;padding-top:8px}
.bnb-detail:target{display:block} .bnb-gold{background:#fff3b0} .bnb-missed{color:#a40e26}
.bnb-grid td{max-width:320px;overflow-wrap:anywhere} .bnb-grid td,.bnb-grid th{text-align:left !important}
</style>"""


class Explorer:
    """Filter runs and read questions side by side. Display it in Jupyter; ``.widget`` is the layout."""

    def __init__(self, runs: Any, *, dataset: str | None = None, n_hits: int = 5, grid: bool = True) -> None:
        self.runset: RunSet = load_runs(runs)
        self.n_hits = n_hits
        self.dataset = dataset
        self._gold: dict[str, list[str]] | None = None
        q = questions_frame(self.runset, dataset=dataset)
        self.labels = run_labels(q)
        self.questions = q
        self.judgments = judgments_frame(self.runset, dataset=dataset)
        judges = self.judgments["judge"].unique(maintain_order=True).to_list()
        self.texts = dict(q.select("question_id", "question").unique("question_id", keep="first").iter_rows())
        self.providers = _select(sorted(q["provider"].drop_nulls().unique()), "provider")
        self.benchmarks = _select(sorted(q["benchmark"].drop_nulls().unique()), "benchmark")
        self.types = _select(sorted(q["question_type_norm"].drop_nulls().unique()), "type")
        self.judge = w.Dropdown(
            options=[PRIMARY, *judges], value=PRIMARY, description="judge", style=_LABEL, layout=_control()
        )
        self.outcomes = _select(list(OUTCOMES), "outcome")
        self.question = w.Dropdown(
            description="question", style=_LABEL, layout=w.Layout(width="100%", max_width="760px")
        )
        self.summary = w.HTML()
        self.detail = w.HTML()
        # The per-question grid (an itables widget): selecting a row shows that question's detail below it.
        self.grid: Any = None
        self._grid_ids: list[str] = []
        self._grid_box = w.VBox(layout=w.Layout(width="100%"))
        self._with_grid = grid
        for control in (self.providers, self.benchmarks, self.types, self.judge, self.outcomes):
            control.observe(lambda _change: self.refresh(), names="value")
        self.question.observe(self._on_question, names="value")
        # The filters wrap onto a second line in a narrow notebook (1280 px beside JupyterLab's file browser).
        filters = w.HBox(
            [self.providers, self.benchmarks, self.types, w.VBox([self.judge, self.outcomes])],
            layout=w.Layout(flex_flow="row wrap", width="100%", grid_gap="4px 12px"),
        )
        self.widget = w.VBox(
            [filters, self.summary, self._grid_box, self.question, self.detail], layout=w.Layout(width="100%")
        )
        self.refresh()

    # --- what the filters select ---------------------------------------------------------------------------

    def rows(self) -> pl.DataFrame:
        """The (run, question) rows the filters keep, with ``outcome`` under the chosen judge."""
        q = self.questions
        if self.judge.value != PRIMARY:
            verdicts = self.judgments.filter(pl.col("judge") == self.judge.value).select(
                "run_id", "question_id", j_unscored="unscored", j_score="score"
            )
            q = q.join(
                verdicts, on=["run_id", "question_id"], how="left", maintain_order="left"
            ).with_columns(
                unscored=pl.when(pl.col("status") == "evaluated")
                .then(pl.col("j_unscored").fill_null(True))
                .otherwise(pl.col("unscored")),
                correct=pl.when(pl.col("j_score").is_not_null()).then(pl.col("j_score") == 1).otherwise(None),
            )
        q = q.with_columns(outcome=outcome_expr())
        return q.filter(
            pl.col("provider").is_in(list(self.providers.value))
            & pl.col("benchmark").is_in(list(self.benchmarks.value))
            & pl.col("question_type_norm").is_in(list(self.types.value))
            & pl.col("outcome").is_in(list(self.outcomes.value))
        )

    def refresh(self) -> None:
        """Recompute the summary and the question list from the filters."""
        rows = self.rows()
        self.summary.value = self._summary_html(rows)
        if self._with_grid:
            self._show_grid(rows)
        ids = rows["question_id"].unique(maintain_order=True).to_list()
        current = self.question.value
        self.question.options = [(self.question_label(i), i) for i in ids]
        if ids:
            self.question.value = current if current in ids else ids[0]
        self._on_question()

    def _show_grid(self, rows: pl.DataFrame) -> None:
        """A new grid widget for the selection (replacing the last one): one row per question."""
        from itables.widget import ITable

        frame = self.grid_frame(rows, links=False)
        self._grid_ids = rows["question_id"].unique(maintain_order=True).to_list()
        if frame.is_empty():
            self.grid = None
            self._grid_box.children = []
            return
        self.grid = ITable(
            frame.to_pandas(),
            select={"style": "single"},
            **_grid_options(frame),
        )
        self.grid.observe(self._on_grid_select, names="selected_rows")
        self._grid_box.children = [w.HTML(self._runs_note(rows)), self.grid]

    def _on_grid_select(self, change: Any) -> None:
        chosen = change["new"]
        if chosen and 0 <= chosen[0] < len(self._grid_ids):
            self.question.value = self._grid_ids[chosen[0]]

    def _on_question(self, _change: Any = None) -> None:
        self.detail.value = _STATIC_STYLE + (
            self.detail_html(self.question.value)
            if self.question.value
            else "<i>No question matches these filters.</i>"
        )

    def question_label(self, question_id: str) -> str:
        """What the question list shows: the id and the question's text (cut at 90 characters)."""
        return f"{question_id} · {one_line(self.texts.get(question_id) or '', 90)}"

    # --- rendering -------------------------------------------------------------------------------------------

    def _summary_html(self, rows: pl.DataFrame) -> str:
        if rows.is_empty():
            return f"{STYLE}<div class='bnb-note'>No (run, question) matches these filters.</div>"
        by_run = {r["run_id"]: r for r in accuracy_frame(rows).iter_rows(named=True)}
        counts = rows.group_by("run_id", "outcome").len()
        table = []
        for rid, label in self.labels.items():
            n = rows.filter(pl.col("run_id") == rid).height
            if not n:
                continue
            a = by_run.get(rid)
            acc_text = "n/a"
            if set(self.outcomes.value) != set(OUTCOMES):
                acc_text = "— (filtered by outcome)"
            elif a and a["accuracy"] is not None:
                acc_text = f"{a['accuracy']:.1%} [{a['ci_low']:.1%}–{a['ci_high']:.1%}]"
            per = dict(counts.filter(pl.col("run_id") == rid).select("outcome", "len").iter_rows())
            table.append([label, Cell(str(n), "num"), Cell(acc_text, "num")])
            table[-1] += [Cell(str(per.get(o, 0)), "num") for o in OUTCOMES]
        return render(["run", "questions", "accuracy [95% CI]", *OUTCOMES], table, caption="Selection")

    def _hits(self, run_path: str, qid: str) -> list[str]:
        """Every item the run retrieved for the question, in rank order."""
        for run in self.runset:
            if str(run.path) == run_path and run.checkpoint is not None:
                qrec = run.checkpoint.questions.get(qid)
                if qrec is not None:
                    return [hit_text(h) for h in decode_results(qrec.phases.search.results)]
        return []

    def gold_evidence(self, question_id: str) -> list[str]:
        """The question's gold evidence as text (``[date] speaker: message``, in haystack order), read from the
        benchmark file given as ``dataset``; empty without one or when the question names no evidence."""
        if self._gold is None:
            self._gold = {}
            if self.dataset is not None:
                from bench_nb.benchmarks.gold import gold_hits
                from bench_nb.benchmarks.registry import load_benchmark

                names = [b for b in self.questions["benchmark"].unique().to_list() if b]
                if names:
                    bench = load_benchmark(names[0], self.dataset, progress=False)
                    for q in bench.questions:
                        hits = gold_hits(q, bench.haystacks.get(q.haystack_id))
                        if hits:
                            self._gold[q.question_id] = [h.text for h in hits]
        return self._gold.get(question_id, [])

    def _context_html(self, hits: list[str], gold: list[str]) -> str:
        """The retrieved context: the first ``n_hits`` and every item holding gold evidence (marked), with their
        ranks; then the gold evidence the run did not retrieve."""
        if not hits:
            return "<div class='bnb-ctx'>no context retrieved</div>"
        keys = [(g, _norm(g.split(": ", 1)[-1])[:80]) for g in gold]
        found: set[str] = set()
        items = []
        for rank, h in enumerate(hits, 1):
            flat = _norm(h)
            matched = [g for g, k in keys if k and k in flat]
            found.update(matched)
            if rank > self.n_hits and not matched:
                continue
            body = _expandable(h, 300)
            if matched:
                body = f"<mark class='bnb-gold' title='holds gold evidence'>gold evidence</mark> {body}"
            items.append(f"<li value='{rank}'>{body}</li>")
        shown = f"<ol class='bnb-ctx'>{''.join(items)}</ol>"
        if len(hits) > self.n_hits:
            shown += (
                f"<div class='bnb-note'>{len(hits)} items retrieved: the first {self.n_hits} and those holding "
                "gold evidence shown.</div>"
            )
        missed = [g for g in gold if g not in found]
        if missed:
            shown += (
                "<div>gold evidence not retrieved:<ul>"
                + "".join(f"<li class='bnb-missed'>{_expandable(g, 300)}</li>" for g in missed)
                + "</ul></div>"
            )
        return shown

    def detail_html(self, question_id: str, *, rows: pl.DataFrame | None = None) -> str:
        """One question across the filtered runs, side by side (escaped): the question, what it should be
        answered (or "should abstain"), its gold evidence (marked), then per run the full answer (long ones fold),
        every judge's verdict and reasoning, the retrieved context with the gold evidence marked, and the evidence
        the run missed."""
        rows = (self.rows() if rows is None else rows).filter(pl.col("question_id") == question_id)
        if rows.is_empty():
            return "<i>This question is not in the selection.</i>"
        first = rows.row(0, named=True)
        if first["question_type_norm"] == "abstention":
            truth = "<b>should abstain</b>" + (
                f" ({esc(first['ground_truth'])})" if first["ground_truth"] else ""
            )
        else:
            truth = f"ground truth: <b>{_expandable(first['ground_truth'], 300)}</b>"
        gold = self.gold_evidence(question_id)
        gold_html = (
            "<div>gold evidence:<ul>"
            + "".join(f"<li class='bnb-gold'>{_expandable(g, 300)}</li>" for g in gold)
            + "</ul></div>"
            if gold
            else ""
        )
        head = (
            f"<div><b>{esc(first['question_id'])}</b> · {esc(first['question_type_norm'])}"
            f" · haystack {esc(first['haystack_id'])}</div>"
            f"<div style='font-size:15px;margin:4px 0'>{_expandable(first['question'], 300)}</div>"
            f"<div>{truth}</div>{gold_html}"
        )
        cols = []
        for r in rows.iter_rows(named=True):
            verdicts = self.judgments.filter(
                (pl.col("run_id") == r["run_id"]) & (pl.col("question_id") == question_id)
            )
            several = set(verdicts.filter(pl.col("replicate") > 1)["judge"])  # each replicate named: #1, #2
            vtext = (
                "".join(
                    f"<li><b>{esc(judge)}{f' #{rep}' if judge in several else ''}</b>: {esc(label)} "
                    f"<span style='color:#57606a'>{_expandable(why, 200)}</span></li>"
                    for judge, rep, label, why in verdicts.select(
                        "judge", "replicate", "label", "explanation"
                    ).rows()
                )
                or "<li>no verdict</li>"
            )
            context = self._context_html(self._hits(r["run_path"], question_id), gold)
            error = (
                f"<div style='color:#a40e26'>error: {_expandable(r['error'], 200)}</div>"
                if r["error"]
                else ""
            )
            label = self.labels.get(r["run_id"], r["run_id"])
            cols.append(
                "<div style='flex:1;min-width:240px;overflow-wrap:anywhere;border:1px solid #d0d7de;"
                "border-radius:6px;padding:8px'>"
                f"<div><b title='{esc(r['run_id'])}'>{esc(one_line(label, 40))}</b> — {esc(r['outcome'])}</div>"
                f"{error}<div style='margin:6px 0'>answer: {_expandable(r['hypothesis'], 300)}</div>"
                f"<div>verdicts:<ul>{vtext}</ul></div>"
                f"<div>retrieved context:{context}</div></div>"
            )
        return f"{head}<div style='display:flex;gap:10px;margin-top:8px'>{''.join(cols)}</div>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def grid_frame(self, rows: pl.DataFrame | None = None, *, links: bool = True) -> pl.DataFrame:
        """One row per question of the selection: the question (a link to its detail on the same page,
        ``#q=<question id>``, or with ``links=False`` its id), its type and haystack, per run (named A, B, ... in order) its verdict and
        shortened answer, whether its judges (or a judge's replicates) disagree, and with two runs or more how
        the first two compare (``A wrong, B right``...) and whether a run retrieved the evidence yet answered
        wrong. Cells are HTML (escaped text)."""
        rows = self.rows() if rows is None else rows
        run_ids = [r for r in self.labels if r in set(rows["run_id"].to_list())]
        short = dict(zip(run_ids, _letters(len(run_ids)), strict=True))
        disputed = set(
            self.judgments.filter(pl.col("label").is_not_null())
            .group_by("question_id", "run_id")
            .agg(pl.col("label").n_unique().alias("n"))
            .filter(pl.col("n") > 1)["question_id"]
            .to_list()
        )
        several = (
            not self.judgments.is_empty()
            and self.judgments.group_by("run_id", "question_id").len()["len"].max() > 1  # type: ignore[operator]
        )
        by_q: dict[str, dict[str, dict[str, Any]]] = {}
        info: dict[str, dict[str, Any]] = {}
        for r in rows.iter_rows(named=True):
            by_q.setdefault(r["question_id"], {})[r["run_id"]] = r
            info.setdefault(r["question_id"], r)
        cols: dict[str, list[str]] = {"question": [], "type": [], "haystack": []}
        for rid in run_ids:
            cols[f"{short[rid]}: verdict"] = []
            cols[f"{short[rid]}: answer"] = []
        cols["judges"] = []
        if len(run_ids) >= 2:
            cols["A vs B"] = []
        cols["retrieval"] = []
        for qid, per_run in by_q.items():
            first = info[qid]
            name = (
                f"<a href='{esc(question_href('', qid))}' title='{esc(first['question'])}'>{esc(qid)}</a>"
                if links
                else f"<b title='{esc(first['question'])}'>{esc(qid)}</b>"
            )
            cols["question"].append(f"{name} {esc(one_line(first['question'], 70))}")
            cols["type"].append(esc(first["question_type_norm"]))
            cols["haystack"].append(esc(first["haystack_id"]))
            for rid in run_ids:
                cell = per_run.get(rid)
                cols[f"{short[rid]}: verdict"].append(esc(cell["outcome"]) if cell else "—")
                cols[f"{short[rid]}: answer"].append(esc(one_line(cell["hypothesis"], 60)) if cell else "")
            cols["judges"].append("disagree" if qid in disputed else ("agree" if several else "one verdict"))
            if len(run_ids) >= 2:
                oa, ob = (str(per_run[rid]["outcome"]) if rid in per_run else "" for rid in run_ids[:2])
                pair = {
                    ("incorrect", "correct"): "A wrong, B right",
                    ("correct", "incorrect"): "A right, B wrong",
                    ("correct", "correct"): "both right",
                    ("incorrect", "incorrect"): "both wrong",
                }
                cols["A vs B"].append(pair.get((oa, ob), "not both scored"))
            hits = [x.get("hit_at_k") for x in per_run.values()]
            if all(h is None for h in hits):
                cols["retrieval"].append("not recorded")
            elif any(x.get("hit_at_k") and x["outcome"] == "incorrect" for x in per_run.values()):
                cols["retrieval"].append("retrieval hit but answer wrong")
            else:
                cols["retrieval"].append("other")
        return pl.DataFrame(cols)

    def grid_html(self, rows: pl.DataFrame | None = None) -> str:
        """The per-question grid as an itables (DataTables) table that works offline (the library is embedded):
        sort by any column, search, and filter with the panes above it (type, each run's verdict, judges,
        A vs B, retrieval)."""
        from itables import options, to_html_datatable
        from itables.javascript import generate_init_offline_itables_html

        grid = self.grid_frame(rows)
        table = to_html_datatable(grid.to_pandas(), connected=False, **_grid_options(grid))
        # The library itself, embedded (offline): loaded once per page whatever the number of grids.
        library = generate_init_offline_itables_html(options.dt_bundle)
        note = self._runs_note(self.rows() if rows is None else rows)
        return f"{library}{note}<div class='bnb-grid'>{table}</div>"

    def _runs_note(self, rows: pl.DataFrame) -> str:
        """Which run the grid's A, B, ... stand for (the full label on hover)."""
        run_ids = [r for r in self.labels if r in set(rows["run_id"].to_list())]
        return (
            "<div class='bnb-note'>Runs: "
            + "; ".join(
                f"{letter} is <b title='{esc(rid)}'>{esc(one_line(self.labels[rid], 60))}</b>"
                for letter, rid in zip(_letters(len(run_ids)), run_ids, strict=True)
            )
            + ".</div>"
        )

    def static_html(self, *, max_questions: int | None = None) -> str:
        """The current selection as one self-contained page fragment (for reports, where widgets cannot run):
        the summary, each question's detail (``detail_html``, its id ``q=<question id>``) and the per-question
        grid (``grid_html``: sort, search, filter panes, works offline); a detail is shown (above the grid) when its link in the grid is
        followed or the page is opened at ``#q=<question id>`` (CSS ``:target``; the compare report's links)."""
        rows = self.rows()
        ids = rows["question_id"].unique(maintain_order=True).to_list()
        if max_questions is not None and len(ids) > max_questions:
            rows = rows.filter(pl.col("question_id").is_in(ids[:max_questions]))
        shown = ids[:max_questions] if max_questions is not None else ids
        uid = "bnb-x" + hashlib.sha256(repr((shown, sorted(self.labels.values()))).encode()).hexdigest()[:10]
        details = "".join(
            f"<section class='bnb-detail' id='{esc(question_anchor(qid))}'><a href='#{uid}-grid'>back to the "
            f"grid</a>{self.detail_html(qid, rows=rows)}</section>"
            for qid in shown
        )
        more = (
            f"<div class='bnb-note'>The first {max_questions} of {len(ids)} questions.</div>"
            if len(shown) < len(ids)
            else ""
        )
        # The details come before the grid: a page opened at one (``#q=...``) scrolls to it before the grid is
        # drawn, and the grid growing below it then leaves it in place.
        return (
            f"{self.summary.value}{_STATIC_STYLE}<div class='bnb-explore'>"
            f"<div class='bnb-details'>{details}</div><div id='{uid}-grid'>"
            f"<div class='bnb-note'>One row per question: sort by a column, search, filter with the panes; "
            f"follow a question's link for every run's answer, the judges' verdicts and the context with the gold "
            f"evidence marked.</div>{self.grid_html(rows)}{more}</div></div>"
        )


def _grid_options(grid: pl.DataFrame) -> dict[str, Any]:
    """The grid's itables options, in a report and in JupyterLab alike: HTML cells, 25 rows a page, and filter
    panes (SearchPanes) over every column but the question, the haystack and the answers."""
    panes = [
        i
        for i, c in enumerate(grid.columns)
        if c not in ("question", "haystack") and not c.endswith(": answer")
    ]
    return {
        "allow_html": True,
        "showIndex": False,
        "maxBytes": 0,
        "pageLength": 25,
        "classes": "display compact",
        "layout": {"top1": "searchPanes"},
        "searchPanes": {"columns": panes, "cascadePanes": True, "initCollapsed": False},
        "warn_on_undocumented_option": False,
    }


def explore(runs: Any, **options: Any) -> Explorer:
    """An ``Explorer`` over ``runs`` (anything ``load_runs`` takes)."""
    return Explorer(runs, **options)
