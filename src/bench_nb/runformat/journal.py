"""The run's append-only journal and the atomic checkpoint it is compacted into.

Every completed or failed phase is one line of ``journal.jsonl`` (``JournalRecord``), appended and fsync'd by
a writer thread (group commit: records that arrive together share one fsync, so the scheduler never waits on
the disk). Every few seconds, and at the end, the runner writes the whole state to ``checkpoint.json``
atomically (temporary file, fsync, ``os.replace``) and then empties the journal. Replaying a record is
idempotent, so a crash between the two steps only replays records the checkpoint already holds.

Reading a run (``apply_journal``) replays the journal over the checkpoint; a torn last line (a run killed
mid-write) is ignored. A writer (``JournalWriter``) is opened right after a checkpoint that holds the replayed
journal, and starts it empty, so no record is ever appended after a torn one.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from pathlib import Path
from typing import Any

import msgspec

from bench_nb.errors import Problem, RunFormatError, naming_file
from bench_nb.runformat.format import (
    AnswerPhase,
    Checkpoint,
    EvaluatePhase,
    IndexingPhase,
    IngestPhase,
    Phase,
    SearchPhase,
)

JOURNAL = "journal.jsonl"
CHECKPOINT = "checkpoint.json"

PHASE_TYPES: dict[str, type[Phase]] = {
    "ingest": IngestPhase,
    "indexing": IndexingPhase,
    "search": SearchPhase,
    "answer": AnswerPhase,
    "evaluate": EvaluatePhase,
}


class JournalRecord(msgspec.Struct, omit_defaults=True):
    """One completed or failed phase of one or more questions (a shared ingest covers its container's).

    Attributes:
        q: the question ids the record applies to.
        p: the phase name.
        s: the phase record (one of ``runformat.format``'s phase structs), as JSON.
        b: keys merged into each question's ``benchNb`` (nested dicts are merged one level deep).
    """

    q: list[str]
    p: str
    s: msgspec.Raw
    b: dict[str, Any] | None = None


_encoder = msgspec.json.Encoder()
_record_decoder = msgspec.json.Decoder(JournalRecord)
_phase_decoders = {name: msgspec.json.Decoder(t) for name, t in PHASE_TYPES.items()}


def make_record(question_ids: list[str], phase: str, record: Phase, bench_nb: dict[str, Any] | None) -> bytes:
    """One encoded journal line (with its newline)."""
    rec = JournalRecord(q=question_ids, p=phase, s=msgspec.Raw(_encoder.encode(record)), b=bench_nb or None)
    return _encoder.encode(rec) + b"\n"


# Keys merged two levels deep: a question's ``usage.memory`` gets its ``ingest`` and its ``search`` entries from
# two phases' records (``runner.usage``).
_TWO_DEEP = {"usage": "memory"}


def merge_bench_nb(current: dict[str, Any] | None, update: dict[str, Any] | None) -> dict[str, Any] | None:
    """``current`` updated with ``update``; dict values are merged one level deep (attempts, errors), and
    ``usage.memory`` two (its ``ingest`` and ``search`` come from different phases).

    A None value removes the key (at either level): a phase that succeeds on resume drops its old error.
    """
    if not update:
        return current
    out = dict(current or {})
    for key, value in update.items():
        old = out.get(key)
        if isinstance(value, dict):
            merged = {**old, **value} if isinstance(old, dict) else dict(value)
            inner = _TWO_DEEP.get(key)
            if inner and isinstance(old, dict) and isinstance(old.get(inner), dict) and inner in value:
                deeper = {**old[inner], **(value[inner] or {})}
                merged[inner] = {k: v for k, v in deeper.items() if v is not None} or None
            merged = {k: v for k, v in merged.items() if v is not None}
            if merged:
                out[key] = merged
            else:
                out.pop(key, None)
        elif value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def apply_record(checkpoint: Checkpoint, rec: JournalRecord) -> None:
    """Apply one journal record to the checkpoint, in place (idempotent)."""
    decoder = _phase_decoders.get(rec.p)
    if decoder is None:
        raise ValueError(f"unknown phase {rec.p!r}")
    for qid in rec.q:
        question = checkpoint.questions.get(qid)
        if question is None:
            continue
        # Each question gets its own struct: phases must never be shared between questions.
        setattr(question.phases, rec.p, decoder.decode(rec.s))
        question.benchNb = merge_bench_nb(question.benchNb, rec.b)


def read_journal(
    run_dir: str | Path, *, strict: bool = False, problems: list[Problem] | None = None
) -> list[JournalRecord]:
    """The journal's records in order. A torn last line is ignored; a bad line elsewhere raises in strict mode,
    and is skipped with a ``Problem`` appended to ``problems`` (when given) in lenient mode."""
    path = Path(run_dir) / JOURNAL
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    records: list[JournalRecord] = []
    last = len(lines) - 1
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = _record_decoder.decode(line)
            if rec.p not in _phase_decoders:
                raise msgspec.ValidationError(f"unknown phase {rec.p!r}")
        except (msgspec.DecodeError, RecursionError) as err:  # RecursionError: nested too deeply
            # The last line has no newline when a write was torn by a kill: not an error.
            if n == last:
                break
            if strict:
                raise RunFormatError(
                    path, f"line {n + 1} is not a journal record: {err}", f"line {n + 1}"
                ) from None
            if problems is not None:
                problems.append(
                    Problem(
                        str(path),
                        f"line {n + 1} is not a journal record ({err}); line skipped",
                        f"line {n + 1}",
                    )
                )
            continue
        records.append(rec)
    return records


def apply_journal(
    checkpoint: Checkpoint,
    run_dir: str | Path,
    *,
    strict: bool = False,
    problems: list[Problem] | None = None,
) -> Checkpoint:
    """The checkpoint with the progress recorded in ``run_dir/journal.jsonl`` since its last compaction.

    The checkpoint is updated in place and returned. Used by ``runformat.load.read_run``, so a killed run's
    latest progress shows in ``questions_df``; lines that are not records are reported in ``problems``.
    """
    for rec in read_journal(run_dir, strict=strict, problems=problems):
        apply_record(checkpoint, rec)
    return checkpoint


def write_atomic(path: Path, data: bytes, *, durable: bool = True, tmp: Path | None = None) -> None:
    """Write ``data`` to ``path`` atomically: temporary file beside it, fsync, ``os.replace``, fsync the dir.

    With ``durable=False`` the fsyncs are skipped: readers still never see a partial file, but a power cut may
    lose it (for files that can be rebuilt, like the per-question results files). ``tmp``: the temporary file's
    name, on the same filesystem (a writer holding a run's lock names it so the next one deletes it if this one
    is killed: ``lock.RUN_TEMP_FILES``); by default ``.<name>.<pid>.<thread>.tmp`` beside ``path``.

    A write that fails (disk full, permission) removes its temporary file and raises the ``OSError`` with
    ``path`` as its filename (a failed write's own error names no file), so the message names the file.
    """
    tmp = tmp or path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise naming_file(err, path) from err
    if not durable:
        return
    with contextlib.suppress(OSError):  # directories cannot be opened for fsync on every platform
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_checkpoint(run_dir: Path, checkpoint: Checkpoint) -> int:
    """Write ``checkpoint.json`` atomically; returns its size in bytes."""
    data = _encoder.encode(checkpoint)
    write_atomic(run_dir / CHECKPOINT, data)
    return len(data)


class JournalWriter:
    """Appends records to ``journal.jsonl`` from a background thread, fsync'ing every batch.

    Open it right after a checkpoint that holds everything the journal had: it starts the file empty.
    ``append`` never blocks on the disk. ``rotate`` waits until everything appended so far is on disk and
    empties the file (call it right after each later checkpoint). A write error is raised by the next
    ``append``/``rotate``/``close``.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / JOURNAL
        try:
            self._fh = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        except OSError as err:
            raise naming_file(err, self.path) from err
        self._queue: queue.SimpleQueue[bytes | threading.Event | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="bench-nb-journal", daemon=True)
        self._thread.start()

    def append(self, line: bytes) -> None:
        """Queue one record (a JSON line) for the disk; raises the writer's last write error, if any."""
        self._raise()
        self._queue.put(line)

    def rotate(self) -> None:
        """Wait for pending records to reach the disk, then empty the journal."""
        done = threading.Event()
        self._queue.put(done)
        done.wait()
        self._raise()

    def close(self) -> None:
        """Write what is queued, stop the writer thread and close the file; raises a write error met on the
        way."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._fh.close()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            raise RunFormatError(self.path, f"cannot write the journal: {self._error}")

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            batch: list[bytes] = []
            stop = False
            events: list[threading.Event] = []
            while True:
                if item is None:
                    stop = True
                elif isinstance(item, threading.Event):
                    # Everything before the rotate marker is written first, then the file is emptied.
                    self._flush(batch)
                    batch = []
                    self._truncate()
                    events.append(item)
                else:
                    batch.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            self._flush(batch)
            for event in events:
                event.set()
            if stop:
                return

    def _flush(self, batch: list[bytes]) -> None:
        if not batch or self._error is not None:
            return
        try:
            self._fh.write(b"".join(batch))
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as err:
            self._error = err

    def _truncate(self) -> None:
        if self._error is not None:
            return
        try:
            self._fh.truncate(0)
            self._fh.seek(0)
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as err:
            self._error = err
