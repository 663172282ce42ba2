"""The JSON-lines files kept beside a run (``judgments.jsonl``, ``labels.jsonl``), read leniently: each line
decoded and handed to the caller's reader, a bad line skipped and reported with its file and line number,
the other lines still loaded.

Lines are decoded with msgspec (a third of ``json.loads``' time on a 10,000-line file). ``decode_lines`` is
the all-or-nothing form a caller tries first when it can check every line at once (``runformat.verdicts``).

``append_lines`` is how lines are added to these files: it never leaves a damaged line behind, and never
appends after one. A write cut short (disk full, a file-size limit) is truncated back to where it started
before the error is raised; a tail left by a process killed mid-write (the last line has no newline) is
repaired before the next append: closed with its newline if it is a whole JSON value, else cut off
(``repair_tail``; the run's ``journal.jsonl`` is emptied when its writer opens it).

``GroupAppender`` is ``append_lines`` for many threads appending to one file (the runner's evaluate workers
and ``judgments.jsonl``): group commit, one write and one fsync for all the lines waiting together, each
thread returning once its own lines are on disk.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from bench_nb.errors import Problem, naming_file

T = TypeVar("T")

_DECODER = msgspec.json.Decoder()

#: What a line's reader raises to have the line skipped as a problem: ValueError (msgspec.DecodeError is one:
#: not JSON, not UTF-8, a torn last line; or a value the reader refuses), KeyError (a field missing),
#: TypeError and AttributeError (a line that is JSON but not an object), RecursionError (JSON nested deeper than
#: the decoder goes).
LINE_ERRORS: tuple[type[Exception], ...] = (ValueError, KeyError, TypeError, AttributeError, RecursionError)


def read_json_lines(path: Path, read: Callable[[Any], T]) -> tuple[list[T], list[Problem]]:
    """``read`` of each non-blank line of ``path`` decoded, in file order, and the lines skipped.

    A line that is not JSON, or whose ``read`` raises one of :data:`LINE_ERRORS`, becomes
    ``Problem(path, "line N skipped: <why>", field="line N")`` (lines counted from 1). A missing file has no
    lines.
    """
    items: list[T] = []
    problems: list[Problem] = []
    for n, line in _lines(path):
        try:
            item = read(_DECODER.decode(line))
        except LINE_ERRORS as err:
            problems.append(Problem(str(path), f"line {n} skipped: {err}", field=f"line {n}"))
            continue
        items.append(item)
    return items, problems


def decode_lines(path: Path, decoder: msgspec.json.Decoder[Any] = _DECODER) -> list[Any]:
    """Every non-blank line of ``path`` decoded, in file order, with the decoder ``read_json_lines`` uses (so
    a line decodes here exactly when it decodes there) or a typed ``decoder`` (each line decoded and checked
    in one call); raises ``msgspec.DecodeError`` at the first line that does not, which ``read_json_lines``
    would name. A missing file has no lines."""
    return [decoder.decode(line) for _, line in _lines(path)]


def _lines(path: Path) -> list[tuple[int, bytes]]:
    """The non-blank lines of ``path`` with their numbers (from 1); none for a missing file."""
    if not path.is_file():
        return []
    # bytes.splitlines() splits on \n, \r and \r\n only: the same lines as reading the file as text.
    return [(n, line) for n, line in enumerate(path.read_bytes().splitlines(), start=1) if line.strip()]


def append_lines(path: Path, lines: Sequence[str], *, durable: bool = True) -> None:
    """Append ``lines`` (each ending with a newline) to ``path`` (created if absent), fsync'd when
    ``durable``; all of them or none (see the module's docstring)."""
    _append(path, "".join(lines).encode("utf-8"), durable)


def _append(path: Path, data: bytes, durable: bool) -> None:
    if not data:
        return
    try:
        fh = open(path, "ab+")  # noqa: SIM115 - closed below
    except OSError as err:
        raise naming_file(err, path) from err
    with fh:
        start = repair_tail(fh)
        try:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        except OSError as err:
            try:  # leave no part of the batch behind
                fh.seek(start)
                fh.truncate(start)
                fh.flush()
            except OSError:
                pass
            raise naming_file(err, path) from err


@dataclass(slots=True)
class _Waiting:
    """One ``GroupAppender.append`` call's text, and what became of it."""

    data: bytes
    done: bool = False
    error: BaseException | None = None


class GroupAppender:
    """``append_lines`` to one file from many threads, with group commit.

    The thread that finds no write under way writes the lines of every thread waiting (its own among them) in
    one append: one write, one fsync. Threads arriving meanwhile wait, and the next of them to wake writes all
    of theirs. Each ``append`` returns once its lines are on disk (fsync'd when ``durable``), or raises the
    error that kept them off it (an ``OSError`` naming the file), leaving none of that batch in the file: the
    guarantee of ``append_lines``, at the cost of one fsync per batch instead of one per call.
    """

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        self.path, self.durable = path, durable
        self._cond = threading.Condition()
        self._waiting: list[_Waiting] = []
        self._writing = False

    def append(self, lines: Sequence[str]) -> None:
        """Append ``lines`` (each ending with a newline); returns when they are on disk."""
        mine = _Waiting("".join(lines).encode("utf-8"))  # a line that cannot be encoded fails here, alone
        if not mine.data:
            return
        with self._cond:
            self._waiting.append(mine)
            while self._writing and not mine.done:
                self._cond.wait()
            writer = not mine.done  # no write under way: this thread writes every waiting thread's lines
            if writer:
                batch, self._waiting = self._waiting, []
                self._writing = True
        if writer:
            error: BaseException | None = None
            try:
                _append(self.path, b"".join(w.data for w in batch), self.durable)
            except BaseException as err:  # also an interrupt: no waiting thread may take its lines as written
                error = err
            with self._cond:
                for w in batch:
                    w.done, w.error = True, error
                self._writing = False
                self._cond.notify_all()
            if error is not None:
                raise error
        elif mine.error is not None:  # a copy: one exception object raised in two threads gets one traceback
            raise copy.copy(mine.error) from mine.error


def repair_tail(fh: Any) -> int:
    """Make the file open in ``fh`` (binary, readable, seekable) end with a whole line: a torn last line is
    closed with its newline if it is a whole JSON value, else cut off. Returns the file's size after."""
    size = fh.seek(0, os.SEEK_END)
    if size == 0:
        return 0
    fh.seek(max(0, size - 1))
    if fh.read(1) == b"\n":
        return int(size)
    # the last line was torn: find where it starts
    block, end = 1 << 16, size
    while True:
        begin = max(0, end - block)
        fh.seek(begin)
        chunk = fh.read(end - begin)
        cut = chunk.rfind(b"\n")
        if cut >= 0 or begin == 0:
            line_start = begin + cut + 1 if cut >= 0 else 0
            break
        end = begin
    fh.seek(line_start)
    tail = fh.read(size - line_start)
    try:
        _DECODER.decode(tail)
    except ValueError:  # not a whole value: cut it off
        fh.seek(line_start)
        fh.truncate(line_start)
        fh.flush()
        return int(line_start)
    fh.seek(0, os.SEEK_END)
    fh.write(b"\n")  # a whole value that only lacked its newline: kept
    return int(size) + 1
