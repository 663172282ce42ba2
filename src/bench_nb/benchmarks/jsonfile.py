"""Reading dataset JSON files fast, with errors that name the file, and lenient-mode bookkeeping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from bench_nb.errors import DatasetError, Problem


class FieldError(Exception):
    """A bad field of a dataset record: ``field`` names it, ``message`` says what is wrong (the reader adds
    the file and the record)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def read_json(path: Path) -> Any:
    """Decode a JSON file (msgspec: several times faster than json on large datasets).

    Raises:
        DatasetError: the file is missing or not valid JSON; the message gives the line and column.
    """
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise DatasetError(f"{path}: cannot read the dataset: {err.strerror or err}") from None
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        # Decode again with json only to say where: it reports line and column.
        try:
            json.loads(raw)
        except ValueError as err:
            raise DatasetError(f"{path}: not valid JSON: {err}") from None
        raise DatasetError(f"{path}: not valid JSON") from None


def report(problems: list[Problem] | None, problem: Problem) -> None:
    """Raise ``problem`` as a DatasetError in strict mode (``problems is None``), else record it."""
    if problems is None:
        raise DatasetError(str(problem))
    problems.append(problem)
