"""A run resolved once: what the user asked for (``RunOrder``: ``run_benchmark``'s arguments or ``bench-nb
run``'s options) becomes what the engine runs (``RunPlan``, made by ``resolve``): the run read back once under
its lock (``runner.lock.open_run``) and a resumed run's own settings merged in, the benchmark loaded and its
sha256 pin checked (``benchmarks.load_benchmark``), the questions selected, the containers named, the provider, answerer and judges made, what
the provider tells of itself read one time (``ProviderTraits``) and of the answerer and judges
(``ComponentTraits``), and the run's record (``RunSpec``, ``RunPlan.spec``: what the checkpoint holds, made by
``RunSpec.found``) with the checkpoint the run starts from.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_nb.benchmarks.registry import load_benchmark
from bench_nb.errors import BenchNbError, RunFormatError
from bench_nb.judges.base import Judge
from bench_nb.models.aliases import check_credentials
from bench_nb.models.base import Answerer
from bench_nb.models.client import LLMClient
from bench_nb.models.prompt import in_context_format
from bench_nb.providers.base import EvidenceLevel, Provider
from bench_nb.providers.usage import reports_usage
from bench_nb.records import Benchmark, Haystack, Question
from bench_nb.runformat.format import Checkpoint, now_stamp
from bench_nb.runformat.lock import nearest_run
from bench_nb.runformat.spec import RunRequest, RunSpec, check_resume, new_checkpoint
from bench_nb.runner.components import (
    close_provider,
    component_options,
    is_plugin,
    judges_for,
    make_answerer,
    make_judges,
    make_provider,
)
from bench_nb.runner.lock import open_run
from bench_nb.runner.repeats import repeat_number, run_client
from bench_nb.runner.retrieval import declared_evidence_level
from bench_nb.runner.selection import select_questions
from bench_nb.runner.settings import (
    DEFAULT_ANSWERER,
    DEFAULT_K,
    ExecutionOptions,
    split_provider_settings,
)

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")


@dataclass(frozen=True)
class ProviderTraits:
    """What a run reads of its provider besides its calls, read once when it is made (the Provider protocol's
    optional attributes, ``providers.base``): its name, its evidence level (``runner.retrieval``), whether its
    memories outlive the process (``persistent``: one that keeps them in process memory is ingested again on a
    resume), whether it reports its own model calls (``providers.usage``), and its own answer and judge prompts
    (``prompts``, read only when the run allows them: ``--allow-provider-prompts``)."""

    name: str
    evidence_level: EvidenceLevel | None = None
    persistent: bool = True
    reports_usage: bool = False
    prompts: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, provider: Provider, *, prompts: bool = False) -> ProviderTraits:
        """``provider``'s traits (``prompts``: read its own prompts too). Raises ``ProviderError`` on a bad
        evidence level."""
        own: Mapping[str, Any] = {}
        if prompts:
            from bench_nb.models.llm import provider_prompts  # the LLM client: only for a run that asks

            own = provider_prompts(provider)
        return cls(
            name=provider.name,
            evidence_level=declared_evidence_level(provider),
            persistent=bool(getattr(provider, "persistent", True)),
            reports_usage=reports_usage(provider),
            prompts=own,
        )


@dataclass(frozen=True)
class ComponentTraits:
    """What a run reads of its answerer and judges besides their calls, read once when they are made (optional
    attributes of the Answerer and Judge protocols): the hashes of their exact prompts (``prompt_hash``, or one
    per rubric: ``prompt_hashes``, as BEAM's and LongMemEval-V2's model judges give them), the
    answerer's context format (``None``: it does not say) and tokenizer, whether any uses a provider's own
    prompt (``custom_prompt``) and whether the answerer's time is its own CPU's (``cpu_bound``: its CPU time is
    recorded)."""

    prompt_hashes: dict[str, str]
    context_format: int | None
    tokenizer: str | None
    custom_prompt: bool
    cpu_bound: bool

    @classmethod
    def of(cls, answerer: Answerer, judges: Sequence[Judge]) -> ComponentTraits:
        """What ``answerer`` and ``judges`` (the primary first) tell of themselves."""
        hashes: dict[str, str] = {}
        for role, obj in (("answer", answerer), *((f"judge:{j.name}", j) for j in judges)):
            value = getattr(obj, "prompt_hash", None) or getattr(obj, "prompt_hashes", None)
            if isinstance(value, str):
                hashes[role] = value
            elif isinstance(value, Mapping):
                hashes.update({f"{role}:{k}": str(v) for k, v in value.items()})
        context, tokenizer = (getattr(answerer, name, None) for name in ("context_format", "tokenizer"))
        return cls(
            prompt_hashes=hashes,
            context_format=context if isinstance(context, int) else None,
            tokenizer=tokenizer if isinstance(tokenizer, str) else None,
            custom_prompt=any(getattr(x, "custom_prompt", False) is True for x in (answerer, *judges)),
            cpu_bound=getattr(answerer, "cpu_bound", False) is True,
        )


@dataclass(frozen=True)
class Container:
    """A haystack's container at the provider, and the target questions asked about it."""

    tag: str
    haystack: Haystack
    question_ids: tuple[str, ...]


@dataclass(frozen=True)
class RunOrder:
    """What a run is asked to be (see the module's docstring): ``request`` the settings given as names
    (``RunRequest``), ``options`` how to execute it, ``run_id`` (``None``: a new run's default id) under
    ``runs_dir``, ``objects`` the Provider, Benchmark, Answerer and Judge objects given instead of names
    (``"provider"``, ``"benchmark"``, ``"answerer"``, ``"judges"``, the last a list that may mix names and
    objects), and the answerer's and judges' keyword options (never written to the run)."""

    request: RunRequest
    options: ExecutionOptions = field(default_factory=ExecutionOptions)
    run_id: str | None = None
    runs_dir: Path = Path("data/runs")
    objects: Mapping[str, Any] = field(default_factory=dict)
    answerer_options: Mapping[str, Any] | None = None
    judge_options: Mapping[str, Mapping[str, Any]] | None = None


@dataclass(frozen=True)
class RunPlan:
    """A run resolved once (``resolve``): what the engine runs. ``spec`` is the run's record (what the
    checkpoint holds), ``questions`` the target questions in benchmark order, ``settings`` the provider's own
    settings, ``client`` the run's own LLM client (``runner.repeats.run_client``: no two runs share one),
    ``checkpoint`` the run's state to start from (``resumed``: read back from the run directory)."""

    run_dir: Path
    spec: RunSpec
    options: ExecutionOptions
    benchmark: Benchmark
    questions: list[Question]
    containers: list[Container]
    provider: Provider
    traits: ProviderTraits
    settings: dict[str, Any]
    answerer: Answerer
    judges: list[Judge]
    component_traits: ComponentTraits
    client: LLMClient
    checkpoint: Checkpoint
    resumed: bool


@contextlib.contextmanager
def resolve(order: RunOrder) -> Iterator[RunPlan]:
    """The run ``order`` asks for, resolved once, with the run directory locked (one writer per run: a
    second process is refused at once) and the provider open until the block ends. The run is read back once,
    under its lock (``runner.lock.open_run``): a resumed run's own settings fill in what ``order`` leaves out.
    A run directory made for a run that fails before its checkpoint is written is removed again.

    Raises:
        BenchNbError: a bad run id, no provider or benchmark to run, a resume that would change the run's
            settings (``ComparisonError``), or what the components refuse.
    """
    objects, run_id = order.objects, order.run_id
    if run_id is not None and not _RUN_ID.match(run_id):
        raise RunFormatError(run_id, "a run id may hold letters, digits, '.', '_' and '-' only")
    asked, resumed = order.request, None
    with contextlib.ExitStack() as opened:  # the provider is closed before its run directory may go
        if run_id is not None:
            resumed = opened.enter_context(open_run(order.runs_dir / run_id))
            if resumed is not None:
                asked = asked.resumed(resumed[1], objects=objects, where=str(order.runs_dir / run_id))
                # its own response cache (runner.repeats)
                repeat = repeat_number(order.runs_dir / run_id, resumed[1])
                if repeat > 1:
                    order = dataclasses.replace(
                        order, options=dataclasses.replace(order.options, repeat=repeat)
                    )
        provider = objects.get("provider") or asked.provider
        benchmark = objects.get("benchmark") or asked.benchmark
        if provider is None or benchmark is None:
            raise BenchNbError(
                "give a provider and a benchmark (-p and -b), or the run id of a run to resume (-r)"
                if run_id is None
                else f"give a provider and a benchmark (-p and -b): there is no run {run_id!r} in "
                f"{order.runs_dir} to resume{nearest_run(run_id, order.runs_dir)}"
            )
        if isinstance(provider, str) and not is_plugin(provider):
            # an unknown name raises (the nearest and the known names) before the benchmark is downloaded
            from bench_nb.providers.registry import _PROVIDERS

            _PROVIDERS.get(provider)
        bench = load_benchmark(benchmark, asked.dataset, sha256=asked.sha256)
        provider_name = provider if isinstance(provider, str) else provider.name
        if run_id is None:
            run_id = f"{provider_name.replace(':', '_').replace('.', '_')}-{bench.name}-{now_stamp()}"
            resumed = opened.enter_context(open_run(order.runs_dir / run_id))
        run_dir = order.runs_dir / run_id
        targets, sampling = select_questions(
            bench,
            limit=asked.limit,
            per_type=asked.sample_per_type,
            question_ids=asked.question_ids,
            exclude=asked.exclude_types,
        )
        own = split_provider_settings(asked.provider_settings, [provider_name])[provider_name]
        containers = _containers(run_id, bench, targets, bool(asked.isolate_per_question))
        provider_obj = make_provider(provider, run_dir=run_dir, settings=own)
        opened.callback(close_provider, provider_obj)
        traits = ProviderTraits.of(provider_obj, prompts=bool(asked.allow_provider_prompts))
        client = run_client(order.options.repeat)
        opened.callback(client.close)
        answerer_obj, judge_objs, made, spec = _found(
            run_dir, asked, order, traits, bench, targets, own, client
        )
        if resumed is not None:  # refused if made with other settings
            checkpoint = resumed[0]
            check_resume(checkpoint, spec, str(run_dir))
            containers = _recorded_names(containers, checkpoint)
        else:
            checkpoint = new_checkpoint(
                spec,
                bench,
                targets,
                sampling=sampling,
                concurrency=order.options.concurrency,
                phase_concurrency=order.options.phase_concurrency,
                tags={qid: c.tag for c in containers for qid in c.question_ids},
            )
        yield RunPlan(
            run_dir=run_dir,
            spec=spec,
            options=order.options,
            benchmark=bench,
            questions=targets,
            containers=containers,
            provider=provider_obj,
            traits=traits,
            settings=own,
            answerer=answerer_obj,
            judges=judge_objs,
            component_traits=made,
            client=client,
            checkpoint=checkpoint,
            resumed=resumed is not None,
        )


def _containers(run_id: str, benchmark: Benchmark, targets: list[Question], isolate: bool) -> list[Container]:
    """The run's containers, each named ``<run id>-<16 random hex digits>``: nothing of the benchmark (question
    id, haystack id, order) reaches the provider in a name. A resumed run keeps its recorded names
    (``_recorded_names``)."""
    groups: dict[str, list[Question]] = {}
    for q in targets:
        if q.haystack_id not in benchmark.haystacks:
            raise RunFormatError(
                benchmark.name, f"question {q.question_id} asks about missing haystack {q.haystack_id!r}"
            )
        groups.setdefault(q.question_id if isolate else q.haystack_id, []).append(q)
    return [
        Container(
            f"{run_id}-{secrets.token_hex(8)}",
            benchmark.haystacks[qs[0].haystack_id],
            tuple(q.question_id for q in qs),
        )
        for qs in groups.values()
    ]


def _recorded_names(containers: list[Container], checkpoint: Checkpoint) -> list[Container]:
    """``containers`` under the names ``checkpoint`` recorded for their questions (a run written before the
    names became opaque used ``<haystack or question id>-<run id>``)."""
    recorded = {qid: q.containerTag for qid, q in checkpoint.questions.items() if q.containerTag}
    return [dataclasses.replace(c, tag=recorded.get(c.question_ids[0], c.tag)) for c in containers]


def _found(
    run_dir: Path,
    asked: RunRequest,
    order: RunOrder,
    traits: ProviderTraits,
    bench: Benchmark,
    targets: list[Question],
    own_settings: dict[str, Any],
    client: LLMClient,
) -> tuple[Answerer, list[Judge], ComponentTraits, RunSpec]:
    """The answerer and judges made (those that call a model, made by name, with the run's LLM ``client``),
    what they tell of themselves (``ComponentTraits``), and the run's settings with what the run found
    (``RunSpec.found``)."""
    objects = order.objects
    answerer = objects.get("answerer") or asked.answerer or DEFAULT_ANSWERER
    judges = judges_for(bench.name, objects.get("judges") or asked.judges)
    answerer_options, judge_options = component_options(
        answerer,
        judges,
        order.answerer_options,
        order.judge_options,
        prompts=traits.prompts,
        client=client,
    )
    answerer_obj = make_answerer(answerer, answerer_options)
    judge_objs = make_judges(judges, judge_options, benchmark=bench.name)
    check_credentials(answerer_obj, judge_objs)  # before ingest: nothing paid for a run that fails
    # A resumed run's answerer shows the hits as the run's first answers saw them (RunRequest.context_format).
    answerer_obj = in_context_format(answerer_obj, asked.context_format, str(run_dir))
    made = ComponentTraits.of(answerer_obj, judge_objs)
    spec = RunSpec.found(
        asked,
        run_id=run_dir.name,
        provider=traits.name,
        benchmark=bench.name,
        question_ids=[q.question_id for q in targets],
        k=DEFAULT_K if asked.k is None else asked.k,
        answerer=answerer_obj.name,
        answerer_spec=answerer if isinstance(answerer, str) else None,
        judges=[j.name for j in judge_objs],
        judge_specs=[s for s in judges if isinstance(s, str)],
        benchmark_sha256=bench.sha256,
        prompt_hashes=made.prompt_hashes,
        context_format=made.context_format,
        custom_prompt=made.custom_prompt,
        tokenizer=made.tokenizer,
        evidence_level=traits.evidence_level,
        provider_settings=own_settings,
        repeat=order.options.repeat,
    )
    return answerer_obj, judge_objs, made, spec
