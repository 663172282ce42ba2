"""Repeats of one run (``bench-nb run --repeat N``, a sweep's ``repeats``): each repeat's own LLM response cache.

Repeat 1 reads and writes the usual response cache; repeat i > 1 its own file beside it,
``<stem>.repeat-<i><suffix>`` (``llm.repeat-2.sqlite``), so its model calls are made afresh instead of replayed
from repeat 1, and rerunning resumes each repeat with its own cache. The cache is an option of the LLM client
(``ClientSettings.cache_path``): every run resolves a client of its own once (``run_client``, ``RunPlan.client``),
which it hands to the answerer and judges it makes by name; there is no process-wide client and the
environment is not touched, so runs in one process (threads, a sweep) never share a client or see another's cache.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import msgspec

from bench_nb.errors import RunFormatError
from bench_nb.models.client import LLMClient
from bench_nb.models.settings import ClientSettings
from bench_nb.runformat.load import read_run_deferred
from bench_nb.runformat.spec import RunSpec, read_spec

# What repeats of one set of settings share, and neither a rejudge nor a reanswer changes in a run.
_SHARED = ("provider", "benchmark", "question_set", "k", "answerer", "benchmark_sha256")


def run_client(repeat: int) -> LLMClient:
    """A run's own LLM client, made from the environment; repeat ``repeat`` > 1 reads and writes its own response
    cache beside the usual one (``llm.repeat-2.sqlite``). It opens nothing until it calls a model."""
    settings = ClientSettings.from_env()
    cache = settings.cache_path  # None: caching is off, for every repeat
    if cache is not None and repeat > 1:
        cache = cache.with_name(f"{cache.stem}.repeat-{repeat}{cache.suffix}")
    return LLMClient(dataclasses.replace(settings, cache_path=cache))


def repeat_number(run_dir: Path, spec: RunSpec) -> int:
    """Which repeat of its settings the run at ``run_dir`` (its settings ``spec``) is: its ``benchNb.repeat``,
    else 1.

    A bench_nb run of version 1 did not record it. It was then repeat i > 1 only if ``--repeat`` or a sweep made
    it, and both leave what a run named ``x-r2`` by hand lacks: its directory is its run id, ``<id>-r<i>``, and
    repeat 1, ``<id>-r1``, was made beside it first with the same settings (``_SHARED``). Runs named so by hand
    with the same settings are read as repeats too: nothing on disk tells them apart; a run whose repeat 1 is gone
    or does not read is repeat 1.
    """
    if not spec.written_by_bench_nb or (spec.version or 1) >= 2 or spec.repeat is not None:
        return spec.repeat or 1
    run_dir = Path(os.path.abspath(run_dir))  # ``.`` or ``..``: the name of the folder it is
    if run_dir.name != spec.run_id:
        run_dir = run_dir.resolve()  # a link to the run's folder
    found = re.fullmatch(r"(.+)-r([1-9][0-9]*)", run_dir.name)
    if found is None or run_dir.name != spec.run_id:
        return 1
    first = run_dir.parent / f"{found.group(1)}-r1"
    if not (first / "checkpoint.json").is_file():
        return 1
    try:  # a repeat 1 that does not read, or that this user may not read, shows no settings
        sibling = read_spec(read_run_deferred(first))
    except (OSError, RunFormatError, msgspec.ValidationError):
        return 1
    same = all(getattr(sibling, name) == getattr(spec, name) for name in _SHARED)
    return int(found.group(2)) if same else 1
