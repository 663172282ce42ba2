"""What every importer shares: the record of an imported run, and turning matched rows into a checkpoint.

An imported run is held in memory as a checkpoint in the run format (``runformat.format``), so every frame,
metric and report reads it as it reads bench_nb's own runs. What the harness's file lacks stays null:
no phase durations, no token counts, no search results (``ImportInfo.not_recorded`` says which).
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bench_nb.benchmarks.locomo import LOCOMO_SAMPLE_IDS
from bench_nb.errors import Problem, RunFormatError
from bench_nb.runformat.format import (
    AnswerPhase,
    Checkpoint,
    EvaluatePhase,
    IndexingPhase,
    IngestPhase,
    Phases,
    Question,
    SearchPhase,
)
from bench_nb.runformat.harnesses.locomo_ids import (
    LocomoIndex,
    LocomoQuestion,
    canonical_id,
    normalise_text,
)
from bench_nb.taxonomy import LOCOMO_CATEGORIES

NOT_RECORDED = ("latency", "tokens", "retrieved context")
UNKNOWN = "unknown"


@dataclass
class ImportInfo:
    """What an imported run (another harness's result file) says about itself.

    Attributes:
        harness: the importer's name (``evermemos``, ``zep``, ``mem0``, ...).
        judge: the judge as the file names it, or ``unknown``.
        answer_prompt: the answer prompt as the file names it (None: not recorded).
        not_recorded: what the file lacks (``latency``, ``tokens``, ``retrieved context``): null in the frames.
        verdicts: question id -> the judge's verdicts in replicate order (None: a verdict that is missing).
        published: the file's own summary figures (accuracy, per-category means, ...), as written.
        checked_against: the LoCoMo dataset the question texts were checked against (None: not checked,
            which only happens for EverMemOS files read without the dataset: their ids are trusted).
        run_tokens: token totals the file states for the whole run only, in bench_nb's names
            (``answer_input_tokens``, ``answer_output_tokens``: the answerer's, summed over the run); they
            cannot be split per question, so they are never a per-question figure (``harness_frame`` has them).
    """

    harness: str
    judge: str
    answer_prompt: str | None = None
    not_recorded: tuple[str, ...] = NOT_RECORDED
    verdicts: dict[str, list[bool | None]] = field(default_factory=dict, repr=False)
    published: dict[str, Any] = field(default_factory=dict, repr=False)
    checked_against: str | None = None
    run_tokens: dict[str, int] = field(default_factory=dict)

    @property
    def replicates(self) -> int:
        """The most verdicts any question has (EverMemOS: 3; Zep, Mem0: 1)."""
        return max((len(v) for v in self.verdicts.values()), default=0)


@dataclass
class Row:
    """One question as a harness wrote it, before matching: ``where`` names it in messages."""

    where: str
    conversation: int | None
    question: str
    gold: str
    answer: str | None
    category: int | None
    verdicts: list[bool | None]
    index: int | None = None  # full-list index, when the harness gives it
    position: int | None = None  # position among the conversation's category 1-4 questions
    raw_id: str | None = None


def read_json(path: Path) -> Any:
    """The decoded JSON file (``.json.gz``: gzip-compressed, as AMB publishes its outputs)."""
    try:
        raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
        return json.loads(raw.decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as err:
        raise RunFormatError(path, f"not valid JSON: {err}") from None


def read_text(path: Path) -> str:
    """A text file decoded as UTF-8; ``.gz``: gzip-compressed (JSON-lines files are read either way).

    Raises:
        RunFormatError: the file cannot be read, decompressed or decoded.
    """
    try:
        raw = path.read_bytes()
        return (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as err:
        raise RunFormatError(path, f"cannot read it: {err}") from None


def json_lines(path: Path, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    """A JSON-lines file's values with their line numbers (blank lines passed over), in file order; a line
    that is not valid JSON is a problem naming the file and line (added as it is reached), and skipped.

    Raises:
        RunFormatError: the file cannot be read (``read_text``).
    """
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as err:
            where = f"line {n}"
            problems.append(
                Problem(str(path), f"{where}: not valid JSON ({err}); skipped", field=f"{where}: (the line)")
            )
            continue
        yield n, value


def first_json_line(path: Path) -> Any:
    """The value on a JSON-lines file's first non-blank line (plain or .gz), reading no further: how a file is
    told by its content (None: not readable as such)."""
    try:
        with (
            gzip.open(path, "rt", encoding="utf-8")
            if path.name.endswith(".gz")
            else path.open(encoding="utf-8")
        ) as fh:
            for line in fh:
                if line.strip():
                    return json.loads(line)
    except (OSError, EOFError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return None


def keyed_entry_lists(data: Any, key_ok: Callable[[str], object], field: str) -> bool:
    """Whether ``data`` is ``{key: [entry, ...]}`` as Zep and Mem0 write their files: every key passes
    ``key_ok``, and the first list's first entry is an object with ``field``."""
    if not isinstance(data, dict) or not data:
        return False
    first = next(iter(data.values()))
    return (
        all(isinstance(k, str) and key_ok(k) for k in data)
        and isinstance(first, list)
        and bool(first)
        and isinstance(first[0], dict)
        and field in first[0]
    )


def positional_checkpoint(
    path: Path,
    index: LocomoIndex | None,
    problems: list[Problem],
    data: Any,
    *,
    harness: str,
    what: str,
    conversation_of: Callable[[str], int | None],
    name: str,
    key_form: str,
    fields: tuple[str, str, str],
    generic: tuple[str, ...],
    zero_one: bool = False,
    order: Callable[[str], Any] | None = None,
) -> tuple[Checkpoint, ImportInfo]:
    """A file that lists each LoCoMo conversation's questions by position (Zep, Mem0: ``what``) as a checkpoint,
    each entry matched to its question by position and text; ``harness`` is also the provider.

    ``{key: [entry, ...]}``, read in the keys' order (sorted by ``order`` when given). A key that names no
    conversation (``conversation_of`` gives None) or holds no list, and an entry with no ``question`` text, is
    a problem naming it (``key_form``, ``name`` say what was expected) and skipped. ``fields``: the entry's
    verdict (``verdict_field``: true/false, or 0/1 with ``zero_one``), gold answer and answer. The run is named after the file unless its stem is one of ``generic``.

    Raises:
        RunFormatError: without LoCoMo's dataset (``index``), or when the file is not ``what``.
    """
    if index is None:  # positions cannot be matched
        raise RunFormatError(
            path,
            f"{what} name questions by position, which needs LoCoMo's dataset file: pass "
            "dataset='locomo10.json' to load_runs (or run `bench-nb datasets download locomo`)",
        )
    data = read_json(path) if data is None else data
    if not isinstance(data, dict):
        raise RunFormatError(path, f"not {what}: expected an object of conversations")
    score_field, gold_field, answer_field = fields
    info = ImportInfo(harness=harness, judge=UNKNOWN)
    rows: list[Row] = []
    at: dict[str, Any] = {"path": path, "problems": problems}
    for key in list(data) if order is None else sorted(data, key=order):
        items, conversation = data[key], conversation_of(str(key))
        if conversation is None or not isinstance(items, list):
            problems.append(
                Problem(str(path), f"not {key_form} with a list of {name}s; skipped", field=str(key))
            )
            continue
        for pos, item in enumerate(items):
            where = f"{key}[{pos}]"
            if not isinstance(item, dict) or not isinstance(item.get("question"), str):
                problems.append(
                    Problem(str(path), f"not a {name} object with a 'question' text; skipped", field=where)
                )
                continue
            at_score = f"{where}.{score_field}"
            ok = verdict_field(item.get(score_field), field=at_score, zero_one=zero_one, **at)
            rows.append(
                Row(
                    where=where,
                    conversation=conversation,
                    position=pos,
                    question=item["question"],
                    gold=text_field(item.get(gold_field), field=f"{where}.{gold_field}", numbers=True, **at),
                    answer=text_field(item[answer_field], field=f"{where}.{answer_field}", **at)
                    if answer_field in item
                    else None,
                    category=category_field(item.get("category"), field=f"{where}.category", **at),
                    verdicts=[ok],
                    raw_id=f"{harness}:{conversation}:{pos}",
                )
            )
    checkpoint = build_checkpoint(
        path,
        rows,
        run_id=run_name(path, generic),
        provider=harness,
        answering_model="",
        info=info,
        index=index,
        problems=problems,
        every_scored=True,
    )
    return checkpoint, info


def text(value: Any) -> str:
    """``value`` as text: a string as is, None as ``""``, anything else through ``str``."""
    return value if isinstance(value, str) else "" if value is None else str(value)


def text_field(
    value: Any,
    *,
    path: Path | str,
    field: str,
    problems: list[Problem],
    question_id: str | None = None,
    numbers: bool = False,
) -> str:
    """One question's text field read from a harness's file: a string as is, absent (None) as ``""``; a number
    as its digits when ``numbers`` (gold answers, which Zep writes as numbers); anything else read as its JSON,
    with a ``Problem`` naming the file, the field and the question (``measure``'s rule for text)."""
    if isinstance(value, str) or value is None:
        return text(value)
    if numbers and isinstance(value, int | float) and not isinstance(value, bool):
        return text(value)
    shown = _shown(value)
    problems.append(Problem(str(path), f"{field} {shown} is not text: read as {shown}", field, question_id))
    return json.dumps(value, ensure_ascii=False, default=str)


def verdict_field(
    value: Any,
    *,
    path: Path | str,
    field: str,
    problems: list[Problem],
    question_id: str | None = None,
    zero_one: bool = False,
) -> bool | None:
    """One question's verdict read from a harness's file: true/false (with ``zero_one``, the number 0 or 1);
    anything else is None (unscored) with a ``Problem`` naming the file, the field and the question."""
    if zero_one and isinstance(value, int | float) and not isinstance(value, bool) and value in (0, 1):
        return bool(value)
    if not zero_one and isinstance(value, bool):
        return value
    expected = "0 or 1" if zero_one else "true/false"
    problems.append(Problem(str(path), f"{field} {value!r} is not {expected}: unscored", field, question_id))
    return None


def repeated(
    qid: str, seen: Container[str], problems: list[Problem], path: Path | str, field: str, what: str
) -> bool:
    """Whether question ``qid`` was read already (it is in ``seen``): then a problem saying the first ``what`` is
    kept."""
    if qid in seen:
        problems.append(
            Problem(str(path), f"a second {what} for question {qid}; the first is kept", field, qid)
        )
    return qid in seen


def category_field(
    value: Any, *, path: Path | str, field: str, problems: list[Problem], question_id: str | None = None
) -> int | None:
    """A LoCoMo category number (an int, or its digits as text); anything else is None with a ``Problem``
    naming the file, field and question (the dataset's category is used for a question matched to it)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    problems.append(
        Problem(
            str(path),
            f"{field} {_shown(value)} is not a LoCoMo category number: read as not recorded",
            field=field,
            question_id=question_id,
        )
    )
    return None


#: The largest value a measure of one question can have (``measure``'s units): a search that took more than a
#: week, or a context of more than a billion tokens, is a broken file, not a measurement.
MEASURE_LIMITS = {"ms": 7 * 24 * 3600 * 1000.0, "s": 7 * 24 * 3600.0, "tokens": 1e9}


def measure(
    value: Any,
    unit: Literal["ms", "s", "tokens"],
    *,
    path: Path | str,
    field: str,
    problems: list[Problem],
    question_id: str | None = None,
) -> float | None:
    """One question's measure (a duration in ``ms`` or ``s``, a count of ``tokens``) read from a harness's file.

    Every importer reads its measures here, so a value that is not one is never coerced silently: absent
    (None) is "not recorded"; anything else that is not a finite number from 0 up to ``MEASURE_LIMITS[unit]``
    (a whole number, for tokens) is dropped to null with a ``Problem`` naming the file, the field and the
    question (JSON's ``Infinity``, ``1e308``, ``"fast"``, ``-1``, ``true``, ``12.5`` tokens). The rest of the row
    and the other rows still load.
    """
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and not (math.isfinite(value) and 0 <= value <= MEASURE_LIMITS[unit]):
        ok = False
    if ok and unit == "tokens" and value != int(value):
        ok = False
    if not ok:
        what = "a token count" if unit == "tokens" else f"a duration in {'seconds' if unit == 's' else 'ms'}"
        limit = f"{MEASURE_LIMITS[unit]:,.0f}"
        problems.append(
            Problem(
                str(path),
                f"{field} {_shown(value)} is not {what} (a finite number from 0 to {limit}): read as not recorded",
                field=field,
                question_id=question_id,
            )
        )
        return None
    return float(value)


def _shown(value: Any) -> str:
    """A bad value as a message shows it: JSON, cut to 60 characters."""
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def majority(verdicts: list[bool | None]) -> bool | None:
    """Correct when more than half of the recorded verdicts say so; None when none is recorded or on a tie."""
    known = [v for v in verdicts if v is not None]
    yes = sum(known)
    if not known or yes * 2 == len(known):
        return None
    return yes * 2 > len(known)


def unscored_mark(verdict: bool | None) -> dict[str, Any] | None:
    """A question's ``benchNb`` for its verdict: ``{"unscored": true}`` when there is none (the run format's
    mark of an unscored verdict), else nothing."""
    return {"unscored": True} if verdict is None else None


def imported_phases(
    verdict: bool | None,
    *,
    hypothesis: str | None,
    explanation: str | None = None,
    search_ms: float | None = None,
    context_tokens: float | None = None,
    prompt_tokens: float | None = None,
) -> Phases:
    """The phases of one imported question: every phase the harness ran is completed; what it did not
    record (a duration, token counts) stays null, never zero. The verdict scores 1.0 ``correct``, 0.0
    ``incorrect``, or, missing or unreadable (None), no score and ``unscored`` (never counted as incorrect)."""
    return Phases(
        ingest=IngestPhase(status="completed"),
        indexing=IndexingPhase(status="completed"),
        search=SearchPhase(status="completed", durationMs=search_ms),
        answer=AnswerPhase(
            status="completed",
            hypothesis=hypothesis,
            contextTokens=None if context_tokens is None else int(context_tokens),
            promptTokens=None if prompt_tokens is None else int(prompt_tokens),
        ),
        evaluate=EvaluatePhase(
            status="completed",
            score=None if verdict is None else float(verdict),
            label="unscored" if verdict is None else "correct" if verdict else "incorrect",
            explanation=explanation,
        ),
    )


def match(
    row: Row, index: LocomoIndex | None, path: Path, problems: list[Problem]
) -> tuple[str, LocomoQuestion | None]:
    """The canonical id of ``row`` (and its dataset question, when there is a dataset), or its raw id with a
    problem when it cannot be matched.

    A row is placed by its full-list index (EverMemOS) or its position among the conversation's scored
    questions (Zep, Mem0); its text must equal the dataset's there, else it is looked up by text within its
    conversation. Without a dataset (EverMemOS only) the index is trusted and the text is not checked.
    """
    fallback = row.raw_id or row.where
    if row.conversation is None:  # the importer has said why
        return fallback, None
    if index is None:
        if row.index is None:  # the callers that give positions always have an index
            return fallback, None
        if row.conversation >= len(LOCOMO_SAMPLE_IDS):
            problems.append(
                Problem(str(path), f"conversation {row.conversation} is not in LoCoMo (0-9)", field=row.where)
            )
            return fallback, None
        return canonical_id(row.conversation, row.index), None
    found: LocomoQuestion | None = None
    if row.index is not None:
        found = index.by_position.get((row.conversation, row.index))
    elif row.position is not None:
        scored = index.scored.get(row.conversation, [])
        found = scored[row.position] if row.position < len(scored) else None
    if found is None or normalise_text(found.question) != normalise_text(row.question):
        found = index.find_by_text(row.conversation, row.question)
    if found is None:
        problems.append(
            Problem(
                str(path),
                f"question {row.question!r} matches no LoCoMo question of conversation {row.conversation} "
                f"in {index.source} (by position or text); kept under id {fallback!r}, paired with no other run",
                field=row.where,
                question_id=fallback,
            )
        )
        return fallback, None
    return found.question_id, found


def build_checkpoint(
    path: Path,
    rows: list[Row],
    *,
    run_id: str,
    provider: str,
    answering_model: str,
    info: ImportInfo,
    index: LocomoIndex | None,
    problems: list[Problem],
    every_scored: bool = False,
) -> Checkpoint:
    """The run format's checkpoint of matched rows; verdicts go to ``info.verdicts`` (replicate order).

    ``every_scored``: the harness lists every scored LoCoMo question (categories 1-4; Zep's and Mem0's files):
    those of the dataset with no row are a problem per conversation naming them (a row deleted or lost), so a
    run with fewer questions than the dataset's never reads as a whole one."""
    questions: dict[str, Question] = {}
    info.checked_against = index.source if index is not None else None
    for row in rows:
        qid, found = match(row, index, path, problems)
        matched = qid != (row.raw_id or row.where)
        if repeated(qid, questions, problems, path, row.where, "row"):
            continue
        category = found.category if found is not None else row.category
        verdict = majority(row.verdicts)
        questions[qid] = Question(
            questionId=qid,
            containerTag=qid.rsplit("-q", 1)[0] if matched else "",
            question=row.question,
            groundTruth=row.gold,
            questionType=LOCOMO_CATEGORIES.get(category, "") if category is not None else "",
            phases=imported_phases(verdict, hypothesis=row.answer),
            benchNb=unscored_mark(verdict),
        )
        info.verdicts[qid] = list(row.verdicts)
    if every_scored and index is not None:
        _missing_rows(path, index, set(questions), problems)
    return completed(info, questions, run_id, provider, "locomo", answering_model)


def completed(
    info: ImportInfo,
    questions: dict[str, Question],
    run_id: str,
    provider: str,
    benchmark: str,
    answering_model: str = "",
    more_settings: dict[str, Any] | None = None,
) -> Checkpoint:
    """The completed checkpoint of an imported run's ``questions``; an unknown judge is named with the harness."""
    return Checkpoint(
        runId=run_id,
        status="completed",
        provider=provider,
        benchmark=benchmark,
        judge=info.judge if info.judge != UNKNOWN else f"{UNKNOWN} ({info.harness})",
        answeringModel=answering_model,
        targetQuestionIds=list(questions),
        questions=questions,
        benchNb={**settings(info, answering_model), **(more_settings or {})},
    )


def _missing_rows(path: Path, index: LocomoIndex, found: set[str], problems: list[Problem]) -> None:
    """One problem when some scored question of ``index`` is not in ``found``: how many, of which
    conversations, the first ids."""
    scored = [q for _, qs in sorted(index.scored.items()) for q in qs]
    missing = [q for q in scored if q.question_id not in found]
    if not missing:
        return
    per = Counter(q.conversation for q in missing)  # in order of first appearance
    where = ", ".join(f"{n} of conversation {c}" for c, n in per.items())
    named = ", ".join(q.question_id for q in missing[:5]) + (" ..." if len(missing) > 5 else "")
    problems.append(
        Problem(
            str(path),
            f"no row for {len(missing)} of the {len(scored)} scored questions of {index.source} ({where}: "
            f"{named}): the run has {len(scored) - len(missing)} of them",
            question_id=missing[0].question_id,
        )
    )


def settings(info: ImportInfo, answering_model: str) -> dict[str, Any]:
    """The run-level ``benchNb`` settings an imported run can state, in the keys bench_nb's runs use, so the
    like-for-like checks and the settings table read them as they read bench_nb's: the answerer, and the
    answer prompt by the harness's own name for it (``promptHashes.answer``: ``memos``, ``cot``). What the file
    does not say is left out (``not recorded``). An unknown judge is named ``unknown (<harness>)`` in the
    checkpoint, so two harnesses' unknown judges are never taken for the same judge."""
    out: dict[str, Any] = {"harness": info.harness}
    if answering_model:
        out["answerer"] = answering_model
    if info.answer_prompt:
        out["promptHashes"] = {"answer": info.answer_prompt.removeprefix("answer_prompt_")}
    return out


def run_name(path: Path, generic: tuple[str, ...]) -> str:
    """A run id from a file: its stem, or its folder's name when the stem says nothing (``results``)."""
    return path.parent.name if path.stem in generic and path.parent.name else path.stem
