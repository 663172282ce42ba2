"""``gate(BASE, NEW)``: is NEW worse than BASE by more than a margin? A regression gate for CI.

BASE and NEW are each a run directory, a run id in a run store (``store=``) or a receipt file (its
per-question scores, latencies and tokens stand in for the run). The runs must be comparable: the same
question set, the same primary judge and the same settings fingerprint (else the verdict is
``"incomparable"``, exit code 2, with every reason named). Then ``metrics.gate.non_inferiority`` tests,
haystacks as clusters, whether NEW is worse by more than ``margin`` at the one-sided level ``alpha``:
exit 1 when it is shown to be, 0 when not, 2 when the haystacks are too few for any test at that level.
``Gate.markdown()`` is a short summary for a CI job summary, ``Gate.to_dict()`` its JSON.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from bench_nb.metrics.clustered_paired import EXACT
from bench_nb.metrics.gate import (
    ALL,
    FAIL,
    LOWER_IS_BETTER,
    METRICS,
    PASS,
    UNDECIDED,
    fewest_haystacks,
    gate_values,
    non_inferiority,
    smallest_deciding_alpha,
)
from bench_nb.metrics.unused_args import UNSET, warn_unused
from bench_nb.receipts.receipt import Receipt, is_receipt_file, read_receipt, read_run_data
from bench_nb.runformat.spec import RunSpec, differences

INCOMPARABLE = "incomparable"
EXIT_CODES = {PASS: 0, FAIL: 1, UNDECIDED: 2, INCOMPARABLE: 2}
DEFAULT_ALPHA = 0.1
DEFAULT_MARGIN = 0.02


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
    questions = pl.DataFrame(
        {
            "run_id": [run["id"]] * len(qs),
            "question_id": [q["id"] for q in qs],
            "haystack_id": [q["haystack"] for q in qs],
            "question_type_norm": [q["type"] for q in qs],
            "status": [q["status"] for q in qs],
            "unscored": [q["unscored"] for q in qs],
            "score": [q["score"] for q in qs],
            "correct": [None if q["score"] is None else q["score"] == 1 for q in qs],
            "search_ms": [q["searchMs"] for q in qs],
            "context_tokens": [q["contextTokens"] for q in qs],
        },
        schema={
            "run_id": pl.Utf8,
            "question_id": pl.Utf8,
            "haystack_id": pl.Utf8,
            "question_type_norm": pl.Utf8,
            "status": pl.Utf8,
            "unscored": pl.Boolean,
            "score": pl.Float64,
            "correct": pl.Boolean,
            "search_ms": pl.Float64,
            "context_tokens": pl.Float64,
        },
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


def read_side(source: Any, *, store: Any = None, dataset: str | os.PathLike[str] | None = None) -> Side:
    """A gate's side: a receipt file, a run directory (or ``Run``), another harness's result file (with
    ``dataset``, the benchmark file it needs: ``read_run_data``), or a run id in ``store``.

    With ``store``, a source that is not an existing file or directory is a run id in it.
    """
    if isinstance(source, Receipt):
        return _receipt_side(source, f"receipt of {source.run_id}")
    if is_receipt_file(source):
        return _receipt_side(read_receipt(source), os.fspath(source))
    from_store = store is not None and not (isinstance(source, (str, os.PathLike)) and Path(source).exists())
    data = read_run_data(source, store=store if from_store else None, dataset=dataset)
    return Side(
        data.label,
        "store run" if from_store else "run",
        data.settings.run_id,
        data.questions,
        data.settings,
        data.settings.fingerprint,
    )


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
    """A gate's outcome: ``verdict`` (``"pass"``, ``"fail"``, ``"undecided"``, ``"incomparable"``),
    ``exit_code`` (0, 1, 2, 2), the rows of ``metrics.gate.non_inferiority`` and the reasons it could not
    decide."""

    base: Side
    new: Side
    metric: str
    margin: float
    alpha: float
    by: str | None
    verdict: str
    rows: pl.DataFrame
    reasons: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The process exit code of the verdict: 0 pass, 1 fail, 2 undecided or incomparable."""
        return EXIT_CODES[self.verdict]

    def to_dict(self) -> dict[str, Any]:
        """The gate as JSON-ready values (NaN and infinities as ``None``)."""
        return {
            "verdict": self.verdict,
            "exitCode": self.exit_code,
            "metric": self.metric,
            "margin": self.margin,
            "alpha": self.alpha,
            "by": self.by,
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
    seed: int | None = UNSET,
    dataset: str | os.PathLike[str] | None = None,
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
        by: ``"type"`` to gate each normalised question type as well as all questions.
        store: the run store that run ids in ``base`` and ``new`` name.
        seed: deprecated, changes nothing: the gate's clustered paired tests are exact (every sign pattern
            counted), so the same runs give the same verdict without one.
        dataset: the benchmark file the runs were made on, for other harnesses' result files (Zep's and
            Mem0's LoCoMo files need LoCoMo's locomo10.json: ``load_runs(dataset=)``).

    Returns:
        A ``Gate``: ``verdict``, ``exit_code`` (0 pass, 1 fail, 2 undecided or incomparable), ``rows``,
        ``reasons``, ``markdown()``, ``to_dict()``. Definitions: docs/statistics.md ("The regression gate").
    """
    warn_unused("gate", EXACT, seed=seed)
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, not {metric!r}")
    by = "question_type" if by in ("type", "question_type") else by
    b, n = read_side(base, store=store, dataset=dataset), read_side(new, store=store, dataset=dataset)
    reasons = comparability(b, n)
    if reasons:
        return Gate(
            b,
            n,
            metric,
            margin,
            alpha,
            by,
            INCOMPARABLE,
            non_inferiority(_empty(), "", "", metric=metric),
            reasons,
        )
    values = pl.concat(
        [
            gate_values(b.questions.with_columns(run_id=pl.lit("base")), metric),
            gate_values(n.questions.with_columns(run_id=pl.lit("new")), metric),
        ]
    )
    rows = non_inferiority(values, "base", "new", metric=metric, margin=margin, alpha=alpha, by=by)
    verdicts = rows["verdict"].to_list()
    overall = verdicts[0]
    if FAIL in verdicts:
        verdict = FAIL
    elif overall == UNDECIDED:
        verdict = UNDECIDED
        reasons = [str(rows["note"][0])]
    else:
        verdict = PASS
    return Gate(b, n, metric, margin, alpha, by, verdict, rows, reasons)


def _empty() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "run_id": pl.Utf8,
            "question_id": pl.Utf8,
            "haystack_id": pl.Utf8,
            "question_type": pl.Utf8,
            "value": pl.Float64,
        }
    )


def _undecided_advice(g: Gate, overall: dict[str, Any]) -> str:
    """What to do about an undecided gate: how many haystacks the level needs, and the smallest ``--alpha``
    that could decide with these haystacks (none when it would have to be 0.5 or more)."""
    rows = g.rows.height
    fewest = fewest_haystacks(overall["alpha"])
    text = f"gate on a benchmark with at least {fewest} haystacks (conversations, chats)"
    needed = smallest_deciding_alpha(int(overall["clusters"]), rows)
    k = int(overall["clusters"])
    haystacks = f"{k} haystack{'s' if k != 1 else ''}"
    if needed < 0.5:
        text += f"; with these {haystacks}, only an `--alpha` above {needed:.3g} could fail it"
    else:
        text += f"; no `--alpha` can decide with {haystacks} (it would have to be 0.5 or more)"
    text += "."
    if g.by and rows > 1:
        text += f" Each of the {rows} rows is tested at `--alpha` / {rows}: gate without `--by type` to test at `--alpha`."
    return text


# --- the Markdown summary ----------------------------------------------------------------------------------

_ICONS = {PASS: "✅ pass", FAIL: "❌ fail", UNDECIDED: "⚠️ undecided", INCOMPARABLE: "⛔ cannot compare"}


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
        f"at most {_margin(g.metric, g.margin)}? One-sided level {g.alpha:g}, the clustered paired test over "
        "haystacks."
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
    failed = [r["question_type"] for r in g.rows.iter_rows(named=True) if r["verdict"] == FAIL]
    if g.verdict == FAIL:
        where = "on all questions" if ALL in failed else f"on {', '.join(failed)}"
        direction = "below" if bound == "upper" else "above"
        lines.append(
            f"**Verdict:** NEW is worse than BASE by more than {_margin(g.metric, g.margin)} {where}: the "
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
        lines.append(f"**What to do:** {_undecided_advice(g, overall)}")
    elif overall["shown_not_worse"]:
        lines.append(
            f"**Verdict:** NEW is not worse than BASE by more than {_margin(g.metric, g.margin)}: the interval "
            f"({_change(g.metric, overall['ci_low'])} to {_change(g.metric, overall['ci_high'])}) rules it out."
        )
        lines.append("")
        lines.append("**What to do:** nothing.")
    else:
        lines.append(
            f"**Verdict:** no regression beyond {_margin(g.metric, g.margin)} is shown, but none is ruled out: "
            f"the interval ({_change(g.metric, overall['ci_low'])} to {_change(g.metric, overall['ci_high'])}) "
            f"reaches past {_change(g.metric, limit)}."
        )
        lines.append("")
        lines.append(
            "**What to do:** nothing is required; to rule a regression out, gate on more haystacks "
            "(`bench-nb plan` says how many)."
        )
    for side, name in ((g.base, "BASE"), (g.new, "NEW")):
        if side.receipt_sha256:
            lines.append("")
            lines.append(f"{name} is a receipt, sha256 `{side.receipt_sha256}`.")
    return "\n".join(lines) + "\n"
