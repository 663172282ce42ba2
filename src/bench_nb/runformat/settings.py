"""What a run was run under, read from its directory: are runs comparable?

``check_like_for_like`` lists how runs differ in what must be equal for their numbers to be compared (question
set, k, answerer, judge, prompts, benchmark file); the runner calls it before a comparison, and reports and
notebooks on any runs they put side by side. ``question_set_hash`` is the runner's record of which questions
a run asks, and ``primary_judge`` the judge whose verdict the checkpoint holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from bench_nb.runformat.load import Run, RunSet, RunView, Sources, load_runs

_MISSING = "(not recorded)"


def question_set_hash(question_ids: Sequence[str]) -> str:
    """sha256 of the sorted question ids, one a line: equal exactly when two runs ask the same questions."""
    return hashlib.sha256("\n".join(sorted(question_ids)).encode("utf-8")).hexdigest()


def primary_judge(run: Run | RunView) -> str:
    """The judge whose verdict the checkpoint holds: ``benchNb.primaryJudge``, else the run's ``judge``."""
    if run.checkpoint is not None:
        extra = run.checkpoint.benchNb or {}
        return str(extra.get("primaryJudge") or run.checkpoint.judge)
    return str((run.report or {}).get("judge", ""))


def _facts(run: Run) -> dict[str, Any]:
    """What must be equal across compared runs, read from a checkpoint or a report."""
    if run.checkpoint is not None:
        ck = run.checkpoint
        extra = ck.benchNb or {}
        ids = ck.targetQuestionIds or list(ck.questions)
        hashes = extra.get("promptHashes") or {}
        judge = extra.get("primaryJudge") or ck.judge
        return {
            "benchmark": ck.benchmark,
            "question set": extra.get("questionSetHash") or question_set_hash(ids),
            "retrieval limit k": extra.get("k"),
            "answerer": extra.get("answerer") or ck.answeringModel,
            "judge": judge,
            "answer prompt": hashes.get("answer"),
            "judge prompt": hashes.get(f"judge:{judge}"),
            "benchmark file sha256": extra.get("benchmarkSha256"),
            "custom prompt": bool(extra.get("customPrompt")),
        }
    rep = run.report or {}
    ids = [str(e.get("questionId")) for e in rep.get("evaluations", [])]
    return {
        "benchmark": rep.get("benchmark"),
        "question set": question_set_hash(ids),
        "retrieval limit k": None,
        "answerer": rep.get("answeringModel"),
        "judge": rep.get("judge"),
        "answer prompt": None,
        "judge prompt": None,
        "benchmark file sha256": None,
        "custom prompt": False,
    }


def check_like_for_like(runs: Sources | RunSet | Sequence[Run]) -> list[str]:
    """How the runs differ in question set, k, answerer, judge, prompts or benchmark file (empty: like for like).

    A value that some runs record and others do not (a MemoryBench run has no k) counts as a difference:
    nothing shows the runs agree on it. Each entry reads like
    ``"retrieval limit k differs: run-a=10, run-b=30"``. The prompts are compared by hash (the answer
    prompt and the primary judge's); a run answered or graded with a provider's own prompt
    (``benchNb.customPrompt``) is always listed, even when every run used one:
    ``"custom prompt: run-a used a provider's own prompt, not graded like the others"``.
    """
    if isinstance(runs, RunSet):
        loaded: list[Run] = list(runs)
    elif isinstance(runs, Sequence) and not isinstance(runs, str) and all(isinstance(r, Run) for r in runs):
        loaded = list(runs)  # type: ignore[arg-type]
    else:
        loaded = list(load_runs(runs))  # type: ignore[arg-type]
    if len(loaded) < 2:
        return []
    facts = [(run.run_id, _facts(run)) for run in loaded]
    out = []
    for key in facts[0][1]:
        if key == "custom prompt":
            custom = [rid for rid, f in facts if f[key]]
            if custom:
                out.append(
                    f"custom prompt: {', '.join(custom)} used a provider's own prompt, not graded like the others"
                )
            continue
        values = [f[key] for _, f in facts]
        if all(v is None for v in values) or len({repr(v) for v in values}) == 1:
            continue
        shown = ", ".join(f"{rid}={_MISSING if f[key] is None else f[key]}" for rid, f in facts)
        out.append(f"{key} differs: {shown}")
    return out
