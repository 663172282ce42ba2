"""What every compared run was run under: retrieval limit k, answerer and answer prompt, judge and judge
prompt, question set. One line when all runs agree, a per-run table under a loud warning when they do not.

Read from each run's ``checkpoint.json`` (run-level ``benchNb``), or from a run store's runs table (recorded at
export); a MemoryBench run records no k and no prompt hashes, which shows as "not recorded" and, beside a
bench_nb run, as a difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import polars as pl

from bench_nb.frames.store import StoredRuns
from bench_nb.runformat.load import load_runs
from bench_nb.runformat.spec import RunSpec, differences, read_spec
from bench_nb.tables.html import STYLE, Cell, Table, esc, labelled, labels_of, render
from bench_nb.text import short_hashes

NOT_RECORDED = "not recorded"
NO_PROMPT = "no prompt"  # a deterministic judge or answerer: nothing to hash
HASH_CHARS = 12


@dataclass(frozen=True)
class SettingsRow:
    """One run's like-for-like settings as the table shows them (``None``: not recorded; hashes shortened).

    ``recorded`` is the run's ``RunSpec`` (``runformat.spec.read_spec``), which the differences are computed on.
    """

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
    settings_fingerprint: str
    recorded: RunSpec = field(repr=False, compare=False)


def _short(value: str | None) -> str | None:
    return value[:HASH_CHARS] if value else value


def _short_judge_prompt(value: str | None) -> str | None:
    if value is None:
        return None
    return ", ".join(
        f"{part.split('=', 1)[0]}={_short(part.split('=', 1)[1])}" if "=" in part else str(_short(part))
        for part in value.split(", ")
    )


def _shown_settings(rs: RunSpec, *, imported: bool) -> SettingsRow:
    # bench_nb records prompts: a missing one is a promptless component (not so in another harness's file)
    recorded_any = bool(rs.prompt_hashes) and not imported
    return SettingsRow(
        run_id=rs.run_id,
        provider=rs.provider or "",
        k=rs.k,
        answerer=rs.answerer,
        answer_prompt=_short(rs.answer_prompt) if rs.answer_prompt else (NO_PROMPT if recorded_any else None),
        judge=rs.judge,
        judge_prompts=_short_judge_prompt(rs.judge_prompt)
        if rs.judge_prompt
        else (NO_PROMPT if recorded_any and rs.judge else None),
        other_judges=", ".join(j for j in rs.judge_names if j != rs.judge),
        question_set=_short(rs.question_set),
        questions=len(rs.question_ids or ()),
        custom_prompt=rs.custom_prompt,
        settings_fingerprint=rs.fingerprint,
        recorded=rs,
    )


def run_settings(runs: Any) -> list[SettingsRow]:
    """Each run's like-for-like settings (runs: anything ``load_runs`` takes, or a loaded ``RunSet``)."""
    if isinstance(runs, StoredRuns):  # settings recorded at export
        imported = runs.imported_run_ids
        return [_shown_settings(rs, imported=rs.run_id in imported) for rs in runs.recorded_settings()]
    return [
        _shown_settings(read_spec(r), imported=getattr(r, "imported", None) is not None)
        for r in load_runs(runs)
    ]


def _shown(value: object) -> str:
    return NOT_RECORDED if value is None else str(value)


def names_of(settings: list[SettingsRow]) -> dict[str, str]:
    """run_id -> how the settings name a run: its label in every table of the report (``labels_of``: the
    provider when no other run has it, else what tells its runs apart, e.g. sqlite at k=5 and at k=10)."""
    return labels_of(
        pl.DataFrame(
            {"run_id": [s.run_id for s in settings], "provider": [s.provider for s in settings]},
            schema={"run_id": pl.String, "provider": pl.String},
        )
    )


def settings_line(settings: list[SettingsRow]) -> str | None:
    """The runs' common settings in one line, or None when they differ in any of them.

    For example "All 4 runs (supermemory, mem0, zep, sqlite): k=10, answerer extractive, answer prompt
    1f0c2d3e4a5b, judge contains (no prompt), question set 9ab2c3d4e5f6 (50 questions); settings fingerprint
    3c4d5e6f7a8b". Runs that agree on all of these can still differ in what only the fingerprint covers (the
    other judges, the provider's settings): then each run's fingerprint is named.
    """
    if not settings or differences([s.recorded for s in settings]):
        return None
    s = settings[0]
    names = names_of(settings)
    providers = ", ".join(names[x.run_id] for x in settings)
    who = f"All {len(settings)} runs ({providers})" if len(settings) > 1 else f"The run ({providers})"
    line = (
        f"{who}: k={_shown(s.k)}, answerer {_shown(s.answerer)}, answer prompt {_shown(s.answer_prompt)}, "
        f"judge {_shown(s.judge)} ({_shown(s.judge_prompts)}), question set {_shown(s.question_set)} "
        f"({s.questions} questions)"
    )
    fingerprints = list(dict.fromkeys(x.settings_fingerprint for x in settings))
    if len(fingerprints) == 1:
        line += f"; settings fingerprint {fingerprints[0]}"
    else:
        line += "; settings fingerprints " + ", ".join(
            f"{names[x.run_id]}={x.settings_fingerprint}" for x in settings
        )
    return line + ("; graded with a provider's own prompt" if s.custom_prompt else "")


def _returned(runs: Any, settings: list[SettingsRow]) -> str:
    """How many results each run's search returned per question, for the runs where that is not k
    ("full-context 48–52, no-memory 0"); "" when every run returned k (or records no counts)."""
    from bench_nb.frames.questions import questions_frame

    q = questions_frame(runs)
    if "search_result_count" not in q.columns or q.is_empty():
        return ""
    ks = {s.run_id: s.k for s in settings}
    names = names_of(settings)
    counts = (
        q.filter(pl.col("search_result_count").is_not_null())
        .group_by("run_id", maintain_order=True)
        .agg(lo=pl.col("search_result_count").min(), hi=pl.col("search_result_count").max())
    )
    parts = []
    for rid, lo, hi in counts.iter_rows():
        if ks.get(rid) is not None and lo == hi == ks[rid]:
            continue
        parts.append(f"{names.get(rid, rid)} {lo}" if lo == hi else f"{names.get(rid, rid)} {lo}–{hi}")
    return ", ".join(parts)


def table_settings(runs: Any) -> Table:
    """Under which k, answer prompt, judge and question set each run ran.

    When every run agrees: one line (``settings_line``). When they differ: a loud warning per difference
    (``runformat.spec.differences``, the differ ``check_like_for_like`` uses) above a per-run
    table. Each run's settings fingerprint is shown either way. ``.warnings`` lists the differences;
    ``.data`` holds one row per run.
    """
    settings = run_settings(runs)
    # The shown fields only: asdict would deep-copy ``recorded`` too, every question id of every run.
    shown = [f.name for f in fields(SettingsRow) if f.name != "recorded"]
    data = pl.DataFrame([{k: getattr(s, k) for k in shown} for s in settings], infer_schema_length=None)
    diffs = differences([s.recorded for s in settings])
    names = names_of(settings)
    warnings = tuple(f"Not like for like: {labelled(short_hashes(d), names)}." for d in diffs)
    line = settings_line(settings)
    if not settings:
        return Table(data, f'{STYLE}<div class="bnb-note">No runs.</div>')
    returned = _returned(runs, settings)
    if line is not None and not warnings:
        if returned:
            line += f"; results returned per question (k is the limit asked for): {returned}"
        return Table(data, f'{STYLE}<div class="bnb-settings">{esc(line)}</div>')
    rows = [
        [
            Cell(names[s.run_id], title=s.run_id),
            Cell(_shown(s.k), "num"),
            f"{_shown(s.answerer)} ({_shown(s.answer_prompt)})",
            Cell(
                f"{_shown(s.judge)} ({_shown(s.judge_prompts)})",
                badges=(("provider's own prompt", "bnb-flag"),) if s.custom_prompt else (),
            ),
            s.other_judges or "—",
            f"{_shown(s.question_set)} ({s.questions})",
            s.settings_fingerprint,
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
            "settings fingerprint",
        ],
        rows,
        caption="Run settings: NOT like for like",
        notes=[
            *([f"Results returned per question (k is the limit asked for): {returned}."] if returned else []),
            f"Prompt and question-set hashes: the first {HASH_CHARS} hex digits of their sha256. The settings "
            "fingerprint hashes the benchmark file, question set, k, answerer and judges with their prompts, "
            "and the provider's settings (docs/run-format.md).",
        ],
        warnings=warnings,
    )
    return Table(data, html, warnings)
