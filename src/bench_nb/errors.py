"""The one error tree of bench_nb: every error we raise on purpose is a BenchNbError."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class BenchNbError(Exception):
    """Base of every error bench_nb raises on purpose."""


class RetryableError(BenchNbError):
    """A failure that may pass when the same call is made again later (rate limit, timeout, 5xx).

    Use it as a mixin beside the specific error, e.g. ``class RateLimited(ProviderError, RetryableError)``;
    the runner retries any error whose ``retryable`` is true.
    """

    retryable = True


class RunFormatError(BenchNbError):
    """A run directory, checkpoint or report.json that does not have the expected shape.

    The message names the file and the field at fault.
    """

    def __init__(self, path: str | Path, message: str, field: str | None = None) -> None:
        self.path = str(path)
        self.field = field
        where = f"{self.path}" + (f" (field {field})" if field else "")
        super().__init__(f"{where}: {message}")


class DatasetError(BenchNbError):
    """A benchmark dataset that cannot be read, downloaded or verified."""


class ProviderError(BenchNbError):
    """A memory provider failed (ingest, indexing, search or clear)."""


class ModelError(BenchNbError):
    """An LLM call failed after its retries."""


class JudgeError(BenchNbError):
    """A judge could not grade an answer."""


class ReportError(BenchNbError):
    """A notebook report failed to build; the message names the notebook and the failing cell."""


class ComparisonError(BenchNbError):
    """Runs that are not like for like were asked to be compared."""


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
