"""API keys, from the environment only: the key a model is called with (``check_key``), and every key a run's
answerer and judges would call a model with checked before the run pays for anything (``check_credentials``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from bench_nb.errors import ModelError
from bench_nb.models.aliases import ModelSpec


def check_key(spec: ModelSpec) -> str:
    """The API key ``spec`` is called with, from the environment; a run checks its answerer's and judges' keys
    before ingest, so nothing is paid for before the first answer would fail.

    Raises:
        ModelError: the key variable is unset, naming it.
    """
    if spec.key_env is None:
        return os.environ.get("OPENAI_API_KEY") or "not-needed"  # local servers ignore it
    key = os.environ.get(spec.key_env)
    if not key and spec.key_env == "GEMINI_API_KEY":
        key = os.environ.get("GOOGLE_API_KEY")
    if not key:
        raise ModelError(
            f"{spec.key_env} is not set: export it to call {spec.alias!r} (keys come from the environment only)"
        )
    return key


def missing_credentials(answerer: Any, judges: Sequence[Any]) -> list[str]:
    """Every API key the answerer and the judges would call a model with (their ``spec``) that the
    environment does not hold, one line each naming the answerer or judge and the variable."""
    missing = []
    roles = [("answerer", answerer)] if answerer is not None else []
    for role, obj in (*roles, *(("judge", j) for j in judges)):
        spec = getattr(obj, "spec", None)
        if isinstance(spec, ModelSpec):
            try:
                check_key(spec)
            except ModelError as err:
                missing.append(f"{role} {getattr(obj, 'name', spec.alias)!r}: {err}")
    return missing


def check_credentials(answerer: Any, judges: Sequence[Any]) -> None:
    """Check the API key of every model the answerer and the judges call (their ``spec``), before a run
    ingests anything (or a rejudge grades anything): a missing key fails at once, not every question at its
    answer or evaluate phase.

    Raises:
        ModelError: keys the environment does not hold, every one named with its answerer or judge.
    """
    missing = missing_credentials(answerer, judges)
    if missing:
        raise ModelError("; ".join(missing))
