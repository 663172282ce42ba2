"""The one error tree of bench_nb: every error about runs, data, providers, models, judges, comparisons,
receipts and reports is a BenchNbError; an argument with a value no function takes (a ``backend``, a ``by``
column, a ``method``) is a ``ValueError``, as in Python itself."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class BenchNbError(Exception):
    """Base of bench_nb's errors about runs, data, providers, models and judges: catch it to catch them all.

    The kinds, in ``bench_nb.errors``: ``RunFormatError`` (a run that cannot be read), ``DatasetError`` (a
    benchmark or errata file, or name, that cannot be had), ``ProviderError``, ``ModelError``, ``JudgeError``,
    ``ComparisonError`` (runs that are not like for like), ``ReceiptError``, ``ReportError``, ... An argument
    with a value no function takes (a ``backend``, a ``by`` column, a ``method``) raises ``ValueError``
    instead, naming the value and the ones accepted.
    """


class RunFormatError(BenchNbError):
    """A run directory, checkpoint or report.json that does not have the expected shape.

    The message names the file and the field at fault; ``path``, ``field``, ``question_id`` and ``message``
    (the message without the place) keep them apart, and ``problem`` is the same as a ``Problem``.
    """

    def __init__(
        self, path: str | Path, message: str, field: str | None = None, question_id: str | None = None
    ) -> None:
        self.path = str(path)
        self.field = field
        self.question_id = question_id
        self.message = message
        where = f"{self.path}" + (f" (field {field})" if field else "")
        super().__init__(f"{where}: {message}")

    @classmethod
    def of(cls, problem: Problem) -> RunFormatError:
        """The error strict mode raises for what lenient mode lists as ``problem``."""
        return cls(problem.path, problem.message, problem.field, problem.question_id)

    @property
    def problem(self) -> Problem:
        """This error as lenient mode lists it."""
        return Problem(self.path, self.message, self.field, self.question_id)


class RunLockedError(BenchNbError):
    """Another process is writing the run directory."""

    def __init__(self, run_dir: Path, holder: dict[str, Any]) -> None:
        self.run_dir = run_dir
        self.holder = holder
        who = f"process {holder.get('pid', '?')}"
        if holder.get("host"):
            who += f" on {holder['host']}"
        super().__init__(
            f"{run_dir} is being written by {who}, started {holder.get('startedAt', 'at an unknown time')} "
            f"({holder.get('command', 'bench-nb')}); one process writes a run at a time: wait for it to "
            "finish, or stop it and run again to resume"
        )


class DatasetError(BenchNbError):
    """A benchmark dataset that cannot be read, downloaded or verified."""


class ProviderError(BenchNbError):
    """A memory provider failed (ingest, indexing, search or clear)."""


class MissingProviderKey(ProviderError):
    """A provider's API key the environment does not hold (``providers.cloud.common.api_key``): a dry run lists
    every one at once with its estimate, where a run stops at the first."""


class ModelError(BenchNbError):
    """An LLM call failed after its retries."""


class DeadlineExceeded(BenchNbError, TimeoutError):
    """The question's deadline passed, or would pass before the call could start (``models.deadline``);
    retrying would only pass it further."""

    retryable = False


class HoldBoardLost(BenchNbError):
    """The board a sweep's processes share their Retry-After holds through (``retry_after.set_hold_board``:
    the local pool's manager process, or the Ray actor) is gone. Not the call's fault and not retryable: the
    run stops (nothing is recorded against its questions) and the sweep fails, naming the board; run the sweep
    again to resume."""

    retryable = False


class JudgeError(BenchNbError):
    """A judge could not grade an answer."""


class ReportError(BenchNbError):
    """A notebook report failed to build; the message names the notebook and the failing cell."""


class ComparisonError(BenchNbError):
    """Runs that are not like for like were asked to be compared."""


class ReceiptError(BenchNbError):
    """A receipt that cannot be written or read, or that does not verify: the message names the file and the
    first thing that differs (a field, a question, a number, the signature)."""


def naming_file(err: OSError, path: str | os.PathLike[str]) -> OSError:
    """``err`` naming ``path``, so that its message names the file (a failed write's own error names none):
    an ``OSError`` of the same errno (and so the same subclass); ``err`` itself when it names a file."""
    if err.filename is not None or err.errno is None:
        return err
    return OSError(err.errno, err.strerror or str(err), os.fspath(path))


@dataclass(frozen=True)
class Problem:
    """One thing a lenient loader could not read; what else loaded is still returned."""

    path: str
    message: str
    field: str | None = None
    question_id: str | None = None

    def __str__(self) -> str:
        where = self.path
        if self.question_id:
            where += f" [question {self.question_id}]"
        if self.field:
            where += f" (field {self.field})"
        return f"{where}: {self.message}"


class BenchNbWarning(UserWarning):
    """Base of every warning bench_nb gives on purpose."""


class RunFormatWarning(BenchNbWarning):
    """A lenient load met problems: what they name was skipped (or read as the problem says).

    ``problems`` holds them as ``Problem`` objects (file, field, question id, message); the message lists
    them too. ``strict=True`` raises a ``RunFormatError`` on the first instead.
    """

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[Problem, ...] = tuple(problems)


_SHOWN = 10  # problems listed in a warning's message (all are in its .problems)
#: The parts of a ``warn_problems`` message that speak to Python code (``bench-nb`` shows it without them).
STRICT_HINT = " (strict=True raises instead)"
ALL_HINT = " (all of them are in this warning's .problems)"


def warn_problems(problems: Sequence[Problem], headline: str | None = None) -> None:
    """Warn (``RunFormatWarning``) about the problems a lenient call met, each named by file, question and
    field, pointing at the caller's code (the first frame outside bench_nb); nothing when there are none.

    ``headline``: the first line instead of "N problems loading runs ..." (the problems are listed under it
    unless it is about a single problem it names already).
    """
    if not problems:
        return
    n = len(problems)
    lines = [f"  - {p}" for p in problems[:_SHOWN]]
    if n > _SHOWN:
        lines.append(f"  ... and {n - _SHOWN} more{ALL_HINT}")
    if headline is None:
        headline = (
            f"{n} problem{'s' if n != 1 else ''} loading runs; what {'they name' if n != 1 else 'it names'} "
            f"was skipped or read as noted{STRICT_HINT}:"
        )
    elif n == 1:
        lines = []
    message = "\n".join([headline, *lines])
    warnings.warn(RunFormatWarning(message, problems), stacklevel=_outside_package())


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _outside_package() -> int:
    """The ``stacklevel`` (for a warn called in this module's caller's callee) of the first frame outside
    bench_nb: a warning points at the user's line whichever bench_nb function found the problem."""
    level = 1
    frame = sys._getframe(1)  # warn_problems
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level
