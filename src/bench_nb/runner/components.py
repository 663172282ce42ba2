"""Turning the names a user gives (``-p sqlite``, ``-m extractive``, ``-j f1,contains``) into objects.

Each name goes to its registry (``bench_nb.providers.get_provider``, ``bench_nb.models.answerers.get_answerer``,
``bench_nb.judges.registry.get_judge``). A name of the form ``package.module:attribute`` is a plugin: the
attribute (a class or a factory) is imported and called, with ``run_dir=`` and the settings for a provider,
and with the options for an answerer or a judge. That is how a team benchmarks its own memory system without
touching bench_nb: ``bench-nb run -p mypkg.memory:MyProvider -b locomo``. Model prefixes come first: ``local:``,
``ollama:``, ``openai:``, ``anthropic:``, ``gemini:`` (``models.aliases.MODEL_PREFIXES``) name a model, not a plugin.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench_nb.benchmarks.registry import benchmark_traits
from bench_nb.errors import BenchNbError
from bench_nb.judges.base import Judge
from bench_nb.judges.registry import calls_no_model, get_judge, is_registered_judge
from bench_nb.models.aliases import MODEL_PREFIXES
from bench_nb.models.base import Answerer
from bench_nb.providers.base import Provider


def is_plugin(spec: str) -> bool:
    """True for ``module:attribute``; a model name with a prefix (``local:llama3``, ``openai:gpt-4o``) is not,
    nor is a registered judge given a model (``rubric:<model>``, ``lme-v2:<model>``)."""
    prefix, colon, _ = spec.strip().partition(":")
    return (
        bool(colon)
        and prefix.lower() not in (*MODEL_PREFIXES, "http", "https")
        and not is_registered_judge(prefix)
    )


def load_plugin(spec: str) -> Any:
    """The object ``module:attribute`` names (raises a BenchNbError saying what is missing)."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise BenchNbError(f"plugin {spec!r}: cannot import {module_name!r}: {err}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise BenchNbError(f"plugin {spec!r}: {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def make_provider(
    spec: str | Provider, *, run_dir: Path, settings: Mapping[str, Any] | None = None
) -> Provider:
    """A provider object from a registry name, a plugin spec, or an object passed through."""
    if not isinstance(spec, str):
        return spec
    if is_plugin(spec):
        return load_plugin(spec)(run_dir=run_dir, **dict(settings or {}))  # type: ignore[no-any-return,unused-ignore]
    from bench_nb.providers import get_provider

    return get_provider(spec, run_dir=run_dir, **dict(settings or {}))


def close_provider(provider: Provider | None) -> None:
    """``provider.close()``, when it has one (an optional method of the Provider protocol)."""
    close = getattr(provider, "close", None)
    if callable(close):
        close()


def make_answerer(spec: str | Answerer, options: Mapping[str, Any] | None = None) -> Answerer:
    """An answerer from ``get_answerer``'s names, a plugin spec, or an object passed through."""
    if not isinstance(spec, str):
        return spec
    if is_plugin(spec):
        return load_plugin(spec)(**dict(options or {}))  # type: ignore[no-any-return,unused-ignore]
    from bench_nb.models.answerers import get_answerer

    return get_answerer(spec, **dict(options or {}))


def component_options(
    answerer: str | Answerer,
    judges: Sequence[str | Judge],
    answerer_options: Mapping[str, Any] | None,
    judge_options: Mapping[str, Mapping[str, Any]] | None,
    *,
    prompts: Mapping[str, Any] | None = None,
    client: Any = None,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The answerer's and judges' options, with what the run adds to those it makes by name.

    An object or a plugin is used as given; to the others go

    - ``prompts``, the provider's own (``{"answer": ..., "judge": ...}``, ``--allow-provider-prompts``): to the
      LLM answerer and judges named by model alias (``prompt=``, ``allow_custom_prompt=True``); the extractive
      answerer and the registered judges use no prompt of a provider;
    - ``client``, a run's own LLM client (``runner.repeats``): to each that calls a model.
    """
    from bench_nb.models.answerers import calls_no_model as answerer_calls_no_model
    from bench_nb.models.answerers import is_registered_answerer

    a_opts = dict(answerer_options or {})
    j_opts = {name: dict(o) for name, o in (judge_options or {}).items()}
    made: list[
        tuple[str, str | Answerer | Judge, dict[str, Any], Callable[[str], bool], Callable[[str], bool]]
    ]
    made = [("answer", answerer, a_opts, is_registered_answerer, answerer_calls_no_model)]
    made += [
        ("judge", j, j_opts.setdefault(j, {}), is_registered_judge, calls_no_model)
        for j in judges
        if isinstance(j, str)
    ]
    for role, spec, opts, registered, offline in made:
        if not isinstance(spec, str) or is_plugin(spec):
            continue
        if prompts and role in prompts and not registered(spec):
            opts.update(prompt=prompts[role], allow_custom_prompt=True)
        if client is not None and not offline(spec):
            opts.setdefault("client", client)
    return a_opts, j_opts


def split_specs(specs: str | Judge | Sequence[str | Judge]) -> list[str | Judge]:
    """``"f1,contains"`` or a list of names/judges -> a list (empty names dropped)."""
    if isinstance(specs, str):
        return [s.strip() for s in specs.split(",") if s.strip()]
    if not isinstance(specs, Sequence):
        return [specs]
    out: list[str | Judge] = []
    for s in specs:
        out.extend(split_specs(s) if isinstance(s, str) else [s])
    return out


def judges_for(benchmark: str, specs: str | Judge | Sequence[str | Judge] | None = None) -> list[str | Judge]:
    """The judges a run of ``benchmark`` is graded by: ``specs`` (``split_specs``), else the benchmark's own
    (``BenchmarkTraits.default_judges``)."""
    return split_specs(specs) if specs else list(benchmark_traits(benchmark).default_judges)


def make_judges(
    specs: str | Judge | Sequence[str | Judge],
    options: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    benchmark: str = "",
) -> list[Judge]:
    """Judges from names, plugin specs or objects; the first is the primary judge.

    Args:
        specs: ``"f1,contains"``, or a list of names, plugin specs and Judge objects.
        options: per judge name, the keyword options it is made with (``{"f1": {"threshold": 0.6}}``).
        benchmark: the benchmark they grade: one scored by its rubric (``BenchmarkTraits.graded``) refuses a
            primary judge that does not grade (``graded``).
    """
    judges: list[Judge] = []
    for spec in split_specs(specs):
        if not isinstance(spec, str):
            judges.append(spec)
            continue
        opts = dict((options or {}).get(spec, {}))
        if is_plugin(spec):
            judges.append(load_plugin(spec)(**opts))
        else:
            judges.append(get_judge(spec, **opts))
    if not judges:
        raise BenchNbError("a run needs at least one judge (e.g. -j f1)")
    names = [j.name for j in judges]
    if len(set(names)) != len(names):
        raise BenchNbError(f"each judge of a run must have its own name, got {names}")
    traits = benchmark_traits(benchmark)
    if traits.graded and getattr(judges[0], "graded", False) is not True:
        graded = traits.default_judges[0]
        raise BenchNbError(
            f"{benchmark} is scored by its rubric: the first judge must be {graded!r} (offline) or "
            f"'{graded}:<model>', not {names[0]!r} (-j {graded} or -j {graded}:gpt-4o)"
        )
    return judges
