"""An ipywidgets explorer: filter runs, read one question across providers side by side.

Filters (provider, benchmark, question type, judge, outcome) narrow the (run, question) rows; the summary
and the question list follow them. The detail pane shows the chosen question's text and ground truth, then
one column per run: its answer, every judge's verdict, and the retrieved context. All text is escaped.

Drive it from code as from the browser: set ``explorer.providers.value = ("sqlite",)`` and read
``explorer.summary.value`` / ``explorer.detail.value`` (that is how the tests check it).
"""

from __future__ import annotations

import hashlib
import html
from typing import Any

import ipywidgets as w
import polars as pl

from bench_nb.charts.labels import OUTCOMES, outcome_expr, run_labels
from bench_nb.frames.judgments import judgments_frame
from bench_nb.frames.questions import questions_frame
from bench_nb.metrics.accuracy import accuracy_frame
from bench_nb.runformat.format import decode_results
from bench_nb.runformat.load import RunSet, load_runs
from bench_nb.tables.html import STYLE
from bench_nb.text import hit_text, one_line

PRIMARY = "(primary judge)"


def _esc(x: object) -> str:
    return html.escape("" if x is None else str(x), quote=True)


_LABEL = {"description_width": "80px"}


def _control() -> w.Layout:
    return w.Layout(width="236px")


def _select(options: list[str], description: str) -> w.SelectMultiple:
    """A list box that shows every option (up to 8 rows), narrow enough for four in a row."""
    return w.SelectMultiple(
        options=options,
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
</style>"""
# Filters the static table's rows by text and outcome (no library, no network); without it every row shows.
_FILTER_JS = """(function(){var root=document.getElementById('UID');if(!root)return;
var input=root.querySelector('input'),sel=root.querySelector('select'),count=root.querySelector('.bnb-count');
function apply(){var q=input.value.toLowerCase(),o=sel.value,n=0;
root.querySelectorAll('tbody > tr[data-text]').forEach(function(tr){
var ok=(!q||tr.dataset.text.indexOf(q)>=0||tr.textContent.toLowerCase().indexOf(q)>=0)&&
(!o||(' '+tr.dataset.outcomes+' ').indexOf(' '+o+' ')>=0);tr.style.display=ok?'':'none';if(ok)n++;});
count.textContent=n+' questions';}
input.addEventListener('input',apply);sel.addEventListener('change',apply);})();"""


class Explorer:
    """Filter runs and read questions side by side. Display it in Jupyter; ``.widget`` is the layout."""

    def __init__(self, runs: Any, *, dataset: str | None = None, n_hits: int = 5) -> None:
        self.runset: RunSet = load_runs(runs)
        self.n_hits = n_hits
        q = questions_frame(self.runset, dataset=dataset)
        self.labels = run_labels(q)
        self.questions = q
        self.judgments = judgments_frame(self.runset, dataset=dataset)
        options = lambda col: sorted({v for v in q[col].to_list() if v is not None})  # noqa: E731
        judges = self.judgments["judge"].unique(maintain_order=True).to_list()
        self.texts = dict(q.select("question_id", "question").unique("question_id", keep="first").iter_rows())
        self.providers = _select(options("provider"), "provider")
        self.benchmarks = _select(options("benchmark"), "benchmark")
        self.types = _select(options("question_type_norm"), "type")
        self.judge = w.Dropdown(
            options=[PRIMARY, *judges], value=PRIMARY, description="judge", style=_LABEL, layout=_control()
        )
        self.outcomes = _select(list(OUTCOMES), "outcome")
        for sel in (self.providers, self.benchmarks, self.types):
            sel.value = tuple(sel.options)
        self.outcomes.value = tuple(OUTCOMES)
        self.question = w.Dropdown(
            description="question", style=_LABEL, layout=w.Layout(width="100%", max_width="760px")
        )
        self.summary = w.HTML()
        self.detail = w.HTML()
        for control in (self.providers, self.benchmarks, self.types, self.judge, self.outcomes):
            control.observe(self._on_filter, names="value")
        self.question.observe(self._on_question, names="value")
        # The filters wrap onto a second line in a narrow notebook (1280 px beside JupyterLab's file browser).
        filters = w.HBox(
            [self.providers, self.benchmarks, self.types, w.VBox([self.judge, self.outcomes])],
            layout=w.Layout(flex_flow="row wrap", width="100%", grid_gap="4px 12px"),
        )
        self.widget = w.VBox(
            [filters, self.summary, self.question, self.detail], layout=w.Layout(width="100%")
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
        ids = rows["question_id"].unique(maintain_order=True).to_list()
        current = self.question.value
        self.question.options = [(self.question_label(i), i) for i in ids]
        if ids:
            self.question.value = current if current in ids else ids[0]
        self._on_question()

    def _on_filter(self, _change: Any = None) -> None:
        self.refresh()

    def _on_question(self, _change: Any = None) -> None:
        self.detail.value = (
            self.detail_html(self.question.value)
            if self.question.value
            else ("<i>No question matches these filters.</i>")
        )

    def question_label(self, question_id: str) -> str:
        """What the question list shows: the id and the question's text (cut at 90 characters)."""
        return f"{question_id} · {one_line(self.texts.get(question_id) or '', 90)}"

    # --- rendering -------------------------------------------------------------------------------------------

    def _summary_html(self, rows: pl.DataFrame) -> str:
        if rows.is_empty():
            return f"{STYLE}<div class='bnb-note'>No (run, question) matches these filters.</div>"
        acc = accuracy_frame(rows)
        by_run = {r["run_id"]: r for r in acc.iter_rows(named=True)}
        counts = rows.group_by("run_id", "outcome").len()
        parts = [
            STYLE,
            '<table class="bnb-table"><caption>Selection</caption><thead><tr><th>run</th>'
            "<th>questions</th><th>accuracy [95% CI]</th>",
        ]
        parts += [f"<th>{_esc(o)}</th>" for o in OUTCOMES]
        parts.append("</tr></thead><tbody>")
        for rid, label in self.labels.items():
            n = rows.filter(pl.col("run_id") == rid).height
            if not n:
                continue
            a = by_run.get(rid)
            acc_text = "n/a"
            if a and a["accuracy"] is not None:
                acc_text = f"{a['accuracy']:.1%} [{a['ci_low']:.1%}–{a['ci_high']:.1%}]"
            per = {o: 0 for o in OUTCOMES}
            for r in counts.filter(pl.col("run_id") == rid).iter_rows(named=True):
                per[r["outcome"]] = r["len"]
            parts.append(
                f"<tr><td>{_esc(label)}</td><td class='num'>{n}</td><td class='num'>{_esc(acc_text)}</td>"
            )
            parts += [f"<td class='num'>{per[o]}</td>" for o in OUTCOMES]
            parts.append("</tr>")
        parts.append("</tbody></table>")
        return "".join(parts)

    def _hits(self, run_path: str, qid: str) -> list[str]:
        for run in self.runset:
            if str(run.path) == run_path and run.checkpoint is not None:
                qrec = run.checkpoint.questions.get(qid)
                if qrec is not None:
                    return [hit_text(h) for h in decode_results(qrec.phases.search.results)][: self.n_hits]
        return []

    def detail_html(self, question_id: str, *, rows: pl.DataFrame | None = None) -> str:
        """One question across the filtered runs, side by side (escaped)."""
        rows = (self.rows() if rows is None else rows).filter(pl.col("question_id") == question_id)
        if rows.is_empty():
            return "<i>This question is not in the selection.</i>"
        first = rows.row(0, named=True)
        head = (
            f"<div><b>{_esc(first['question_id'])}</b> · {_esc(first['question_type_norm'])}</div>"
            f"<div style='font-size:15px;margin:4px 0'>{_esc(first['question'])}</div>"
            f"<div>ground truth: <b>{_esc(first['ground_truth'])}</b></div>"
        )
        cols = []
        for r in rows.iter_rows(named=True):
            verdicts = self.judgments.filter(
                (pl.col("run_id") == r["run_id"]) & (pl.col("question_id") == question_id)
            )
            vtext = (
                "".join(
                    f"<li><b>{_esc(v['judge'])}</b>: {_esc(v['label'])} <span style='color:#57606a'>"
                    f"{_esc(v['explanation'])}</span></li>"
                    for v in verdicts.iter_rows(named=True)
                )
                or "<li>no verdict</li>"
            )
            hits = (
                "".join(f"<li>{_esc(h)}</li>" for h in self._hits(r["run_path"], question_id))
                or "<li>none</li>"
            )
            error = f"<div style='color:#a40e26'>error: {_esc(r['error'])}</div>" if r["error"] else ""
            cols.append(
                "<div style='flex:1;min-width:240px;border:1px solid #d0d7de;border-radius:6px;padding:8px'>"
                f"<div><b>{_esc(self.labels.get(r['run_id'], r['run_id']))}</b> — {_esc(r['outcome'])}</div>{error}"
                f"<div style='margin:6px 0'>answer: {_esc(r['hypothesis'])}</div>"
                f"<div>verdicts:<ul>{vtext}</ul></div>"
                f"<div>retrieved context:<ol style='white-space:pre-wrap'>{hits}</ol></div></div>"
            )
        return f"{head}<div style='display:flex;gap:10px;margin-top:8px'>{''.join(cols)}</div>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def static_html(self, *, max_questions: int = 500) -> str:
        """The current selection as one self-contained page fragment (for reports, where widgets cannot run):
        the summary, then every question of the selection (at most ``max_questions``) in a table a reader
        can filter by text and outcome and open one by one to read each run's answer, verdicts and retrieved
        context. Its few lines of script filter rows; everything shows without them."""
        rows = self.rows()
        ids = rows["question_id"].unique(maintain_order=True).to_list()
        shown = ids[:max_questions]
        labels = [self.labels[r] for r in self.labels if r in set(rows["run_id"].to_list())]
        uid = "bnb-x" + hashlib.sha256(repr((shown, labels)).encode()).hexdigest()[:10]
        body = []
        for qid in shown:
            q_rows = rows.filter(pl.col("question_id") == qid)
            first = q_rows.row(0, named=True)
            by_label = {
                self.labels.get(r["run_id"], r["run_id"]): r["outcome"] for r in q_rows.iter_rows(named=True)
            }
            outcomes = " ".join(sorted(set(by_label.values())))
            split = "split" if len(set(by_label.values())) > 1 else ""
            text = " ".join(
                str(x or "")
                for x in (qid, first["question"], first["ground_truth"], first["question_type_norm"])
            )
            cells = "".join(
                f"<td class='bnb-o bnb-o-{_esc(by_label.get(lab, ''))}'>{_esc(by_label.get(lab, '—'))}</td>"
                for lab in labels
            )
            body.append(
                f"<tr data-text='{_esc(text.lower())}' data-outcomes='{_esc(outcomes)} {split}'>"
                f"<td>{_esc(qid)}</td><td>{_esc(first['question_type_norm'])}</td>"
                f"<td class='text'><details><summary>{_esc(first['question'])}</summary>"
                f"{self.detail_html(qid, rows=rows)}</details></td>"
                f"<td class='text'>{_esc(first['ground_truth'])}</td>{cells}</tr>"
            )
        more = (
            f"<div class='bnb-note'>The first {max_questions} of {len(ids)} questions; narrow the filters in the "
            "notebook for the rest.</div>"
            if len(ids) > max_questions
            else ""
        )
        head = "".join(f"<th>{_esc(lab)}</th>" for lab in labels)
        options = "".join(f"<option value='{o}'>{o.replace('_', ' ')}</option>" for o in (*OUTCOMES, "split"))
        return (
            f"{self.summary.value}{_STATIC_STYLE}<div id='{uid}' class='bnb-explore'>"
            f"<div class='bnb-filter'><input type='search' placeholder='filter by id, question, ground truth or type' "
            f"aria-label='filter by id, question, ground truth or type'> <select aria-label='outcome'><option value=''>any outcome</option>{options}"
            f"</select> <span class='bnb-count'>{len(shown)} questions</span></div>"
            f"<table class='bnb-table'><thead><tr><th>id</th><th>type</th><th>question (open for the answers)</th>"
            f"<th>ground truth</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}</div>"
            f"<script>{_FILTER_JS.replace('UID', uid)}</script>"
        )


def explore(runs: Any, **options: Any) -> Explorer:
    """An ``Explorer`` over ``runs`` (anything ``load_runs`` takes)."""
    return Explorer(runs, **options)
