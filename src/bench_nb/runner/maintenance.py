"""Cleaning up after a run: delete what its containers hold at the provider."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench_nb.errors import RunFormatError
from bench_nb.providers.base import Provider
from bench_nb.runformat.load import read_run
from bench_nb.runformat.lock import lock_run
from bench_nb.runformat.spec import read_spec
from bench_nb.runner.components import close_provider, make_provider
from bench_nb.runner.settings import check_provider_settings


def clean_run(
    run_dir: str | Path,
    *,
    provider: str | Provider | None = None,
    provider_settings: Mapping[str, Any] | None = None,
) -> list[str]:
    """Call ``provider.clear`` for every container of the run; returns the containers cleared.

    Args:
        run_dir: the run directory.
        provider: the provider (name, plugin spec or object); default the one the run was made with.
        provider_settings: options for making the provider; default the ones the run recorded
            (``benchNb.invocation.providerSettings``, e.g. a ``base_url``). Keys come from the environment.
    """
    run = read_run(run_dir, strict=True)
    if run.checkpoint is None:
        raise RunFormatError(
            Path(run_dir) / "checkpoint.json", "a checkpoint is needed to find the run's containers"
        )
    ck = run.checkpoint
    tags = list(dict.fromkeys(q.containerTag for q in ck.questions.values() if q.containerTag))
    invocation = read_spec(run).asked_for
    recorded = invocation.provider or ck.provider  # the name or plugin spec the run was made with
    if provider_settings is None and provider in (None, ck.provider, recorded):
        provider_settings = invocation.provider_settings
    spec = provider or recorded
    settings = check_provider_settings(spec if isinstance(spec, str) else spec.name, provider_settings or {})
    with lock_run(run_dir, command="bench-nb clean"):  # never under a run that is using the containers
        obj = make_provider(spec, run_dir=Path(run_dir), settings=settings)
        try:
            for tag in tags:
                obj.clear(tag)
        finally:
            close_provider(obj)
    return tags
