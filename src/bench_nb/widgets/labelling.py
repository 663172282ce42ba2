"""Label answers by hand in JupyterLab: the human side of a judge audit.

``label_answers(runs, n=60)`` draws a sample of the runs' answers stratified by question type and by whether
the judges disagree on the answer (proportional allocation, at least one answer from every stratum, seeded),
then shows one answer at a time: the question, the gold answer, the answer and its retrieved context (the
judges' verdicts are not shown, so they cannot sway the label). Keys, typed into the key box (click it once):

- ``c`` (or ``1``): correct · ``i`` (or ``2``): incorrect · ``u`` (or ``3``): unsure
- ``b``: back to the previous answer · ``n``: next without labelling

Each label is appended to the run's ``labels.jsonl`` at once (``bench_nb.judges.labels``), with its sampling
weight (the stratum's answers per sampled answer) and stratum. Opening the widget again, in a new kernel,
draws the same sample and starts at the first answer not yet labelled: labelling resumes where it stopped.
The labels load as the judge ``human`` in ``judgments_df`` and in every agreement table.

Drive it from code as from the keyboard: ``widget.press("c")``, or set ``widget.keys.value = "c"``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import ipywidgets as w
import polars as pl

from bench_nb.frames.judgments import judgments_frame, retrieved_texts
from bench_nb.frames.questions import questions_frame
from bench_nb.judges.labels import HUMAN, append_label, human_judge, read_labels
from bench_nb.runformat.load import RunSet, load_runs
from bench_nb.tables.html import STYLE
from bench_nb.text import esc

KEYS = {"c": "correct", "1": "correct", "i": "incorrect", "2": "incorrect", "u": "unsure", "3": "unsure"}


@dataclass(frozen=True)
class Item:
    """One sampled answer to label."""

    run_id: str
    run_path: str
    question_id: str
    question_type: str
    disputed: bool
    weight: float
    question: str
    ground_truth: str
    answer: str

    @property
    def stratum(self) -> str:
        """The sampling stratum of the answer: its question type and whether the judges disputed it."""
        return f"{self.question_type}|{'disputed' if self.disputed else 'agreed'}"


def stratified_sample(
    questions: pl.DataFrame, judgments: pl.DataFrame, n: int, *, seed: int = 0
) -> list[Item]:
    """``n`` answers (or all, when fewer) stratified by normalised question type × judge disagreement.

    Proportional allocation (``allocate``): stratum h of N_h answers gets about n·N_h/N answers, at least 1
    and at most N_h, n in all (when n is at least the number of strata); each gets the weight N_h / n_h. Within a stratum the answers are a seeded random draw; the sample is
    returned in a seeded random order (so the strata are interleaved).
    """
    machine = judgments.filter(~pl.col("judge").str.starts_with(HUMAN) & pl.col("score").is_not_null())
    split = machine.group_by("run_id", "question_id").agg(
        disputed=(pl.col("score").min() != pl.col("score").max())
    )
    answered = questions.filter(pl.col("hypothesis").is_not_null()).unique(
        ["run_id", "question_id"], keep="first", maintain_order=True
    )
    pool = answered.join(split, on=["run_id", "question_id"], how="left", maintain_order="left").with_columns(
        pl.col("disputed").fill_null(False),
        question_type=pl.col("question_type_norm").fill_null("other"),
    )
    total = pool.height
    if total == 0 or n <= 0:
        return []
    rng = random.Random(seed)
    items: list[Item] = []
    strata = pool.partition_by("question_type", "disputed", as_dict=True, maintain_order=True)
    keys = sorted(strata, key=lambda k: (str(k[0]), bool(k[1])))
    takes = allocate([strata[k].height for k in keys], n)
    for key, take in zip(keys, takes, strict=True):
        part = strata[key]
        rows = sorted(part.iter_rows(named=True), key=lambda r: (r["run_id"], r["question_id"]))
        for r in rng.sample(rows, take):
            items.append(
                Item(
                    run_id=r["run_id"],
                    run_path=r["run_path"],
                    question_id=r["question_id"],
                    question_type=str(key[0]),
                    disputed=bool(key[1]),
                    weight=part.height / take,
                    question=r["question"] or "",
                    ground_truth=r["ground_truth"] or "",
                    answer=r["hypothesis"] or "",
                )
            )
    rng.shuffle(items)
    return items


def allocate(sizes: list[int], n: int) -> list[int]:
    """Proportional allocation of ``n`` over strata of ``sizes``: at least 1 and at most N_h each, the
    largest remainders rounding up, ``min(n, ΣN_h)`` in all (or one per stratum when n is smaller)."""
    total = sum(sizes)
    n = min(n, total)
    exact = [n * s / total for s in sizes]
    takes = [min(s, max(1, int(e))) for s, e in zip(sizes, exact, strict=True)]
    order = sorted(range(len(sizes)), key=lambda i: exact[i] - int(exact[i]), reverse=True)
    while sum(takes) < n:
        grew = False
        for i in order:
            if sum(takes) < n and takes[i] < sizes[i]:
                takes[i] += 1
                grew = True
        if not grew:
            break
    while sum(takes) > max(n, len(sizes)):  # the minimum of one each overshot: trim the most over its share
        i = max((i for i in range(len(sizes)) if takes[i] > 1), key=lambda i: takes[i] - exact[i])
        takes[i] -= 1
    return takes


class LabelWidget:
    """Label a stratified sample of answers by keyboard (see the module docstring). ``.widget`` is the layout."""

    def __init__(
        self,
        runs: Any,
        *,
        n: int = 60,
        seed: int = 0,
        labeller: str | None = None,
        n_hits: int = 5,
    ) -> None:
        self.runset: RunSet = runs if isinstance(runs, RunSet) else load_runs(runs)
        self.labeller = labeller
        self.judge = human_judge(labeller)
        self.n_hits = n_hits
        questions = questions_frame(self.runset)
        self.items = stratified_sample(questions, judgments_frame(self.runset), n, seed=seed)
        self._runs = {str(r.path): r for r in self.runset}
        self.labels: dict[tuple[str, str], str] = {}
        for path in {i.run_path for i in self.items}:
            found, _ = read_labels(path)
            run_id = self._runs[path].run_id
            for (qid, judge), lab in found.items():
                if judge == self.judge:
                    self.labels[(run_id, qid)] = lab.label
        self.position = self._first_unlabelled()
        self.progress = w.IntProgress(min=0, max=max(1, len(self.items)), description="labelled")
        self.status = w.HTML()
        self.card = w.HTML()
        self.keys = w.Text(
            placeholder="click here, then type: c correct · i incorrect · u unsure · b back · n next",
            layout=w.Layout(width="520px"),
        )
        self.keys.add_class("bnb-label-keys")
        self.keys.observe(self._on_keys, names="value")
        buttons = []
        for text, key in (
            ("Correct (c)", "c"),
            ("Incorrect (i)", "i"),
            ("Unsure (u)", "u"),
            ("Back (b)", "b"),
        ):
            button = w.Button(description=text, layout=w.Layout(width="120px"))
            button.on_click(lambda _b, k=key: self.press(k))
            buttons.append(button)
        self.widget = w.VBox([w.HBox([self.progress, self.status]), self.card, self.keys, w.HBox(buttons)])
        self.widget.add_class("bnb-labeller")
        self.render()

    # --- state ------------------------------------------------------------------------------------------

    def _first_unlabelled(self, start: int = 0) -> int:
        """The first answer from ``start`` on without a label (``len(items)`` when there is none)."""
        return next(
            (
                i
                for i in range(start, len(self.items))
                if (self.items[i].run_id, self.items[i].question_id) not in self.labels
            ),
            len(self.items),
        )

    @property
    def done(self) -> int:
        """How many sampled answers have a label."""
        return sum((i.run_id, i.question_id) in self.labels for i in self.items)

    @property
    def current(self) -> Item | None:
        """The answer being labelled, or None when every one is done."""
        return self.items[self.position] if 0 <= self.position < len(self.items) else None

    def press(self, key: str) -> None:
        """Act on one key (see the module docstring); other keys are ignored."""
        key = key.lower()
        if key in KEYS:
            self.label(KEYS[key])
        elif key == "b":
            self.position = max(0, self.position - 1)
        elif key == "n":
            self.position = min(len(self.items), self.position + 1)
        else:
            return
        self.render()

    def label(self, label: str) -> None:
        """Label the current answer, save it at once, and move to the next unlabelled answer."""
        item = self.current
        if item is None:
            return
        append_label(
            item.run_path,
            item.question_id,
            label,
            labeller=self.labeller,
            weight=item.weight,
            stratum=item.stratum,
        )
        self.labels[(item.run_id, item.question_id)] = label
        nxt = self._first_unlabelled(self.position + 1)
        self.position = nxt if nxt < len(self.items) else self._first_unlabelled()

    def _on_keys(self, change: dict[str, Any]) -> None:
        if typed := change.get("new"):
            for key in typed:
                self.press(key)
            self.keys.value = ""

    # --- rendering --------------------------------------------------------------------------------------

    def render(self) -> None:
        """Show the progress and the current answer's card (question, gold answer, answer, retrieved context)."""
        total = len(self.items)
        self.progress.value = self.done
        self.status.value = f"<b>{self.done} / {total}</b> labelled" + (
            f" · answer {self.position + 1} of {total}" if self.current is not None else ""
        )
        item = self.current
        if item is None:
            self.card.value = (
                f"{STYLE}<div class='bnb-settings'>Every sampled answer is labelled ({total}). The labels are "
                f"the judge <b>{esc(self.judge)}</b> in judgments_df and the agreement tables.</div>"
            )
            return
        previous = self.labels.get((item.run_id, item.question_id))
        hits = retrieved_texts(self._runs[item.run_path], item.question_id, self.n_hits)
        context = "".join(f"<li>{esc(h[:600])}</li>" for h in hits) or "<li>not recorded</li>"
        again = f"<div class='bnb-note'>labelled before: {esc(previous)}</div>" if previous else ""
        self.card.value = (
            f"{STYLE}<div class='bnb-label-card' style='font:14px/1.45 Helvetica,Arial,sans-serif;max-width:900px'>"
            f"<div style='color:#57606a'>{esc(item.question_type)} · {esc(item.run_id)} · "
            f"{esc(item.question_id)}</div>"
            f"<div style='font-size:16px;margin:6px 0'><b>{esc(item.question)}</b></div>"
            f"<div>gold answer: <b>{esc(item.ground_truth) or '(none: unanswerable)'}</b></div>"
            f"<div style='margin:6px 0;padding:6px 10px;border-left:4px solid #0969da;background:#f6f8fa'>"
            f"answer: <span class='bnb-label-answer'>{esc(item.answer)}</span></div>{again}"
            f"<details><summary>retrieved context ({len(hits)})</summary><ol>{context}</ol></details></div>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def label_answers(runs: Any, **options: Any) -> LabelWidget:
    """A ``LabelWidget`` over ``runs`` (anything ``load_runs`` takes); options: ``n``, ``seed``,
    ``labeller``, ``n_hits``."""
    return LabelWidget(runs, **options)
