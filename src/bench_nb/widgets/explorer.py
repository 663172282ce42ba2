"""An ipywidgets explorer: filter runs, read one question across providers side by side.

Filters (provider, benchmark, question type, judge, outcome) narrow the (run, question) rows; the summary
and the question list follow them. The detail pane shows the chosen question's text and ground truth, then
one column per run: its answer, every judge's verdict, and the retrieved context. All text is escaped.

Drive it from code as from the browser: set ``explorer.providers.value = ("sqlite",)`` and read
``explorer.summary.value`` / ``explorer.detail.value`` (that is how the tests check it).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
import polars as pl

from bench_nb.charts.labels import OUTCOMES, outcome_expr, run_labels
from bench_nb.frames.judgments import judgments_frame
from bench_nb.frames.questions import questions_frame
from bench_nb.metrics import accuracy
from bench_nb.runformat.format import decode_results
from bench_nb.runformat.load import RunSet, load_runs
from bench_nb.tables.html import STYLE
from bench_nb.text import hit_text

PRIMARY = "(primary judge)"


def _esc(x: object) -> str:
    return html.escape("" if x is None else str(x), quote=True)


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
        self.providers = w.SelectMultiple(options=options("provider"), description="provider")
        self.benchmarks = w.SelectMultiple(options=options("benchmark"), description="benchmark")
        self.types = w.SelectMultiple(options=options("question_type_norm"), description="type")
        self.judge = w.Dropdown(options=[PRIMARY, *judges], value=PRIMARY, description="judge")
        self.outcomes = w.SelectMultiple(options=list(OUTCOMES), description="outcome")
        for sel in (self.providers, self.benchmarks, self.types):
            sel.value = tuple(sel.options)
        self.outcomes.value = tuple(OUTCOMES)
        self.question = w.Dropdown(description="question", layout=w.Layout(width="60%"))
        self.summary = w.HTML()
        self.detail = w.HTML()
        for control in (self.providers, self.benchmarks, self.types, self.judge, self.outcomes):
            control.observe(self._on_filter, names="value")
        self.question.observe(self._on_question, names="value")
        filters = w.HBox([self.providers, self.benchmarks, self.types, w.VBox([self.judge, self.outcomes])])
        self.widget = w.VBox([filters, self.summary, self.question, self.detail])
        self.refresh()

    # --- what the filters select ---------------------------------------------------------------------------

    def rows(self) -> pl.DataFrame:
        """The (run, question) rows the filters keep, with ``outcome`` under the chosen judge."""
        q = self.questions
        if self.judge.value != PRIMARY:
            verdicts = self.judgments.filter(pl.col("judge") == self.judge.value).select(
                "run_id", "question_id", j_unscored="unscored", j_score="score"
            )
            q = q.join(verdicts, on=["run_id", "question_id"], how="left").with_columns(
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
        self.question.options = ids
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

    # --- rendering -------------------------------------------------------------------------------------------

    def _summary_html(self, rows: pl.DataFrame) -> str:
        if rows.is_empty():
            return f"{STYLE}<div class='bnb-note'>No (run, question) matches these filters.</div>"
        acc = accuracy(rows, backend="polars")
        assert isinstance(acc, pl.DataFrame)
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

    def detail_html(self, question_id: str) -> str:
        """One question across the filtered runs, side by side (escaped)."""
        rows = self.rows().filter(pl.col("question_id") == question_id)
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

    def static_html(self) -> str:
        """The current summary and question as plain HTML (for reports, where widgets cannot run)."""
        return self.summary.value + self.detail.value


def explore(runs: Any, **options: Any) -> Explorer:
    """An ``Explorer`` over ``runs`` (anything ``load_runs`` takes)."""
    return Explorer(runs, **options)
