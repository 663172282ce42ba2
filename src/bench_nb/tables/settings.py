"""What every compared run was run under: retrieval limit k, answerer and answer prompt, judge and judge
prompt, question set. One line when all runs agree, a per-run table under a loud warning when they do not.

Read from each run's ``checkpoint.json`` (run-level ``benchNb``); a MemoryBench run records no k and no
prompt hashes, which shows as "not recorded" and, beside a bench_nb run, as a difference.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import polars as pl

from bench_nb.runformat.load import load_runs
from bench_nb.runformat.settings import check_like_for_like, question_set_hash
from bench_nb.tables.html import STYLE, Cell, Table, esc, render

NOT_RECORDED = "not recorded"
NO_PROMPT = "no prompt"  # a deterministic judge or answerer: nothing to hash
HASH_CHARS = 12


@dataclass(frozen=True)
class RunSettings:
    """One run's like-for-like settings, as recorded (``None``: not recorded)."""

    run_id: str
    provider: str
    k: int | None
    answerer: str | None
    answer_prompt: str | None
    judge: str | None
    judge_prompts: str | None  # the primary judge's prompt hash(es), "rubric=hash" joined by ", "
    other_judges: str
    question_set: str | None
    questions: int
    custom_prompt: bool


def _short(value: str | None) -> str | None:
    return value[:HASH_CHARS] if value else value


def _judge_prompts(hashes: dict[str, Any], judge: str | None) -> str | None:
    if not judge:
        return None
    own = {
        k: str(v)
        for k, v in sorted(hashes.items())
        if k == f"judge:{judge}" or k.startswith(f"judge:{judge}:")
    }
    if not own:
        return NO_PROMPT if hashes else None  # bench_nb records prompts: this judge has none
    return ", ".join(
        f"{k.removeprefix(f'judge:{judge}:')}={_short(v)}" if k != f"judge:{judge}" else str(_short(v))
        for k, v in own.items()
    )


def _settings(run: Any) -> RunSettings:

    ck = run.checkpoint
    if ck is None:  # a shared report.json: MemoryBench's fields only
        rep = run.report or {}
        ids = [str(e.get("questionId")) for e in rep.get("evaluations", [])]
        return RunSettings(
            run_id=run.run_id,
            provider=str(rep.get("provider", "")),
            k=None,
            answerer=rep.get("answeringModel"),
            answer_prompt=None,
            judge=rep.get("judge"),
            judge_prompts=None,
            other_judges="",
            question_set=_short(question_set_hash(ids)),
            questions=len(ids),
            custom_prompt=False,
        )
    extra = ck.benchNb or {}
    hashes = dict(extra.get("promptHashes") or {})
    ids = list(ck.targetQuestionIds or ck.questions)
    judge = extra.get("primaryJudge") or ck.judge
    answer_prompt = hashes.get("answer")
    return RunSettings(
        run_id=run.run_id,
        provider=ck.provider,
        k=extra.get("k"),
        answerer=extra.get("answerer") or ck.answeringModel,
        answer_prompt=_short(answer_prompt) if answer_prompt else (NO_PROMPT if hashes else None),
        judge=judge,
        judge_prompts=_judge_prompts(hashes, judge),
        other_judges=", ".join(j for j in extra.get("judges") or [] if j != judge),
        question_set=_short(extra.get("questionSetHash") or question_set_hash(ids)),
        questions=len(ids),
        custom_prompt=bool(extra.get("customPrompt")),
    )


def run_settings(runs: Any) -> list[RunSettings]:
    """Each run's like-for-like settings (runs: anything ``load_runs`` takes, or a loaded ``RunSet``)."""

    return [_settings(run) for run in load_runs(runs)]


def _shown(value: object) -> str:
    return NOT_RECORDED if value is None else str(value)


# The settings a comparison needs equal, with how they read in the line and in warnings.
_COMPARED = (
    ("k", "retrieval limit k"),
    ("answerer", "answerer"),
    ("answer_prompt", "answer prompt"),
    ("judge", "judge"),
    ("judge_prompts", "judge prompt"),
    ("question_set", "question set"),
    ("custom_prompt", "custom prompt"),
)


def settings_differences(settings: list[RunSettings]) -> list[str]:
    """One sentence per setting the runs differ in, e.g. ``"judge prompt differs: a=1f2e…, b=9c8d…"``."""
    out = []
    for key, label in _COMPARED:
        if len({getattr(s, key) for s in settings}) > 1:
            values = ", ".join(f"{s.run_id}={_shown(getattr(s, key))}" for s in settings)
            out.append(f"{label} differs: {values}")
    return out


def settings_line(settings: list[RunSettings]) -> str | None:
    """The runs' common settings in one line, or None when they differ in any of them.

    For example "All 4 runs (supermemory, mem0, zep, sqlite): k=10, answerer extractive, answer prompt
    1f0c2d3e4a5b, judge contains (no prompt), question set 9ab2c3d4e5f6 (50 questions)".
    """
    if not settings or settings_differences(settings):
        return None
    s = settings[0]
    providers = ", ".join(x.provider or x.run_id for x in settings)
    who = f"All {len(settings)} runs ({providers})" if len(settings) > 1 else f"The run ({providers})"
    line = (
        f"{who}: k={_shown(s.k)}, answerer {_shown(s.answerer)}, answer prompt {_shown(s.answer_prompt)}, "
        f"judge {_shown(s.judge)} ({_shown(s.judge_prompts)}), question set {_shown(s.question_set)} "
        f"({s.questions} questions)"
    )
    return line + ("; graded with a provider's own prompt" if s.custom_prompt else "")


def _label(difference: str) -> str:
    """The setting a difference is about: "k differs: a=1, b=2" -> "k"; "custom prompt: a used ..." too."""
    return difference.split(":", 1)[0].removesuffix(" differs")


def table_settings(runs: Any) -> Table:
    """Under which k, answer prompt, judge and question set each run ran.

    When every run agrees: one line (``settings_line``). When they differ: a loud warning per difference
    (``bench_nb.runner.check_like_for_like``, plus any setting shown here that it does not compare) above
    a per-run table. ``.warnings`` lists the differences; ``.data`` holds one row per run.
    """

    loaded = load_runs(runs)
    settings = [_settings(run) for run in loaded]
    data = pl.DataFrame([asdict(s) for s in settings], infer_schema_length=None)
    diffs = check_like_for_like(loaded)
    labels = {_label(d) for d in diffs}
    diffs += [d for d in settings_differences(settings) if _label(d) not in labels]
    warnings = tuple(f"Not like for like: {d}." for d in diffs)
    line = settings_line(settings)
    if not settings:
        return Table(data, f'{STYLE}<div class="bnb-note">No runs.</div>')
    if line is not None and not warnings:
        return Table(data, f'{STYLE}<div class="bnb-settings">{esc(line)}</div>')
    rows = [
        [
            Cell(s.provider or s.run_id, title=s.run_id),
            Cell(_shown(s.k), "num"),
            f"{_shown(s.answerer)} ({_shown(s.answer_prompt)})",
            Cell(
                f"{_shown(s.judge)} ({_shown(s.judge_prompts)})",
                badges=(("provider's own prompt", "bnb-flag"),) if s.custom_prompt else (),
            ),
            s.other_judges or "—",
            f"{_shown(s.question_set)} ({s.questions})",
        ]
        for s in settings
    ]
    html = render(
        [
            "run",
            "k",
            "answerer (answer prompt)",
            "judge (judge prompt)",
            "other judges",
            "question set (questions)",
        ],
        rows,
        caption="Run settings: NOT like for like",
        notes=[f"Prompt and question-set hashes: the first {HASH_CHARS} hex digits of their sha256."],
        warnings=warnings,
    )
    return Table(data, html, warnings)
