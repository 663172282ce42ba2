"""Finding and reading run directories: ours and MemoryBench's share one format.

``load_runs`` accepts run directories, globs, a folder of runs (``data/runs``), a MemoryBench compare
manifest, or a run that only has its ``report.json`` (how people share runs). In strict mode the first
problem raises a ``RunFormatError`` naming the file and field; in lenient mode (the default) every
question that can be read is loaded and the rest is listed in ``RunSet.problems``.

The frames need only a fifth of a checkpoint: ``load_run_views`` decodes runs into
``runformat.view.CheckpointView``, which is what ``questions_df`` uses to load a 100,000-question run in a
fraction of a plain ``json.load``. A lenient ``load_runs`` decodes the same view and nothing more: each
``Run.checkpoint`` (the complete ``runformat.format.Checkpoint``, with every session, timestamp and search
result) is decoded from the file the first time it is read, so a ``RunSet`` kept for its frames does not hold
the rest (see ``Run``). ``read_run`` and a strict ``load_runs`` decode every checkpoint completely at once.

``results/<questionId>.json`` files are never read: the checkpoint holds the same search results. A
completed search whose results file is missing is listed as a problem (one ``os.scandir`` per run); it is
an error in strict mode only when the checkpoint has no copy of those results either.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from bench_nb.errors import DatasetError, Problem, RunFormatError, warn_problems
from bench_nb.gc_pause import gc_paused
from bench_nb.runformat.format import (
    DECODE_COUNTS,
    PHASES,
    Checkpoint,
    CheckpointShell,
    CompareManifest,
    Question,
)
from bench_nb.runformat.harnesses import (
    HarnessFormat,
    ImportInfo,
    LocomoIndex,
    import_runs,
    list_importers,
    load_locomo_index,
    locate_importer,
    needs_locomo,
)
from bench_nb.runformat.journal import CHECKPOINT, apply_journal
from bench_nb.runformat.lock import RUN_FILES, is_run_dir, nearest_run
from bench_nb.runformat.spec import RunSpec, differences, read_spec
from bench_nb.runformat.view import CheckpointView, QuestionView

if TYPE_CHECKING:
    import polars as pl

RunSource = str | os.PathLike[str]
Sources = RunSource | Iterable[RunSource]
RunFormatName = Literal[HarnessFormat, "memorybench", "bench_nb"]
"""The formats ``load_runs`` reads: the built-in importers' (``harnesses.HarnessFormat``; ``register_importer`` adds
more), MemoryBench's and bench_nb's own."""
OWN_FORMATS = ("memorybench", "bench_nb")


class Run:
    """One loaded run: its checkpoint (when it has one), its report.json (when present) and problems.

    A run of a lenient ``load_runs`` has decoded only what the frames read (``view``). Its ``checkpoint``, the
    complete ``runformat.format.Checkpoint``, is decoded from checkpoint.json the first time it is read (and
    kept): the frames of a 100,000-question run then cost a fraction of the memory (BENCHMARKS.md). That
    decode is lenient as the load was: a question damaged in a field the frames do not read (its sessions,
    timestamps, search results...) is then left out of ``checkpoint`` with a ``Problem`` added to
    ``problems`` (and a ``RunFormatWarning``); it stays in the frames. A checkpoint.json rewritten since the
    load (a resumed run, a rejudge) is refused with a ``RunFormatError``: load the runs again.
    """

    def __init__(
        self,
        path: Path,
        checkpoint: Checkpoint | None,
        report: dict[str, Any] | None = None,
        problems: list[Problem] | None = None,
        imported: ImportInfo | None = None,
    ) -> None:
        self.path = path
        self.report = report
        self.problems: list[Problem] = [] if problems is None else problems
        self.imported = imported
        self._checkpoint = checkpoint
        self._view: CheckpointView | None = None  # a deferred run's view, until and after its full decode
        self._stamp: _Stamp | None = None  # the checkpoint file the view was decoded from

    @property
    def checkpoint(self) -> Checkpoint | None:
        """The complete checkpoint (``None``: a run with only its report.json); a deferred run's is decoded
        now, once."""
        if self._checkpoint is None and self._stamp is not None:
            self._checkpoint = self._decode_deferred(self._stamp)
        return self._checkpoint

    @property
    def view(self) -> Checkpoint | CheckpointView | None:
        """The fields the frames read: the view a lenient ``load_runs`` decoded, else the checkpoint."""
        return self._view if self._view is not None else self._checkpoint

    @property
    def run_id(self) -> str:
        """The checkpoint's ``runId``, else report.json's, else the directory's name."""
        if self.view is not None:
            return self.view.runId
        if self.report is not None:
            return str(self.report.get("runId", self.path.name))
        return self.path.name

    @property
    def source(self) -> Literal["checkpoint", "report"]:
        """What the run was read from."""
        return "checkpoint" if self.view is not None else "report"

    @property
    def harness(self) -> str:
        """Who wrote the run: ``bench_nb``, ``memorybench``, or the harness an imported file came from."""
        if self.imported is not None:
            return self.imported.harness
        return "bench_nb" if self.is_bench_nb else "memorybench"

    @property
    def is_bench_nb(self) -> bool:
        """Written by bench_nb's runner (its labels are true labels), not by MemoryBench or another harness."""
        return self.imported is None and self.view is not None and self.view.benchNb is not None

    @property
    def has_true_labels(self) -> bool:
        """Its question types are true names (bench_nb's runs, imported files), not MemoryBench's labels."""
        return self.is_bench_nb or self.imported is not None

    def _decode_deferred(self, stamp: _Stamp) -> Checkpoint:
        try:
            data, now = _read_bytes(stamp.path)
        except OSError as err:
            raise RunFormatError(
                stamp.path,
                f"cannot be read any more ({err.strerror or err}): a loaded run's complete checkpoint is decoded "
                "from it when first read (its frames were built when it loaded)",
            ) from None
        if now != stamp:
            raise RunFormatError(
                stamp.path,
                "changed since the run was loaded (rewritten by a resumed run, a rejudge or a reanswer?): its "
                "frames were built from the earlier file; load the runs again to read it",
            )
        checkpoint, problems = _decode_checkpoint(stamp.path, data, Checkpoint, Question, strict=False)
        known = {(p.path, p.field, p.question_id, p.message) for p in self.problems}
        new = [p for p in problems if (p.path, p.field, p.question_id, p.message) not in known]
        if new:
            warn_problems(new)
            self.problems.extend(new)
        return checkpoint

    def __repr__(self) -> str:  # short: the checkpoint holds every answer and retrieved item
        n = len(self.view.questions) if self.view is not None else 0
        return (
            f"Run({_run_line(self)}, {n} questions, {len(self.problems)} problems, path={str(self.path)!r})"
        )


@dataclass(frozen=True)
class _Stamp:
    """Which checkpoint.json was read: its path, and its inode, size and modification time then."""

    path: Path
    inode: int
    size: int
    mtime_ns: int


def _read_bytes(path: Path) -> tuple[bytes, _Stamp]:
    """A file's bytes and its stamp, taken from the opened file (a file replaced meanwhile is not mixed up)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        return f.read(), _Stamp(path, st.st_ino, st.st_size, st.st_mtime_ns)


class RunSet(list[Run]):
    """The runs that loaded, plus every problem met on the way (``.problems``)."""

    def __init__(self, runs: Iterable[Run] = (), problems: Iterable[Problem] = ()) -> None:
        super().__init__(runs)
        check_run_ids(self)
        self.problems: list[Problem] = list(problems)
        # (key, frame) of the last questions frame built from these runs: see frames.questions.questions_frame.
        self.questions_frame_cache: tuple[object, pl.DataFrame] | None = None
        # The same for the judgments frame (frames.judgments.judgments_frame), keyed by its files' stamps too.
        self.judgments_frame_cache: tuple[object, pl.DataFrame] | None = None

    @property
    def all_problems(self) -> list[Problem]:
        """The problems of the set and of each of its runs, in one list."""
        return self.problems + [p for run in self for p in run.problems]

    def __repr__(self) -> str:
        shown = ", ".join(_run_line(r) for r in self[:10]) + (
            f", … {len(self) - 10} more" if len(self) > 10 else ""
        )
        problems = len(self.all_problems)
        return f"RunSet({len(self)} run{'s' if len(self) != 1 else ''}: {shown or 'none'}; {problems} problem{'s' if problems != 1 else ''})"

    def _repr_html_(self) -> str:
        from bench_nb.text import Cell, render

        rows = [
            [
                Cell(r.run_id, title=str(r.path)),
                _field(r, "provider"),
                _field(r, "benchmark"),
                r.harness,
                Cell("n/a" if r.view is None else str(len(r.view.questions)), "num"),
                (_field(r, "createdAt") or "")[:19].replace("T", " "),
                Cell(str(len(r.problems)), "num"),
            ]
            for r in self
        ]
        problems = [str(p) for p in self.all_problems]
        notes = (
            [f"{len(problems)} problem(s): " + "; ".join(problems[:5]) + (" …" if len(problems) > 5 else "")]
            if problems
            else []
        )
        return render(
            ["run", "provider", "benchmark", "written by", "questions", "created (UTC)", "problems"],
            rows,
            caption=f"RunSet: {len(self)} run{'s' if len(self) != 1 else ''}",
            notes=[
                *notes,
                "Each run: runs[i] (its checkpoint: runs[i].checkpoint); problems: runs.all_problems.",
            ],
        )


def _field(run: Run, name: str) -> str:
    if run.view is not None:
        return str(getattr(run.view, name, "") or "")
    return str((run.report or {}).get(name, "") or "")


def _run_line(run: Run) -> str:
    provider = _field(run, "provider")
    return f"{run.run_id} ({provider})" if provider else run.run_id


def check_run_ids(runs: Iterable[Run]) -> None:
    """Refuse runs of one set that share a run id (``RunFormatError`` naming both paths).

    Frames, MemScore, summaries and reports tell runs apart by their id: two runs with one id (two
    ``--runs-dir`` holding the same run id, a copied run) would be merged into one row.
    """
    seen: dict[str, Path] = {}
    for run in runs:
        other = seen.setdefault(run.run_id, run.path)
        if other != run.path:
            raise RunFormatError(
                run.path,
                f"run id {run.run_id!r} is also the id of {other}: runs in one set are told apart by their "
                "id, so these two would be merged into one; load them in separate sets (or give one of them "
                "another runId)",
                "runId",
            )


def _decode_error(err: msgspec.DecodeError) -> tuple[str, str | None]:
    """(message, field) of a msgspec decode error. msgspec gives the place only inside its message
    (``Expected `int`, got `str` - at `$.questions[...]```): the one place its text is taken apart."""
    message, sep, where = str(err).rpartition(" - at `")
    return (message, where.rstrip("`")) if sep else (str(err), None)


def _checkpoint_error(err: msgspec.DecodeError, data: bytes) -> tuple[str, str | None]:
    """(message, field) of a checkpoint.json that does not decode at the run level, saying what to do: a file
    that is not JSON was cut short or damaged; JSON of another shape is not a run's checkpoint; valid JSON with
    half a surrogate pair in a string is neither (``_lone_surrogate``)."""
    message, field = _decode_error(err)
    if not isinstance(err, msgspec.ValidationError):
        if (lone := _lone_surrogate(data)) is not None:
            at, escape = lone
            return (
                f"a string holding half of a UTF-16 surrogate pair ({escape}), which bench-nb cannot read "
                f"({message}): valid JSON, as JavaScript writes a string cut inside an emoji; replace that "
                "escape in the file (by \\ufffd, say) to read the run",
                at,
            )
        return (
            f"not valid JSON ({message}): the file is cut short or damaged (an interrupted copy?); copy the run "
            "again from where it came from, or run it again",
            field,
        )
    repair = " (or repair that field)" if field else ""
    return (
        f"not a run's checkpoint ({message}): give a run directory, one holding the checkpoint.json bench-nb "
        f"run or MemoryBench wrote (docs/run-format.md){repair}",
        field,
    )


def _lone_surrogate(data: bytes) -> tuple[str, str] | None:
    r"""The field (``questions.q1.phases.answer.hypothesis``) and escape (``\ud83d``) of the first string in
    ``data`` holding half of a surrogate pair, when ``data`` is valid JSON; else None. msgspec refuses such a
    string (it says the input was truncated, or malformed), which ``JSON.stringify`` writes and ``JSON.parse``
    reads; only a file that failed to decode is searched (Python's json reads them)."""

    def refuse(constant: str) -> None:  # NaN and Infinity: not JSON
        raise ValueError(constant)

    try:
        value = json.loads(data, parse_constant=refuse)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[str, Any]] = [("", value)]  # (field, value): a key's own field is its value's
    while stack:
        at, v = stack.pop()
        if isinstance(v, str):
            if half := _HALF_PAIR.search(v):
                return at, f"\\u{ord(half[0]):04x}"
        elif isinstance(v, dict):
            for key, x in reversed(v.items()):  # popped in the file's order, each key before its value
                name = key.encode("utf-8", "backslashreplace").decode("utf-8")  # printable: \udc00
                here = f"{at}.{name}" if at else name
                stack += [(here, x), (here, key)]
        elif isinstance(v, list):
            stack += [(f"{at}[{i}]", x) for i, x in reversed(list(enumerate(v)))]
    return None


# Half of a surrogate pair: Python joins a pair's escapes into one character, so any surrogate left is alone.
_HALF_PAIR = re.compile(r"[\ud800-\udfff]")


def read_checkpoint(path: Path, *, strict: bool = False) -> tuple[Checkpoint, list[Problem]]:
    """Decode one checkpoint.json. Lenient mode drops the questions that do not decode."""
    return _decode_checkpoint(path, path.read_bytes(), Checkpoint, Question, strict=strict)


def read_resumed(run_dir: Path) -> tuple[Checkpoint, RunSpec] | None:
    """What a resumed run starts from, read once (under the run's lock): its checkpoint, strictly, with the journal
    replayed, and its settings (``runformat.spec.read_spec``); ``None`` before its checkpoint is written."""
    path = run_dir / CHECKPOINT
    if not path.is_file():
        return None
    checkpoint = apply_journal(read_checkpoint(path, strict=True)[0], run_dir)
    return checkpoint, read_spec(Run(run_dir, checkpoint))


_C = TypeVar("_C", Checkpoint, CheckpointView)
SKIPPED = "; question skipped"  # the end of a problem's message for a question that does not decode
#: What a JSON value nested deeper than the decoder goes (msgspec raises RecursionError) is, as a problem.
TOO_DEEP = "JSON nested too deeply to read (a value inside hundreds of arrays or objects); the run is skipped"


def _decode_checkpoint(
    path: Path, data: bytes, ck_type: type[_C], q_type: type[Question] | type[QuestionView], *, strict: bool
) -> tuple[_C, list[Problem]]:
    DECODE_COUNTS.reset()
    try:
        checkpoint, problems = _decode_questions(data, path, ck_type, q_type, strict=strict)
    except RecursionError:
        raise RunFormatError(path, TOO_DEEP) from None
    found = _integrity_problems(path, data, checkpoint, DECODE_COUNTS.questions, DECODE_COUNTS.absent_phases)
    if strict and found:
        raise RunFormatError.of(found[0])
    return checkpoint, problems + found


def _decode_questions(
    data: bytes, path: Path, ck_type: type[_C], q_type: type[Question] | type[QuestionView], *, strict: bool
) -> tuple[_C, list[Problem]]:
    try:
        with gc_paused():
            return msgspec.json.decode(data, type=ck_type), []
    except msgspec.DecodeError as err:
        first_error = err
    # Decode the run level, then each question on its own: lenient mode keeps the good questions, and
    # strict mode's error names the question at fault (msgspec's path shows a dict key as `[...]`).
    try:
        with gc_paused():
            shell = msgspec.json.decode(data, type=CheckpointShell)
    except msgspec.DecodeError:
        raise RunFormatError(path, *_checkpoint_error(first_error, data)) from None
    problems: list[Problem] = []
    questions: dict[str, Any] = {}
    decoder = msgspec.json.Decoder(q_type)
    for qid, raw in shell.questions.items():
        try:
            questions[qid] = decoder.decode(raw)
        except msgspec.DecodeError as err:
            message, at = _decode_error(err)
            where = f"questions.{qid}" + (at or "$")[1:]
            if strict:
                raise RunFormatError(path, f"question {qid}: {message}", where, qid) from None
            problems.append(Problem(str(path), f"{message}{SKIPPED}", where, question_id=qid))
    if not problems:  # the error is at the run level, where the shell is laxer (e.g. an unknown status)
        raise RunFormatError(path, *_checkpoint_error(first_error, data))
    fields = {f: getattr(shell, f) for f in ck_type.__struct_fields__ if f != "questions"}
    return ck_type(**fields, questions=questions), problems


# A question's entry in checkpoint.json: its key, then an object whose first field is questionId (MemoryBench
# and bench_nb both write it first).
_QUESTION_ENTRY = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*:\s*\{\s*"questionId"')


class _PhaseNames(msgspec.Struct):
    phases: dict[str, msgspec.Raw] = {}


def _integrity_problems(
    path: Path, data: bytes, ck: Checkpoint | CheckpointView, built: int, absent_phases: int
) -> list[Problem]:
    """Damage that decodes without an error: question ids listed or stored twice, and missing phases.

    ``built`` (question records decoded) and ``absent_phases`` (phase records made up) come from the decode
    (``memorybench.format.DECODE_COUNTS``): a second look at the file's bytes is only taken when they show
    something is wrong, so a sound file costs nothing more.
    """
    n = len(ck.questions)
    problems = [
        Problem(str(path), f"question id {qid} is listed {count} times", "targetQuestionIds", qid)
        for qid, count in Counter(ck.targetQuestionIds or ()).items()
        if count > 1
    ]
    if built > n:  # more question records than keys: a key written twice
        entries = Counter(m.group(1).decode("utf-8", "replace") for m in _QUESTION_ENTRY.finditer(data))
        problems += [
            Problem(
                str(path),
                f"question id {key} has more than one entry ({count} entries; only the last is read)",
                f"questions.{key}",
                key,
            )
            for key, count in entries.items()
            if count > 1
        ]
    if len({q.questionId or key for key, q in ck.questions.items()}) < n:  # some entries share a questionId
        by_record: dict[str, list[str]] = {}
        for key, q in ck.questions.items():
            by_record.setdefault(q.questionId or key, []).append(key)
        for qid, keys in by_record.items():
            if len(keys) > 1:
                problems.append(
                    Problem(
                        str(path),
                        f"questionId {qid} is used by more than one entry: " + ", ".join(keys),
                        f"questions.{keys[1]}.questionId",
                        question_id=qid,
                    )
                )
    if absent_phases:
        decoded = msgspec.json.decode(data, type=_QuestionPhaseNames)
        for qid, names in decoded.questions.items():
            phases = [p for p in PHASES if p not in names.phases]
            if phases:
                problems.append(
                    Problem(
                        str(path),
                        f"question {qid} lacks phase records: no " + ", ".join(phases) + " (read as pending)",
                        f"questions.{qid}.phases.{phases[0]}",
                        question_id=qid,
                    )
                )
    return problems


class _QuestionPhaseNames(msgspec.Struct):
    questions: dict[str, _PhaseNames] = {}


def _result_file_problems(run_dir: Path, ck: Checkpoint | CheckpointView, *, strict: bool) -> list[Problem]:
    """Completed searches whose ``results/`` file is missing (one directory listing, no file read)."""
    try:
        present = set(os.listdir(run_dir / "results"))
    except (FileNotFoundError, NotADirectoryError):
        present = set()
    kept: list[str] = []  # the checkpoint still has the results
    lost: list[str] = []
    for qid, q in ck.questions.items():
        search = q.phases.search
        if search.status != "completed" or not search.resultFile:
            continue
        if search.resultFile.replace("\\", "/").rsplit("/", 1)[-1] not in present:
            (lost if search.results is None else kept).append(qid)
    problems = []
    where = str(run_dir / "results")
    if lost:
        problems.append(
            Problem(
                where,
                f"{len(lost)} completed search(es) have no results file and no results in the checkpoint, "
                f"e.g. question {lost[0]}: their search results are lost",
                field="phases.search.resultFile",
                question_id=lost[0],
            )
        )
        if strict:
            raise RunFormatError.of(problems[0])
    if kept:
        problems.append(
            Problem(
                where,
                f"{len(kept)} completed search(es) have no results file, e.g. question {kept[0]} "
                "(the checkpoint's copy of their results is used)",
                field="phases.search.resultFile",
                question_id=kept[0],
            )
        )
    return problems


def read_run(path: RunSource, *, strict: bool = False) -> Run:
    """Read one run directory (checkpoint.json and/or report.json), decoding the checkpoint completely."""
    run_dir = Path(path)
    checkpoint, report, problems, _ = _read(run_dir, Checkpoint, Question, strict=strict)
    return Run(run_dir, checkpoint, report, problems)


def read_run_deferred(path: RunSource, *, strict: bool = False, sound: bool = False) -> Run:
    """``read_run`` for a lenient ``load_runs`` and the frames: the checkpoint decoded as the frames read it
    (``strict`` checks only those fields), the rest when ``Run.checkpoint`` is first read (``Run``). With a
    journal to replay (a bench_nb run that is running or was killed), it is ``read_run``; with ``sound``,
    ``read_run`` too when the whole checkpoint decodes completely (one decode, not two, for a caller that
    reads the checkpoint anyway)."""
    run_dir = Path(path)
    if (run_dir / "journal.jsonl").is_file():
        return read_run(run_dir, strict=strict)
    if sound:
        try:
            run = read_run(run_dir, strict=strict)
        except RunFormatError:  # perhaps in a field the frames do not read (``limit``): read as by default
            pass
        else:
            if not any(p.message.endswith(SKIPPED) for p in run.problems):
                return run
    view, report, problems, stamp = _read(run_dir, CheckpointView, QuestionView, strict=strict)
    run = Run(run_dir, None, report, problems)
    if view is not None and stamp is not None:  # its complete checkpoint decoded from that file on first use
        run._view, run._stamp = view, stamp
    return run


# A checkpoint laid out as JSON.stringify(checkpoint, null, 2) writes it (MemoryBench, and bench_nb's
# runformat.jsjson): the questions object opens on a line of its own at the top level, and each question entry
# ends on a line "    }" (JSON strings hold no raw newline, and an entry's own lines are indented deeper).
_QUESTIONS_OPEN = b'\n  "questions": {\n'
_ENTRY_THEN_NEXT = b"\n    },\n"  # an entry's last line, another entry after it
_LAST_ENTRY = b"\n    }\n  }"  # the last entry's last line, then the end of the questions
_BATCH = 1 << 23  # bytes read at a time


def _decode_views_in_batches(path: Path, ck_type: type[_C]) -> tuple[_C, _Stamp] | None:
    """A checkpoint's views decoded a batch of question entries at a time, read into one reused buffer, so that
    its bytes (0.85 GB at 100,000 questions) are never all in memory: the frames' peak is then the views.

    ``None`` (decode the whole file instead: it names what is wrong) for a file not laid out as
    ``JSON.stringify(checkpoint, null, 2)`` writes it, one that does not decode, or one whose decode counted
    damage (a key written twice, absent phases). Sound files give what decoding the whole file gives.
    """
    decoder = msgspec.json.Decoder(dict[str, QuestionView])
    questions: dict[str, QuestionView] = {}
    DECODE_COUNTS.reset()
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        stamp = _Stamp(path, st.st_ino, st.st_size, st.st_mtime_ns)
        buf = bytearray(2 * _BATCH)
        hi = 0  # buf[:hi]: read, not decoded yet
        while (at := buf.find(_QUESTIONS_OPEN, 0, hi)) < 0:
            more = _read_into(f, buf, hi) if hi < 1 << 26 else None  # the run level is smaller than that
            if more is None:  # not this layout
                return None
            hi = more
        head = bytes(buf[:at])
        start = at + len(_QUESTIONS_OPEN) - 2  # buf[start]: the questions' "{"
        try:
            with gc_paused():
                while True:
                    more = _read_into(f, buf, hi)
                    if more is None:  # buf[start:hi]: the last entry, the end of the questions, the rest
                        end = buf.find(_LAST_ENTRY, start, hi)
                        break
                    hi = more
                    last = buf.rfind(_ENTRY_THEN_NEXT, start, hi)
                    if last < 0:
                        continue
                    cut = last + len(_ENTRY_THEN_NEXT) - 2  # the comma after the last complete entry
                    buf[start], buf[cut] = ord("{"), ord("}")  # the entries up to it, as one object
                    counted = DECODE_COUNTS.questions, DECODE_COUNTS.absent_phases
                    try:
                        with memoryview(buf) as view:
                            batch = decoder.decode(view[start : cut + 1])
                    except msgspec.DecodeError:  # the questions end in this batch (that comma was after
                        buf[cut] = ord(",")  # them), or it is damaged: the whole file's decode says where
                        DECODE_COUNTS.questions, DECODE_COUNTS.absent_phases = counted
                        end = buf.find(_LAST_ENTRY, start, cut)
                        break
                    questions.update(batch)
                    buf[: hi - cut] = buf[cut:hi]  # the rest (part of an entry) to the front
                    start, hi = 0, hi - cut
                if end < 0:
                    return None
                end += len(_LAST_ENTRY)
                buf[start] = ord("{")
                with memoryview(buf) as view:
                    questions.update(decoder.decode(view[start:end]))
                tail = bytes(buf[end:hi]) + f.read()
                shell = msgspec.json.decode(head + b'\n  "questions": {}' + tail, type=ck_type)
        except (msgspec.DecodeError, RecursionError):
            return None
    if DECODE_COUNTS.questions > len(questions) or DECODE_COUNTS.absent_phases:
        return None
    return msgspec.structs.replace(shell, questions=questions), stamp


def _read_into(f: Any, buf: bytearray, hi: int) -> int | None:
    """Read up to ``_BATCH`` more bytes into ``buf`` after ``hi`` (growing it only when full): the new end,
    ``None`` at the end of the file."""
    if len(buf) < hi + _BATCH:
        buf.extend(bytes(hi + _BATCH - len(buf)))
    with memoryview(buf) as view:
        n = f.readinto(view[hi : hi + _BATCH])
    return hi + n if n else None


def _read(
    run_dir: Path, ck_type: type[_C], q_type: type[Question] | type[QuestionView], *, strict: bool
) -> tuple[_C | None, dict[str, Any] | None, list[Problem], _Stamp | None]:
    ckpt_path = run_dir / "checkpoint.json"
    report_path = run_dir / "report.json"
    problems: list[Problem] = []
    checkpoint: _C | None = None
    report: dict[str, Any] | None = None
    stamp: _Stamp | None = None
    if ckpt_path.is_file():
        batched = _decode_views_in_batches(ckpt_path, ck_type) if q_type is QuestionView else None
        if batched is not None:
            checkpoint, stamp = batched
            problems = _integrity_problems(ckpt_path, b"", checkpoint, len(checkpoint.questions), 0)
            if strict and problems:
                raise RunFormatError.of(problems[0])
        else:
            data, stamp = _read_bytes(ckpt_path)
            checkpoint, problems = _decode_checkpoint(ckpt_path, data, ck_type, q_type, strict=strict)
            del data  # not kept while the rest is read
        if (run_dir / "journal.jsonl").is_file() and isinstance(checkpoint, Checkpoint):
            # a running or killed bench_nb run: replay its progress

            checkpoint = apply_journal(checkpoint, run_dir, strict=strict, problems=problems)
        if checkpoint.targetQuestionIds:
            missing = [q for q in checkpoint.targetQuestionIds if q not in checkpoint.questions]
            if missing:
                problems.append(
                    Problem(
                        str(ckpt_path),
                        f"{len(missing)} target question(s) have no entry, e.g. {missing[0]}",
                        field="questions",
                    )
                )
        for name in _OWN_LINES:  # compressed, it would be left out without a word
            packed = _gzipped_own_file(run_dir / f"{name}.gz")
            if packed is not None and not (run_dir / name).is_file():
                problems.append(packed)
        if strict and problems:
            raise RunFormatError.of(problems[0])
        problems.extend(_result_file_problems(run_dir, checkpoint, strict=strict))
    if report_path.is_file() and checkpoint is None:
        try:
            report = json.loads(report_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise RunFormatError(report_path, f"not valid JSON: {err}") from None
        if not isinstance(report, dict) or not isinstance(report.get("evaluations"), list):
            raise RunFormatError(report_path, "expected an object with an 'evaluations' list", "evaluations")
    if checkpoint is None and report is None:
        raise RunFormatError(run_dir, "not a run directory: no checkpoint.json and no report.json")
    return checkpoint, report, problems, stamp


def _loads_as_run(p: Path) -> bool:
    """A folder ``load_runs`` reads as one run: a run directory (``lock.is_run_dir``), or a folder of another
    harness's files (``_is_harness_dir``), which is read but never written nor locked as a run."""
    return is_run_dir(p) or _is_harness_dir(p)


def _is_harness_dir(p: Path) -> bool:
    """A folder holding a harness's file (EverMemOS's eval_results.json, LongMemEval-V2's per_question.jsonl) and
    no run of the run format."""
    return locate_importer(p) is not None and not (p / "checkpoint.json").is_file()


_OWN_FILES = ("checkpoint.json", "report.json", "manifest.json")
_OWN_LINES = ("journal.jsonl", "judgments.jsonl", "labels.jsonl", "reanswer.jsonl")  # beside a checkpoint


RECEIPT_SUFFIX = ".receipt.json"  # a run's receipt beside it (``bench-nb receipt``): never a run itself


def _gzipped_own_file(p: Path) -> Problem | None:
    """A gzip-compressed file of the run format (``checkpoint.json.gz``, a receipt, ...): never tried as
    another harness's file, skipped with the reason (a run directory is read, resumed and locked as its
    uncompressed files)."""
    inner = p.name.removesuffix(".gz")
    if p.name == inner or not p.is_file():
        return None
    if inner not in (*_OWN_FILES, *_OWN_LINES) and not inner.endswith(RECEIPT_SUFFIX):
        return None
    return Problem(
        str(p),
        f"a gzip-compressed {inner}: a run directory's files are read uncompressed "
        "(decompress it into its run directory); skipped",
    )


def _is_harness_file(p: Path) -> bool:
    """A JSON file not of the run format (gzip-compressed too: AMB's published outputs), or a file an importer
    tells by its name or first line (LongMemEval-V2's ``per_question.jsonl``, LongMemEval's ``*.eval-results-*``)."""
    return p.is_file() and (
        (p.suffix == ".json" and p.name not in _OWN_FILES and not p.name.endswith(RECEIPT_SUFFIX))
        or (p.name.endswith(".json.gz") and _gzipped_own_file(p) is None)
        or (p.suffix != ".json" and locate_importer(p) is not None)
    )


def _expand(source: RunSource) -> tuple[list[Path], list[Problem]]:
    text = os.fspath(source)
    if any(ch in text for ch in "*?["):
        matches = sorted(Path(m) for m in glob.glob(text))
        dirs: list[Path] = []
        skipped: list[Problem] = []
        for m in matches:
            if m.is_file() and m.name in RUN_FILES:
                m = m.parent
            if (gzipped := _gzipped_own_file(m)) is not None:
                skipped.append(gzipped)
            elif ((m.is_dir() and _loads_as_run(m)) or _is_harness_file(m)) and m not in dirs:
                dirs.append(m)
            elif m.is_file() and m.name == "manifest.json":
                found, probs = _from_manifest(m)
                dirs.extend(found)
                if probs:
                    return dirs, probs
        if not dirs:
            return [], [*skipped, Problem(text, "the pattern matched no run directory")]
        return dirs, skipped
    p = Path(text)
    if (gzipped := _gzipped_own_file(p)) is not None:
        return [], [gzipped]
    if p.is_file() and p.name == "manifest.json":
        return _from_manifest(p)
    if p.is_file() and p.name in RUN_FILES:
        return [p.parent], []
    if _is_harness_file(p):
        return [p], []
    if p.is_dir():
        if _loads_as_run(p):
            return [p], []
        if (p / "manifest.json").is_file():
            return _from_manifest(p / "manifest.json")
        children = sorted(c for c in p.iterdir() if c.is_dir() and _loads_as_run(c))
        if children:
            return children, []
        return [], [
            Problem(
                text, "no run directory here (no checkpoint.json, report.json or eval_results.json below it)"
            )
        ]
    if p.is_file():  # there, but in no format bench_nb reads: never "no such file"
        return [], [
            Problem(
                text,
                "not a file bench_nb reads: not a run directory's checkpoint.json or report.json, a compare "
                "manifest, nor another harness's results file (JSON, or JSON lines, plain or .gz: "
                "docs/loading.md)",
            )
        ]
    return [], [Problem(text, f"no such file or directory{nearest_run(p.name, p.parent)}")]


def _from_manifest(manifest: Path) -> tuple[list[Path], list[Problem]]:
    try:
        m = msgspec.json.decode(manifest.read_bytes(), type=CompareManifest)
    except msgspec.DecodeError as err:
        raise RunFormatError(manifest, *_decode_error(err)) from None
    # data/compare/<id>/manifest.json -> data/runs/<runId>; also accept runs beside the manifest.
    candidates = [manifest.parent.parent.parent / "runs", manifest.parent, manifest.parent / "runs"]
    dirs: list[Path] = []
    problems: list[Problem] = []
    for entry in m.runs:
        for base in candidates:
            if _loads_as_run(base / entry.runId):
                dirs.append(base / entry.runId)
                break
        else:
            problems.append(
                Problem(str(manifest), f"run {entry.runId} ({entry.provider}) not found", field="runs")
            )
    return dirs, problems


def load_runs(
    sources: Sources | RunSet | Run,
    *,
    format: RunFormatName | None = None,
    dataset: str | os.PathLike[str] | None = None,
    strict: bool = False,
    complete: bool | Literal["sound"] = False,
) -> RunSet:
    """Load runs from directories, globs, a runs folder, a compare manifest, or other harnesses' files.

    Args:
        sources: one source or a list of them. A ``RunSet`` or ``Run`` is passed through. A JSON file that is
            not a checkpoint, report or manifest is read as another harness's results (EverMemOS's
            eval_results.json, Zep's grades, Mem0's results; detected from its content), as is a folder
            holding an ``eval_results.json`` and LongMemEval's judged answers (``*.eval-results-*``, or a
            ``.jsonl`` copy).
        format: read every source as this format instead of detecting it: ``"evermemos"``, ``"zep"``,
            ``"mem0"``, ``"longmemeval-v2"``, ``"longmemeval"``, ``"amb"``, ``"mem0-benchmarks"``, or
            ``"memorybench"`` / ``"bench_nb"`` (one on-disk format: run directories).
        dataset: LoCoMo's locomo10.json, to give imported questions their canonical ids (Zep's and Mem0's
            files need it; EverMemOS's question texts are checked against it). Default: the download cache.
        strict: raise ``RunFormatError`` on the first problem instead of collecting problems.
        complete: decode each checkpoint completely now (as ``strict`` does), for a caller that reads every
            question's search results (an export); by default a lenient load decodes what the frames read
            and ``Run.checkpoint`` the rest when it is first read. ``"sound"``: a lenient load that decodes
            completely now each run whose whole checkpoint decodes so, for a caller that reads most
            questions' search results (a report): a run damaged in a field the frames do not read (a
            question's, or the run's own) is read as by default, so it and its questions stay in the frames.

    Returns:
        A ``RunSet`` (a list of ``Run``) whose ``problems`` lists what could not be read.
    """
    if isinstance(sources, RunSet):
        return sources
    if isinstance(sources, Run):
        return RunSet([sources])
    reader = read_run if complete is True or strict else partial(read_run_deferred, sound=bool(complete))
    runs, problems = _load(sources, reader, strict=strict, fmt=format, dataset=dataset)
    return RunSet(runs, problems)


def check_like_for_like(runs: Sources | RunSet | Sequence[Run]) -> list[str]:
    """How the runs differ in question set, k, answerer, judge, prompts or benchmark file (empty: like for like).

    ``differences`` over each run's ``read_spec``; the prompts are compared by hash (the answer prompt and the
    primary judge's).
    """
    stored = getattr(runs, "recorded_settings", None)  # a run store (frames.store.StoredRuns)
    if callable(stored):
        return differences(stored())
    if isinstance(runs, RunSet):
        loaded: list[Run] = list(runs)
    elif isinstance(runs, Sequence) and not isinstance(runs, str) and all(isinstance(r, Run) for r in runs):
        loaded = list(runs)  # type: ignore[arg-type]
    else:
        loaded = list(load_runs(runs))  # type: ignore[arg-type]
    return differences([read_spec(run) for run in loaded])


def find_run_paths(sources: Sources) -> tuple[list[Path], list[Problem]]:
    """The runs ``load_runs`` would read from ``sources`` (directories, or harness files), without reading
    them: what an exporter checks for changes before decoding anything. Duplicates are dropped."""
    paths: list[Path] = []
    problems: list[Problem] = []
    for _, dirs, probs in _each_source(sources):
        paths.extend(dirs)
        problems.extend(probs)
    return paths, problems


def _each_source(sources: Sources) -> Iterator[tuple[RunSource, list[Path], list[Problem]]]:
    """Each source, the runs found there that no earlier source gave (by resolved path), and the problems
    finding them."""
    seen: set[Path] = set()
    for item in [sources] if isinstance(sources, (str, os.PathLike)) else list(sources):
        dirs, problems = _expand(item)
        new = []
        for d in dirs:
            if d.resolve() not in seen:
                seen.add(d.resolve())
                new.append(d)
        yield item, new, problems


def load_run_views(
    sources: Sources | RunSet | Run, *, strict: bool = False
) -> tuple[list[Run], list[Problem]]:
    """``load_runs`` for the frames: each run read with ``read_run_deferred`` (strict or not); runs already
    loaded are read as they are, through their ``view`` (a lenient ``load_runs``'s run is not decoded
    completely for its frames).

    Returns:
        The runs, and the problems met finding them (each run's own problems are in ``run.problems``).
    """
    if isinstance(sources, RunSet):
        return list(sources), sources.problems
    if isinstance(sources, Run):
        return [sources], []
    return _load(sources, read_run_deferred, strict=strict)


def _read_imported(
    path: Path, fmt: str | None, strict: bool, locomo: Callable[[], LocomoIndex | None]
) -> list[Run]:
    """Every run of another harness's result file (or a folder holding one; mem0's memory-benchmarks file holds
    one per retrieval depth), each a ``Run``; ``locomo`` gives LoCoMo's question index, asked only when needed."""
    try:
        index = locomo() if needs_locomo(path, fmt) else None
    except DatasetError as err:  # dataset= is not LoCoMo's file
        raise RunFormatError(path, f"cannot match its questions to LoCoMo's: {err}") from None
    file, runs = import_runs(path, fmt, index)
    if strict and runs[0][2]:
        raise RunFormatError.of(runs[0][2][0])
    return [Run(file, ck, None, problems, imported=info) for ck, info, problems in runs]


def _load(
    sources: Sources,
    reader: Callable[..., Run],
    *,
    strict: bool,
    fmt: str | None = None,
    dataset: RunSource | None = None,
) -> tuple[list[Run], list[Problem]]:
    formats = (*list_importers(), *OWN_FORMATS)
    if fmt is not None and fmt not in formats:
        raise ValueError(f"format must be one of {', '.join(formats)}, not {fmt!r}")
    runs: list[Run] = []
    all_problems: list[Problem] = []
    warned: list[Problem] = []
    # LoCoMo's question index: read once per load, and only when a harness file needs it
    locomo = cache(partial(load_locomo_index, dataset))
    for item, dirs, problems in _each_source(sources):
        if problems and strict:
            raise RunFormatError.of(problems[0])
        if not dirs and problems:  # a source that matched nothing: say so now, not only in .problems
            where = "" if os.path.isabs(os.fspath(item)) else f" (from {Path.cwd()})"
            warn_problems(problems, f"no runs loaded from {os.fspath(item)!r}{where}: {problems[0].message}")
            warned.extend(problems)
        all_problems.extend(problems)
        for d in dirs:
            imported = (fmt is not None and fmt not in OWN_FORMATS) or (
                fmt is None and (d.is_file() or _is_harness_dir(d))
            )
            try:
                if imported:
                    runs.extend(_read_imported(d, fmt, strict, locomo))
                elif d.is_file():
                    raise RunFormatError(d, f"not a run directory of the {fmt} format (a file)")
                else:
                    runs.append(reader(d, strict=strict))
            except RunFormatError as err:
                if strict:
                    raise
                all_problems.append(err.problem)
            except RecursionError:  # another of the run's JSON files (report.json, a harness's file)
                if strict:
                    raise RunFormatError(d, TOO_DEEP) from None
                all_problems.append(Problem(str(d), TOO_DEEP))
    check_run_ids(runs)
    if not strict:  # one warning for what this load skipped (a source that matched nothing was said above)
        warn_problems([p for p in all_problems if p not in warned] + [p for r in runs for p in r.problems])
    return runs, all_problems
