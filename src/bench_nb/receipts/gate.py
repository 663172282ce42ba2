"""``gate(BASE, NEW)``: is NEW worse than BASE by more than a margin? A regression gate for CI.

BASE and NEW are each a run directory, a run id in a run store (``store=``) or a receipt file (its
per-question scores, latencies and tokens stand in for the run). The runs must be comparable: the same
question set, the same primary judge and the same settings fingerprint (else the verdict is
``"incomparable"``, exit code 2, with every reason named). Then ``metrics.gate.non_inferiority`` tests,
haystacks as clusters, whether NEW is worse by more than ``margin`` at the one-sided level ``alpha``, with
three outcomes: *not worse* (exit 0: shown no worse than the margin allows), *worse* (exit 1: shown worse by
more than the margin) and *inconclusive* (neither: exit 3, or 0 with ``on_inconclusive="pass"``); exit 2
when the haystacks are too few for any test at that level. ``Gate.markdown()`` is a short summary for a CI
job summary (with what this benchmark can detect), ``Gate.to_dict()`` its JSON.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from bench_nb.errors import ReceiptError
from bench_nb.frames.store import StoredRuns, open_store
from bench_nb.metrics.gate import (
    ALL,
    INCONCLUSIVE,
    LOWER_IS_BETTER,
    METRICS,
    NOT_WORSE,
    POWER,
    UNDECIDED,
    WORSE,
    check_margin,
    gate_values,
    non_inferiority,
    repeats_non_inferiority,
)
from bench_nb.receipts.receipt import Receipt, check_signed_by, is_receipt_file, read_receipt, read_run_data
from bench_nb.runformat.spec import RunSpec, differences

INCOMPARABLE = "incomparable"
# The exit codes: not worse 0, worse 1, cannot decide (too few haystacks) or cannot compare 2, inconclusive 3
# (``on_inconclusive="fail"``, the default: a non-zero code that fails a CI job, distinct from worse) or 0
# (``on_inconclusive="pass"``).
EXIT_CODES = {NOT_WORSE: 0, WORSE: 1, UNDECIDED: 2, INCOMPARABLE: 2, INCONCLUSIVE: 3}
ON_INCONCLUSIVE = ("fail", "pass")
# What the gate asks (docs/statistics.md, "The regression gate"): would NEW be worse on new conversations like
# these (the clustered paired test over haystacks), or is NEW worse on this fixed benchmark beyond its
# run-to-run noise (Welch's t over repeated runs of each)?
CONVERSATIONS, BENCHMARK = "conversations", "benchmark"
ESTIMANDS = (CONVERSATIONS, BENCHMARK)
QUESTIONS_ASKED = {
    CONVERSATIONS: "would NEW be worse on new conversations like these? (the clustered paired test over haystacks)",
    BENCHMARK: "is NEW worse on this benchmark beyond its run-to-run noise? (Welch's t over repeated runs; it "
    "says nothing of other conversations)",
}
DEFAULT_ALPHA = 0.1
DEFAULT_MARGIN = 0.02
_SHOWN = 5  # questions named in a message


#: The members of a receipt's question the gate reads (``receipt.receipt_body``): each one's column in the
#: questions frame (``Side.questions``), and its type.
_RECEIPT_QUESTION: dict[str, tuple[str, Any]] = {
    "id": ("question_id", pl.Utf8),
    "haystack": ("haystack_id", pl.Utf8),
    "type": ("question_type_norm", pl.Utf8),
    "status": ("status", pl.Utf8),
    "unscored": ("unscored", pl.Boolean),
    "score": ("score", pl.Float64),
    "searchMs": ("search_ms", pl.Float64),
    "contextTokens": ("context_tokens", pl.Float64),
}


@dataclass(frozen=True)
class Side:
    """One side of a gate: where it came from, its questions (the columns ``gate_values`` reads), settings."""

    label: str
    kind: str  # "run", "store run" or "receipt"
    run_id: str
    questions: pl.DataFrame
    settings: RunSpec
    fingerprint: str
    receipt_sha256: str | None = None


def _receipt_side(receipt: Receipt, label: str) -> Side:
    body = receipt.body
    s, run, dataset = body["settings"], body["run"], body["dataset"]
    qs = body["questions"]
    questions = (
        pl.DataFrame(qs, schema={member: kind for member, (_, kind) in _RECEIPT_QUESTION.items()})
        .rename({member: column for member, (column, _) in _RECEIPT_QUESTION.items()})
        .with_columns(run_id=pl.lit(run["id"]), correct=pl.col("score") == 1)
    )
    ids = tuple(q["id"] for q in qs)
    settings = RunSpec(
        run_id=run["id"],
        provider=run["provider"],
        benchmark=s.get("benchmark"),
        question_ids=ids,
        question_set_hash=dataset["questionSet"],
        k=s.get("k"),
        answerer=s.get("answerer"),
        primary_judge=s.get("judge"),
        judges=list(s.get("judges") or ()) or None,
        prompt_hashes=s.get("promptHashes"),
        benchmark_sha256=dataset.get("sha256"),
        custom_prompt=bool(s.get("customPrompt")),
    )
    return Side(label, "receipt", run["id"], questions, settings, s["fingerprint"], receipt.sha256)


def read_side(
    source: Any,
    *,
    store: Any = None,
    dataset: str | os.PathLike[str] | None = None,
    public_key: str | os.PathLike[str] | None = None,
) -> Side:
    """A gate's side: a receipt file, a run directory (or ``Run``), another harness's result file (with
    ``dataset``, the benchmark file it needs: ``read_run_data``), or a run id in ``store``.

    A receipt's signature is checked (``receipt.check_signed_by``): a signed receipt needs ``public_key``,
    the key it must be signed with. With ``store``, a source that names one of the store's runs is that run
    (even when a file or folder of that name exists here); another existing path is read from disk.
    """
    if isinstance(source, Receipt):
        where = f"receipt of {source.run_id}"
        check_signed_by(source, public_key, where)
        return _receipt_side(source, where)
    if is_receipt_file(source):
        receipt = read_receipt(source)
        check_signed_by(receipt, public_key, os.fspath(source))
        return _receipt_side(receipt, os.fspath(source))
    from_store = _from_store(store, source)
    data = read_run_data(source, store=store if from_store else None, dataset=dataset)
    return Side(
        data.label,
        "store run" if from_store else "run",
        data.settings.run_id,
        data.questions,
        data.settings,
        data.settings.fingerprint,
    )


def _from_store(store: Any, source: Any) -> bool:
    """Whether ``source`` is read from ``store``: the id of one of its runs, or anything but an existing path."""
    if store is None:
        return False
    if not isinstance(source, (str, os.PathLike)):
        return True
    opened = store if isinstance(store, StoredRuns) else open_store(store)
    return os.fspath(source) in opened.run_ids or not Path(source).exists()


def comparability(base: Side, new: Side) -> list[str]:
    """Why BASE and NEW cannot be gated against each other (empty: they can): a different question set,
    primary judge or settings fingerprint, each named with what differs."""
    reasons = []
    b, n = base.settings, new.settings
    if b.question_set != n.question_set:
        ids_b, ids_n = b.question_ids or (), n.question_ids or ()
        only_b = sorted(set(ids_b) - set(ids_n))
        only_n = sorted(set(ids_n) - set(ids_b))
        detail = []
        if only_b:
            detail.append(f"{len(only_b)} only in BASE (first: {only_b[0]})")
        if only_n:
            detail.append(f"{len(only_n)} only in NEW (first: {only_n[0]})")
        reasons.append(
            f"different question sets: BASE has {len(ids_b)} questions, NEW {len(ids_n)}"
            + (f"; {', '.join(detail)}" if detail else "")
        )
    if (b.judge or None) != (n.judge or None):
        reasons.append(f"different judges: BASE is graded by {b.judge!r}, NEW by {n.judge!r}")
    if base.fingerprint != new.fingerprint:
        named = [d for d in differences([b, n]) if not d.startswith(("question set", "judge differs"))]
        if named:
            why = "; ".join(named)
        elif reasons:
            why = "it covers the question set and the judges"
        else:
            why = "the provider settings or the judges besides the primary differ"
        reasons.append(
            f"different settings fingerprints: BASE {base.fingerprint}, NEW {new.fingerprint} ({why})"
        )
    return reasons


@dataclass(frozen=True)
class Gate:
    """A gate's outcome: ``verdict`` (``"not worse"``, ``"worse"``, ``"inconclusive"``, ``"undecided"``,
    ``"incomparable"``), ``exit_code`` (0, 1, 3 or 0 with ``on_inconclusive="pass"``, 2, 2), ``passed``, the
    rows of ``metrics.gate.non_inferiority``, the reasons it could not decide, and ``counted_wrong``: the
    questions BASE scored that NEW did not, each counted as wrong for NEW (with why: failed, unscored, ...)."""

    base: Side
    new: Side
    metric: str
    margin: float
    alpha: float
    by: str | None
    verdict: str
    rows: pl.DataFrame
    reasons: list[str] = field(default_factory=list)
    on_inconclusive: str = "fail"
    counted_wrong: dict[str, str] = field(default_factory=dict)
    estimand: str = CONVERSATIONS

    @property
    def exit_code(self) -> int:
        """The process exit code: 0 not worse, 1 worse, 2 undecided or incomparable, 3 inconclusive (0 with
        ``on_inconclusive="pass"``)."""
        if self.verdict == INCONCLUSIVE and self.on_inconclusive == "pass":
            return 0
        return EXIT_CODES[self.verdict]

    @property
    def passed(self) -> bool:
        """Whether the gate lets NEW through (exit code 0)."""
        return self.exit_code == 0

    def to_dict(self) -> dict[str, Any]:
        """The gate as JSON-ready values (NaN and infinities as ``None``)."""
        return {
            "verdict": self.verdict,
            "exitCode": self.exit_code,
            "onInconclusive": self.on_inconclusive,
            "estimand": self.estimand,
            "metric": self.metric,
            "margin": self.margin,
            "alpha": self.alpha,
            "by": self.by,
            "countedWrong": dict(self.counted_wrong),
            "base": _side_dict(self.base),
            "new": _side_dict(self.new),
            "reasons": list(self.reasons),
            "rows": [{k: _finite(v) for k, v in r.items()} for r in self.rows.iter_rows(named=True)],
        }

    def markdown(self) -> str:
        """A short Markdown summary (table, verdict, interval, what to do) for ``$GITHUB_STEP_SUMMARY``."""
        return _markdown(self)


def _finite(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _side_dict(side: Side) -> dict[str, Any]:
    return {
        "source": side.label,
        "kind": side.kind,
        "runId": side.run_id,
        "settingsFingerprint": side.fingerprint,
        "receiptSha256": side.receipt_sha256,
    }


def gate(
    base: Any,
    new: Any,
    *,
    margin: float = DEFAULT_MARGIN,
    metric: str = "accuracy",
    alpha: float = DEFAULT_ALPHA,
    by: str | None = None,
    store: Any = None,
    dataset: str | os.PathLike[str] | None = None,
    public_key: str | os.PathLike[str] | None = None,
    on_inconclusive: str = "fail",
    estimand: str = CONVERSATIONS,
) -> Gate:
    """Is NEW worse than BASE by more than ``margin``? A non-inferiority check with the clustered paired test.

    Args:
        base, new: a run directory, a receipt file (``bench-nb receipt``), a ``Receipt``, or a run id in
            ``store`` (a run store, ``bench-nb export``).
        margin: how much worse NEW may be: accuracy points as a proportion (0.02 = 2 points) for
            ``accuracy`` and ``quality``; a relative increase (0.02 = 2% more) for ``latency_ms`` and
            ``context_tokens``.
        metric: ``accuracy`` (share scored 1), ``quality`` (mean score), ``latency_ms`` (search duration)
            or ``context_tokens``.
        alpha: the one-sided level: the largest chance of failing when NEW is in truth no worse than the
            margin allows (with ``by``, shared by the rows: Bonferroni).
        by: ``"question_type"`` (or ``"type"``, as ``bench-nb gate --by type``) to gate each normalised
            question type as well as all questions.
        store: the run store that run ids in ``base`` and ``new`` name.
        dataset: the benchmark file the runs were made on, for other harnesses' result files (Zep's and
            Mem0's LoCoMo files need LoCoMo's locomo10.json: ``load_runs(dataset=)``).
        public_key: the Ed25519 public key (PEM) a signed receipt must be signed with; a signed receipt
            without it is refused (``receipt.check_signed_by``).
        on_inconclusive: ``"fail"`` (exit code 3, the default: a gate passes only what it showed not worse)
            or ``"pass"`` (exit code 0) when the benchmark cannot tell.
        estimand: ``"conversations"`` (the default: would NEW be worse on new conversations like these? the
            clustered paired test over haystacks) or ``"benchmark"`` (is NEW worse on this fixed benchmark
            beyond its run-to-run noise? ``base`` and ``new`` are then lists of 2 or more repeated runs each,
            ``bench-nb run --repeat``, compared with Welch's t on their accuracies; accuracy or quality only).

    Returns:
        A ``Gate``: ``verdict``, ``exit_code`` (0 not worse, 1 worse, 3 inconclusive, 2 undecided or
        incomparable), ``rows``, ``reasons``, ``counted_wrong``, ``markdown()``, ``to_dict()``. Definitions:
        docs/statistics.md ("The regression gate").

    Raises:
        ValueError: a metric, margin, alpha or ``on_inconclusive`` out of range.
        ReceiptError, RunFormatError: a side that cannot be read (a receipt refused, naming why).
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, not {metric!r}")
    margin = check_margin(metric, margin)
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), not {alpha}")
    if on_inconclusive not in ON_INCONCLUSIVE:
        raise ValueError(f"on_inconclusive must be 'fail' or 'pass', not {on_inconclusive!r}")
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be 'conversations' or 'benchmark', not {estimand!r}")
    by = "question_type" if by in ("type", "question_type") else by
    read = partial(read_side, store=store, dataset=dataset, public_key=public_key)
    if estimand == BENCHMARK:
        return _benchmark_gate(
            base, new, read, metric=metric, margin=margin, alpha=alpha, by=by, on_inconclusive=on_inconclusive
        )
    if isinstance(base, (list, tuple)) or isinstance(new, (list, tuple)):
        raise ValueError("lists of repeated runs are gated with estimand='benchmark' (--estimand benchmark)")
    b = read(base)
    n = read(new)
    if public_key is not None and "receipt" not in (b.kind, n.kind):
        raise ReceiptError("a public key was given, but neither BASE nor NEW is a receipt")
    reasons = comparability(b, n)

    def made(verdict: str, rows: pl.DataFrame, why: list[str], wrong: dict[str, str] | None = None) -> Gate:
        return Gate(b, n, metric, margin, alpha, by, verdict, rows, why, on_inconclusive, wrong or {})

    if reasons:
        return made(INCOMPARABLE, _no_rows(metric), reasons)
    base_values = gate_values(b.questions.with_columns(run_id=pl.lit("base")), metric)
    new_values = gate_values(n.questions.with_columns(run_id=pl.lit("new")), metric)
    lacking = _lacking(base_values, new_values, n.questions, metric)
    if lacking and metric in LOWER_IS_BETTER:
        what = "search latency" if metric == "latency_ms" else "context tokens"
        return made(
            INCOMPARABLE,
            _no_rows(metric),
            [
                f"NEW has no {what} for {_some(lacking)} that BASE has: the gate cannot tell how slow they were"
            ],
        )
    values = pl.concat([base_values, new_values])
    rows = non_inferiority(values, "base", "new", metric=metric, margin=margin, alpha=alpha, by=by)
    verdicts = rows["verdict"].to_list()
    if WORSE in verdicts:
        verdict = WORSE
    elif verdicts[0] == UNDECIDED:
        verdict = UNDECIDED
        reasons = [str(rows["note"][0])]
    elif all(v == NOT_WORSE for v in verdicts):
        verdict = NOT_WORSE
    else:
        verdict = INCONCLUSIVE
    return made(verdict, rows, reasons, lacking)


def _benchmark_gate(
    base: Any,
    new: Any,
    read: Callable[[Any], Side],
    *,
    metric: str,
    margin: float,
    alpha: float,
    by: str | None,
    on_inconclusive: str,
) -> Gate:
    """``gate(estimand="benchmark")``: BASE's and NEW's repeats, each run's accuracy over the questions some
    BASE repeat scored (a question a NEW repeat did not score counted as wrong), compared with
    ``metrics.gate.repeats_non_inferiority``."""
    if metric not in ("accuracy", "quality"):
        raise ValueError(f"the benchmark estimand gates accuracy or quality, not {metric}")
    if by is not None:
        raise ValueError("by type is not available with the benchmark estimand (gate all questions)")
    bs, ns = ([read(x) for x in _repeats(side)] for side in (base, new))
    if not bs or not ns:
        raise ValueError("the benchmark estimand needs at least 2 runs of BASE and 2 of NEW")
    why = [f"{o.label}: {r}" for o in [*bs[1:], *ns] for r in comparability(bs[0], o)]
    rows, wrong = (_no_rows(metric), {}) if why else _repeats_rows(bs, ns, metric, margin, alpha)
    verdict = INCOMPARABLE if why else str(rows["verdict"][0])
    return Gate(
        bs[0], ns[0], metric, margin, alpha, by, verdict, rows, why, on_inconclusive, wrong, BENCHMARK
    )


def _repeats_rows(
    bs: list[Side], ns: list[Side], metric: str, margin: float, alpha: float
) -> tuple[pl.DataFrame, dict[str, str]]:
    """The row of ``metrics.gate.repeats_non_inferiority`` for comparable repeats, and the questions counted
    wrong for NEW."""
    base_values = [gate_values(s.questions.with_columns(run_id=pl.lit("base")), metric) for s in bs]
    scored = sorted(set().union(*(set(v["question_id"].to_list()) for v in base_values)))
    wanted = pl.DataFrame({"question_id": scored}, schema={"question_id": pl.Utf8})
    wrong: dict[str, str] = {}
    new_means = []
    for side in ns:
        values = gate_values(side.questions.with_columns(run_id=pl.lit("new")), metric)
        for qid, why in _lacking(wanted, values, side.questions, metric).items():
            wrong.setdefault(qid, f"{why} in {side.label}")
        have = dict(zip(values["question_id"].to_list(), values["value"].to_list(), strict=True))
        new_means.append(sum(have.get(q, 0.0) for q in scored) / max(len(scored), 1))
    rows = repeats_non_inferiority(
        [float(v["value"].mean()) for v in base_values],  # type: ignore[arg-type]
        new_means,
        questions=len(scored),
        haystacks=int(bs[0].questions["haystack_id"].n_unique()),
        margin=margin,
        alpha=alpha,
        counted_wrong=len(wrong),
    )
    return rows, wrong


def _repeats(side: Any) -> list[Any]:
    """A side of the benchmark estimand as a list of runs: a list or tuple, or a comma-separated string."""
    if isinstance(side, (list, tuple)):
        return list(side)
    if isinstance(side, str):
        return [part for part in side.split(",") if part]
    return [side]


def _lacking(base: pl.DataFrame, new: pl.DataFrame, questions: pl.DataFrame, metric: str) -> dict[str, str]:
    """The questions BASE has a value for and NEW has none for, each with why (NEW's status: ``failed``,
    ``unscored``, a phase it stopped at, or ``not in NEW``), sorted by id."""
    ids = sorted(set(base["question_id"].to_list()) - set(new["question_id"].to_list()))
    if not ids:
        return {}
    status = (
        dict(
            questions.select(pl.col("question_id").cast(pl.Utf8), pl.col("status").cast(pl.Utf8)).iter_rows()
        )
        if "status" in questions.columns
        else {}
    )
    unscored = set()
    if metric in ("accuracy", "quality") and "unscored" in questions.columns:
        flagged = questions.filter(pl.col("unscored").fill_null(False) | (pl.col("status") == "evaluated"))
        unscored = set(flagged["question_id"].cast(pl.Utf8).to_list())
    out = {}
    for qid in ids:
        if qid not in status:
            out[qid] = "not in NEW"
        elif qid in unscored:
            out[qid] = "unscored"
        else:
            out[qid] = str(status[qid] or "unfinished")
    return out


def _some(lacking: dict[str, str]) -> str:
    """``12 questions (8 failed, 4 unscored; first: q1, q2, ...)``."""
    counts: dict[str, int] = {}
    for why in lacking.values():
        counts[why] = counts.get(why, 0) + 1
    ids = list(lacking)
    first = ", ".join(ids[:_SHOWN]) + (", ..." if len(ids) > _SHOWN else "")
    kinds = ", ".join(f"{k} {why}" for why, k in sorted(counts.items()))
    return f"{len(ids)} question{'s' if len(ids) != 1 else ''} ({kinds}; {'first: ' if len(ids) > _SHOWN else ''}{first})"


def _no_rows(metric: str) -> pl.DataFrame:
    """The gate's rows of no values: an incomparable gate's."""
    empty = pl.DataFrame(
        schema={
            "run_id": pl.Utf8,
            "question_id": pl.Utf8,
            "haystack_id": pl.Utf8,
            "question_type": pl.Utf8,
            "value": pl.Float64,
        }
    )
    return non_inferiority(empty, "", "", metric=metric)


# --- the Markdown summary ----------------------------------------------------------------------------------

_ICONS = {
    NOT_WORSE: "✅ not worse",
    WORSE: "❌ worse",
    INCONCLUSIVE: "❔ inconclusive",
    UNDECIDED: "⚠️ undecided",
    INCOMPARABLE: "⛔ cannot compare",
}


def _value(metric: str, x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    if metric in ("accuracy", "quality"):
        return f"{100 * x:.1f}%"
    return f"{x:,.1f} ms" if metric == "latency_ms" else f"{x:,.0f}"


def _change(metric: str, x: float | None) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "+∞%" if x > 0 else "−∞%"
    if metric in LOWER_IS_BETTER:
        return f"{100 * x:+.1f}%".replace("-", "−")
    return f"{100 * x:+.1f} pts".replace("-", "−")


def _margin(metric: str, margin: float) -> str:
    return (
        f"{100 * margin:g}% {'slower' if metric == 'latency_ms' else 'more'}"
        if metric in LOWER_IS_BETTER
        else (f"{100 * margin:g} points")
    )


def _percent(x: float) -> str:
    if x <= 0:
        return "under 30%"
    if x >= 1:
        return "over 95%"
    return f"{100 * x:.0f}%"


def detectable_sentence(g: Gate) -> str:
    """What the benchmark can show at the gate's level, in words: the drop (or increase) it shows worse with
    80% power, and the chance an equally good NEW is shown not worse at the margin."""
    r = g.rows.row(0, named=True)
    k = int(r["clusters"])
    size = f"{k} haystack{'s' if k != 1 else ''} (conversations), {r['n']:,} questions"
    if g.estimand == BENCHMARK:
        size = f"{r['note']} of {r['n']:,} questions"
    detectable, power = r["detectable"], r["power_at_margin"]
    if detectable is None or not math.isfinite(detectable) or power is None or math.isnan(power):
        return f"{size}: too few, or too uniform, to say what this gate can detect."
    ratio = g.metric in LOWER_IS_BETTER
    what = ("an increase" if ratio else "a drop") + f" of {_amount(g.metric, detectable)} or more"
    text = (
        f"{size}: at one-sided level {r['alpha']:g} this gate shows {what} *worse* {round(POWER * 10)} times in "
        f"10 ({100 * POWER:g}% power); an equally good NEW is shown *not worse* than the margin of "
        f"{_amount(g.metric, g.margin)} with probability {_percent(power)}."
    )
    if power < POWER:
        needed = detectable - g.margin
        more = (
            "more repeats: `bench-nb run --repeat`"
            if g.estimand == BENCHMARK
            else "more haystacks: `bench-nb plan`"
        )
        text += (
            f" It cannot tell {'an increase' if ratio else 'a drop'} of {_amount(g.metric, g.margin)} from noise: "
            f"a margin of about {_amount(g.metric, needed)} (or {more}) would show an "
            f"equally good NEW not worse {round(POWER * 10)} times in 10."
        )
    return text


def _amount(metric: str, x: float) -> str:
    if metric in LOWER_IS_BETTER:
        return f"{100 * x:.0f}%"
    return f"{100 * x:.1f} points"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(g: Gate) -> str:
    what = {
        "accuracy": "accuracy",
        "quality": "quality (mean score)",
        "latency_ms": "search latency",
        "context_tokens": "context tokens",
    }[g.metric]
    lines = [f"## bench-nb gate: {_ICONS[g.verdict]}", ""]
    lines.append(
        f"NEW `{_md_cell(g.new.label)}` against BASE `{_md_cell(g.base.label)}` on {what}: may NEW be worse by "
        f"at most {_margin(g.metric, g.margin)}? One-sided level {g.alpha:g}. The question ({g.estimand}): "
        f"{QUESTIONS_ASKED[g.estimand]}."
    )
    lines.append("")
    if g.verdict == INCOMPARABLE:
        lines.append("**Verdict:** the runs cannot be compared:")
        lines.append("")
        lines.extend(f"- {_md_cell(r)}" for r in g.reasons)
        lines += [
            "",
            "**What to do:** run NEW on BASE's questions with BASE's judge and settings "
            "(`bench-nb run` with the same benchmark file, `-j`, `-k`, answerer), or gate against a "
            "baseline made with the new settings.",
        ]
        return "\n".join(lines) + "\n"
    level = 1 - 2 * g.alpha
    lines.append(
        f"| type | questions | haystacks | BASE | NEW | change | {100 * level:g}% interval | p | verdict |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---|---:|---|")
    for r in g.rows.iter_rows(named=True):
        interval = (
            "n/a"
            if math.isnan(r["ci_low"])
            else f"{_change(g.metric, r['ci_low'])} to {_change(g.metric, r['ci_high'])}"
        )
        p = "n/a" if r["p_value"] is None or math.isnan(r["p_value"]) else f"{r['p_value']:.3g}"
        lines.append(
            f"| {_md_cell(r['question_type'])} | {r['n']} | {r['clusters']} | {_value(g.metric, r['base'])} | "
            f"{_value(g.metric, r['new'])} | {_change(g.metric, r['change'])} | {interval} | {p} | "
            f"{_ICONS[r['verdict']]} |"
        )
    lines.append("")
    overall = g.rows.row(0, named=True)
    bound = "upper" if g.metric not in LOWER_IS_BETTER else "lower"
    limit = -g.margin if g.metric not in LOWER_IS_BETTER else g.margin
    interval = f"({_change(g.metric, overall['ci_low'])} to {_change(g.metric, overall['ci_high'])})"
    worse = [r["question_type"] for r in g.rows.iter_rows(named=True) if r["verdict"] == WORSE]
    if g.verdict == WORSE:
        where = "on all questions" if ALL in worse else f"on {', '.join(worse)}"
        direction = "below" if bound == "upper" else "above"
        lines.append(
            f"**Verdict:** worse: NEW is worse than BASE by more than {_margin(g.metric, g.margin)} {where}: the "
            f"interval's {bound} end is {direction} {_change(g.metric, limit)} (one-sided p < {g.rows['alpha'][0]:g})."
        )
        lines.append("")
        lines.append(
            "**What to do:** look at what NEW lost (`bench-nb show-failures NEW`; the compare report of both "
            "runs shows it per question type); if the change is intended, make NEW the new baseline."
        )
    elif g.verdict == UNDECIDED:
        lines.append(f"**Verdict:** undecided: {g.reasons[0] if g.reasons else 'too few haystacks'}.")
        lines.append("")
        k = int(overall["clusters"])  # fewer than 2 haystacks: no test at any level
        lines.append(
            "**What to do:** gate on a benchmark with at least 2 haystacks (conversations, chats); no `--alpha` "
            f"can decide with {k} haystack{'s' if k != 1 else ''}."
        )
    elif g.verdict == NOT_WORSE:
        lines.append(
            f"**Verdict:** not worse: NEW is shown no worse than BASE by more than {_margin(g.metric, g.margin)}: "
            f"the interval {interval} rules a larger regression out."
        )
        lines.append("")
        lines.append("**What to do:** nothing.")
    else:
        outcome = (
            "passes (`--on-inconclusive pass`)"
            if g.passed
            else "fails (exit 3; `--on-inconclusive pass` lets it through)"
        )
        lines.append(
            f"**Verdict:** inconclusive: no regression beyond {_margin(g.metric, g.margin)} is shown, and none is "
            f"ruled out: the interval {interval} reaches past {_change(g.metric, limit)}. The gate {outcome}."
        )
        lines.append("")
        more = (
            "more repeats of each run (`bench-nb run --repeat`)"
            if g.estimand == BENCHMARK
            else "more haystacks (`bench-nb plan` says how many)"
        )
        lines.append(
            f"**What to do:** to decide, gate on {more} or with a margin this benchmark can show (below)."
        )
    lines.append("")
    lines.append(f"**What this benchmark can show:** {detectable_sentence(g)}")
    if g.counted_wrong:
        lines.append("")
        lines.append(
            f"**Counted as wrong for NEW:** {_some(g.counted_wrong)}: BASE scored them, NEW did not (a question "
            "NEW failed, left unfinished or could not score is a wrong answer to its user)."
        )
    for side, name in ((g.base, "BASE"), (g.new, "NEW")):
        if side.receipt_sha256:
            lines.append("")
            lines.append(f"{name} is a receipt, sha256 `{side.receipt_sha256}`.")
    return "\n".join(lines) + "\n"
