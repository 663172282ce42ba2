"""A dry run: what a run will cost before anything is ingested or any model is called (``--dry-run``).

``estimate_run`` loads the benchmark, selects the questions exactly as a run would, makes each provider in a
temporary directory (a cloud provider checks its key there) and the answerer and judges (their models' keys
checked by ``components.check_credentials``), then counts: containers to ingest, searches, model calls, the
answer prompts' context tokens (about 4 characters a token), their list price, and the run directory's disk
and peak memory. Disk and memory follow from the search results a run keeps: every hit of every question is
written three times (the checkpoint, ``results/<id>.json`` and report.json, about its text plus 500 bytes of
fields each) and held in memory while the checkpoint and report are written (``MEMORY_PER_HIT_BYTES`` a hit,
measured on LoCoMo's full-context run). ``full-context`` returns the whole conversation for every question,
so on all of LoCoMo that is about 10 GB of memory: the estimate warns above ``MEMORY_WARNING_BYTES``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_nb.records import Benchmark, Question
from bench_nb.runner.components import (
    check_credentials,
    make_answerer,
    make_judges,
    make_provider,
    split_specs,
)
from bench_nb.runner.selection import exclude_types as without_types
from bench_nb.runner.selection import select_questions
from bench_nb.runner.settings import DEFAULT_ANSWERER, DEFAULT_K, default_judges, split_provider_settings

CHARS_PER_TOKEN = 4
PROMPT_OVERHEAD_TOKENS = 250  # the answer prompt's own words and the question
ANSWER_OUTPUT_TOKENS = 50
JUDGE_INPUT_TOKENS = 400
JUDGE_OUTPUT_TOKENS = 60
HIT_FIELD_BYTES = 500  # a search result's fields beside its text, as JSON in a run's files
QUESTION_BYTES = 1_500  # a question's own record (phases, answer, verdict) in each of those files
COPIES_ON_DISK = 3  # checkpoint.json, results/<id>.json, report.json
MEMORY_PER_HIT_BYTES = (
    8_500  # a hit held while the checkpoint and report.json are written (measured: 1.76 GB at 185,774)
)
MEMORY_WARNING_BYTES = 4 * 1024**3
FULL_CONTEXT_TOKENS = 100_000  # full-context's default max_context_tokens


@dataclass(frozen=True)
class ProviderEstimate:
    """One provider's share of a run: hits kept, context tokens, disk and memory."""

    provider: str
    containers: int
    searches: int
    hits: int
    context_tokens: int
    disk_bytes: int
    memory_bytes: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunEstimate:
    """What a run (or a comparison) will ask of providers, models, disk and memory."""

    benchmark: str
    questions: int
    selected: int
    haystacks: int
    sessions: int
    messages: int
    conversation_tokens: int
    answerer: str
    judges: tuple[str, ...]
    providers: tuple[ProviderEstimate, ...]
    model_calls: dict[str, int] = field(default_factory=dict)
    input_tokens: dict[str, int] = field(default_factory=dict)
    output_tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: dict[str, float | None] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The estimate as the command line prints it."""
        gb = 1024**3
        out = [
            "Dry run: nothing ingested, no model called; keys and providers checked.",
            f"{self.benchmark}: {self.selected} of {self.questions} questions, {self.haystacks} haystacks, "
            f"{self.sessions} sessions, {self.messages:,} messages (~{self.conversation_tokens:,} tokens)",
            f"answerer {self.answerer}, judges {', '.join(self.judges)}",
        ]
        for p in self.providers:
            out.append(
                f"{p.provider}: {p.containers} container(s) to ingest, {p.searches} searches, "
                f"~{p.context_tokens:,} context tokens per answer; run directory ~{_size(p.disk_bytes)} on disk, "
                f"peak memory ~{p.memory_bytes / gb:.1f} GB"
            )
            out += [f"warning: {w}" for w in p.warnings]
        if not self.model_calls:
            out.append("model calls: none (offline answerer and judges)")
        for model, calls in self.model_calls.items():
            cost = self.cost_usd.get(model)
            price = "price unknown" if cost is None else f"~${cost:,.2f} at list price"
            out.append(
                f"model calls: {calls:,} to {model} (~{self.input_tokens[model]:,} input, "
                f"~{self.output_tokens[model]:,} output tokens; {price})"
            )
        return out


def _size(n: int) -> str:
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _hits(provider: str, q: Question, bench: Benchmark, k: int, settings: Mapping[str, Any]) -> list[int]:
    """The characters of each hit a search of ``provider`` returns for ``q`` (full-context: the whole
    conversation up to its token budget; no-memory: nothing; any other: k messages of average length)."""
    lengths = [len(m.content) for s in bench.haystacks[q.haystack_id].sessions for m in s.messages]
    if provider == "no-memory" or not lengths:
        return []
    if provider == "full-context":
        budget = int(settings.get("max_context_tokens", FULL_CONTEXT_TOKENS)) * CHARS_PER_TOKEN
        kept, total = [], 0
        for n in reversed(lengths):
            if total + n > budget:
                break
            kept.append(n)
            total += n
        return kept
    mean = sum(lengths) // len(lengths)
    return [mean] * min(k, len(lengths))


def estimate_run(
    providers: str | Sequence[str],
    benchmark: str | Benchmark,
    *,
    dataset: str | Path | None = None,
    answerer: str | None = None,
    judges: str | None = None,
    k: int | None = None,
    limit: int | None = None,
    sample_per_type: int | None = None,
    exclude_types: str | Sequence[str] | None = None,
    isolate_per_question: bool | None = None,
    judge_replicates: int | None = None,
    provider_settings: Mapping[str, Any] | None = None,
    sha256: str | None = None,
    **_: Any,
) -> RunEstimate:
    """The cost of running ``providers`` on ``benchmark`` with these settings, before anything runs.

    Raises:
        BenchNbError: as the run would before its first ingest: a missing key (provider, answerer or judge),
            an unknown provider, benchmark, question type or selection.
    """
    from bench_nb.models.aliases import ModelSpec
    from bench_nb.models.prices import cost_usd
    from bench_nb.runner.run import load_benchmark_spec

    names = [p for p in split_specs(providers) if isinstance(p, str)]
    bench = load_benchmark_spec(benchmark, dataset, sha256)
    selectable = without_types(bench, exclude_types) if exclude_types else bench
    targets, _sampling = select_questions(selectable, limit=limit, per_type=sample_per_type)
    k = DEFAULT_K if k is None else k
    judge_spec = judges if judges is not None else ",".join(default_judges(bench.name))
    answerer_obj = make_answerer(answerer or DEFAULT_ANSWERER)
    judge_objs = make_judges(judge_spec)
    check_credentials(answerer_obj, judge_objs)
    own = split_provider_settings(provider_settings, names)
    haystacks = {q.haystack_id for q in targets}
    per_provider = []
    with tempfile.TemporaryDirectory(prefix="bench-nb-dry-run-") as tmp:
        for name in names:
            made = make_provider(name, run_dir=Path(tmp) / name.replace(":", "_"), settings=own[name])
            close = getattr(made, "close", None)
            if callable(close):
                close()
            hits = [_hits(name, q, bench, k, own[name]) for q in targets]
            n_hits = sum(len(h) for h in hits)
            chars = sum(sum(h) for h in hits)
            memory = n_hits * MEMORY_PER_HIT_BYTES + 200 * 1024**2
            warnings = []
            if memory > MEMORY_WARNING_BYTES:
                warnings.append(
                    f"{name} keeps {n_hits:,} search results ({n_hits // max(len(targets), 1):,} per question): "
                    f"about {memory / 1024**3:.1f} GB of memory while the run writes its checkpoint and "
                    "report.json; use --limit, --sample or -s max_context_tokens=N, or a machine with that much"
                )
            per_provider.append(
                ProviderEstimate(
                    provider=name,
                    containers=len(targets) if isolate_per_question else len(haystacks),
                    searches=len(targets),
                    hits=n_hits,
                    context_tokens=chars // CHARS_PER_TOKEN // max(len(targets), 1),
                    disk_bytes=COPIES_ON_DISK
                    * (chars + n_hits * HIT_FIELD_BYTES + len(targets) * QUESTION_BYTES),
                    memory_bytes=memory,
                    warnings=tuple(warnings),
                )
            )
    calls: dict[str, int] = {}
    tokens_in: dict[str, int] = {}
    tokens_out: dict[str, int] = {}
    costs: dict[str, float | None] = {}

    def add(spec: ModelSpec, n: int, t_in: int, t_out: int) -> None:
        calls[spec.alias] = calls.get(spec.alias, 0) + n
        tokens_in[spec.alias] = tokens_in.get(spec.alias, 0) + t_in
        tokens_out[spec.alias] = tokens_out.get(spec.alias, 0) + t_out
        price = cost_usd(spec, t_in, t_out)
        before = costs.get(spec.alias, 0.0)
        costs[spec.alias] = None if price is None or before is None else before + price

    spec = getattr(answerer_obj, "spec", None)
    if isinstance(spec, ModelSpec):
        for p in per_provider:
            t_in = p.context_tokens * p.searches + PROMPT_OVERHEAD_TOKENS * p.searches
            add(spec, p.searches, t_in, ANSWER_OUTPUT_TOKENS * p.searches)
    replicates = judge_replicates or 1
    for judge in judge_objs:
        spec = getattr(judge, "spec", None)
        if isinstance(spec, ModelSpec):
            n = len(targets) * len(per_provider) * replicates
            add(spec, n, JUDGE_INPUT_TOKENS * n, JUDGE_OUTPUT_TOKENS * n)
    messages = [m for h in haystacks for s in bench.haystacks[h].sessions for m in s.messages]
    return RunEstimate(
        benchmark=bench.name,
        questions=len(bench.questions),
        selected=len(targets),
        haystacks=len(haystacks),
        sessions=sum(len(bench.haystacks[h].sessions) for h in haystacks),
        messages=len(messages),
        conversation_tokens=sum(len(m.content) for m in messages) // CHARS_PER_TOKEN,
        answerer=answerer_obj.name,
        judges=tuple(j.name for j in judge_objs),
        providers=tuple(per_provider),
        model_calls=calls,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=costs,
    )
