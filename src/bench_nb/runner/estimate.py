"""A dry run: what a run will cost before anything is ingested or any model is called (``--dry-run``).

``estimate_run`` loads the benchmark, selects the questions exactly as a run would, makes each provider in a
temporary directory (a cloud provider checks its key there) and the answerer and judges (their models' keys
checked by ``models.aliases.missing_credentials``), then counts (every missing key is listed in ``missing_keys``, all
at once, beside the estimate; the command line prints the estimate, then fails naming them): containers to ingest, searches, model calls, the
answer prompts' context tokens, their list price, and the run directory's disk and peak memory.

Context tokens are counted on the context as the answer prompt shows it (``models.prompt.format_context``:
each hit in its numbered block with its date and session) of hits rendered as the message-store providers
render a message (``[date] speaker: text``): ``full-context`` the most recent messages within its token budget,
``no-memory`` none, any other provider ``k`` messages of its haystack's mean length. The characters are exact;
tokens per character are counted with the answerer's tokenizer on a sample of them (measured against real runs
in tests/runner/test_dry_run.py). A provider's own model calls (memory-side cost: ``providers.usage``) are not
estimated: the run records those it reports.

Disk and memory follow from the search results a run keeps: every hit of every question is
written three times (the checkpoint, ``results/<id>.json`` and report.json, about its text plus 500 bytes of
fields each) and held in memory while the checkpoint and report are written (``MEMORY_PER_HIT_BYTES`` a hit,
measured on LoCoMo's full-context run). ``full-context`` returns the whole conversation for every question,
so on all of LoCoMo that is several GB of memory: ``run_warnings`` warns above ``MEMORY_WARNING_BYTES`` (the dry
run and, at its start, the run itself), and when fewer than ``MIN_HAYSTACKS`` haystacks are selected (too few
for clustered intervals and the gate to tell runs apart but by very large differences).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_nb.benchmarks.registry import load_benchmark
from bench_nb.errors import BenchNbWarning, MissingProviderKey
from bench_nb.models.aliases import missing_credentials
from bench_nb.providers.usage import reports_usage
from bench_nb.records import Benchmark, Haystack, Question, SearchHit
from bench_nb.runner.components import (
    close_provider,
    judges_for,
    make_answerer,
    make_judges,
    make_provider,
    split_specs,
)
from bench_nb.runner.selection import select_questions
from bench_nb.runner.settings import DEFAULT_ANSWERER, DEFAULT_K, split_provider_settings

CHARS_PER_TOKEN = 4  # the benchmark's conversation size line (a rough count)
CALIBRATION_HITS = 400  # hits whose tokens are counted to find the tokens per character
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
# Fewer haystacks than this and the clustered paired test has at most 4 degrees of freedom (t_{4, 0.975} = 2.78):
# clustered intervals are wide, and comparisons and the gate can tell apart only very large differences.
MIN_HAYSTACKS = 6


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
    warnings: tuple[str, ...] = ()  # of the whole run (too few haystacks); a provider's are its own
    unmetered: tuple[str, ...] = ()  # providers that do not report their own model calls
    missing_keys: tuple[str, ...] = ()  # every API key the run needs and the environment lacks, one line each

    def lines(self) -> list[str]:
        """The estimate as the command line prints it (the missing keys are its error line)."""
        gb = 1024**3
        out = [
            "Dry run: nothing ingested, no model called; keys and providers checked.",
            f"{self.benchmark}: {self.selected} of {self.questions} questions, {self.haystacks} haystacks, "
            f"{self.sessions} sessions, {self.messages:,} messages (~{self.conversation_tokens:,} tokens)",
            f"answerer {self.answerer}, judges {', '.join(self.judges)}",
        ]
        out += [f"warning: {w}" for w in self.warnings]
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
        out.append(
            "not estimated: a provider's own model calls (memory-side cost, e.g. mem0-local's extraction); "
            "a run records those its provider reports (memory_cost_usd)"
            + (f", which {', '.join(self.unmetered)} does not" if self.unmetered else "")
        )
        return out


def _size(n: int) -> str:
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


class _Context:
    """The context each question's answer prompt gets, sized as ``format_context`` shows it: per haystack, each
    message's hit text and its block's characters, and the tokens per character of both, counted on a sample
    with the answerer's tokenizer (``token_model``) and with full-context's (``budget_model``)."""

    def __init__(self, bench: Benchmark, haystack_ids: Sequence[str], token_model: Any, budget_model: str):
        from bench_nb.models.prompt import format_context

        self.texts: dict[str, list[int]] = {}
        self.blocks: dict[str, list[int]] = {}
        every: list[SearchHit] = []
        for hid in haystack_ids:
            hits = _message_hits(bench.haystacks[hid])
            every += hits
            self.texts[hid] = [len(h.text) for h in hits]
            self.blocks[hid] = [len(format_context([h])) + 2 for h in hits]  # "\n\n" between blocks
        sample = every[:: max(1, len(every) // CALIBRATION_HITS)][:CALIBRATION_HITS]
        self.block_ratio = _tokens_per_char(format_context(sample), token_model) if sample else 0.0
        text = "\n".join(h.text for h in sample)
        self.text_ratio = _tokens_per_char(text, budget_model) if sample else 0.0

    def hits(self, provider: str, q: Question, k: int, settings: Mapping[str, Any]) -> tuple[int, int, int]:
        """What a search of ``provider`` returns for ``q``: its hits, their text's characters, and the
        characters of the context the answer prompt shows (full-context: the most recent messages within its
        token budget; no-memory: nothing; any other: k messages of the haystack's mean length)."""
        texts, blocks = self.texts[q.haystack_id], self.blocks[q.haystack_id]
        if provider == "no-memory" or not texts:
            return 0, 0, 0
        if provider == "full-context":
            budget = int(settings.get("max_context_tokens", FULL_CONTEXT_TOKENS))
            kept, total = 0, 0.0
            for n in reversed(texts):
                if total + n * self.text_ratio > budget:
                    break
                kept, total = kept + 1, total + n * self.text_ratio
            return kept, sum(texts[len(texts) - kept :]), sum(blocks[len(blocks) - kept :])
        n = min(k, len(texts))
        return n, sum(texts) * n // len(texts), sum(blocks) * n // len(blocks)


def _message_hits(haystack: Haystack) -> list[SearchHit]:
    """A haystack's messages as the message-store providers (sqlite, full-context) return them."""
    from bench_nb.providers.store import MessageRow

    return [
        MessageRow(
            0, "", s.session_id, i, s.date, pos, m.role, m.message_id or "", m.timestamp, m.content
        ).to_hit()
        for i, s in enumerate(haystack.sessions)
        for pos, m in enumerate(s.messages)
    ]


def _tokens_per_char(text: str, model: Any) -> float:
    from bench_nb.models.tokens import count_tokens

    return count_tokens(text, model).n / max(len(text), 1)


def _token_model(answerer: Any) -> Any:
    """The model whose tokenizer counts the answer prompt (``models.prompt.prompt_tokens``): the answerer's,
    or gpt-4o's for an answerer without a model; a tokenizer that would call an API (Claude's, with a key) is
    not used: cl100k_base counts instead, offline."""
    from bench_nb.models.aliases import ModelSpec
    from bench_nb.models.tokens import tokenizer_for

    spec = getattr(answerer, "spec", None)
    if not isinstance(spec, ModelSpec):
        return "gpt-4o"
    return "gpt-4" if tokenizer_for(spec).startswith("anthropic:") else spec


def _prompt_overhead(targets: Sequence[Question], model: Any) -> int:
    """The answer prompt's tokens without context (its own words, the question and its date), the mean over
    a sample of the questions."""
    from bench_nb.models.prompt import build_answer_prompt
    from bench_nb.models.tokens import count_tokens

    sample = list(targets[:: max(1, len(targets) // 50)])
    if not sample:
        return 0
    return sum(count_tokens(build_answer_prompt(q, []), model).n for q in sample) // len(sample)


class RunSizeWarning(BenchNbWarning):
    """A run is about to start with too few haystacks to decide anything, or with more search results than
    memory may hold (``start_warnings``)."""


def few_haystacks_warning(bench: Benchmark, targets: Sequence[Question]) -> str | None:
    """A warning when the questions ``targets`` come from fewer than ``MIN_HAYSTACKS`` haystacks (the dry run
    and the run itself, at its start, give it). When ``bench`` has fewer than ``MIN_HAYSTACKS`` in all, no
    selection can help, and the advice says so instead of asking for more."""
    n_haystacks = len({q.haystack_id for q in targets})
    if n_haystacks >= MIN_HAYSTACKS:
        return None
    head = (
        f"{len(targets)} question(s) of {bench.name} from {n_haystacks} haystack(s): questions of one haystack "
        f"succeed and fail together, so with fewer than {MIN_HAYSTACKS} haystacks clustered intervals are wide "
        "and the paired test and the gate can tell runs apart only by very large differences; "
    )
    if len(bench.haystacks) < MIN_HAYSTACKS:
        return head + (
            f"{bench.name} has only {len(bench.haystacks)} haystack(s) in all: it shows the tool at work, not "
            "which run is better (use a benchmark with more, e.g. -b locomo)"
        )
    return head + "select questions from more (a larger --limit, or --sample)"


def memory_warning(provider: str, n_questions: int, n_hits: int) -> str | None:
    """A warning when the search results a run keeps would take more than ``MEMORY_WARNING_BYTES`` (the dry run
    and the run itself, at its start, give it)."""
    memory = memory_bytes(n_hits)
    if memory <= MEMORY_WARNING_BYTES:
        return None
    return (
        f"{provider} keeps {n_hits:,} search results ({n_hits // max(n_questions, 1):,} per question): "
        f"about {memory / 1024**3:.1f} GB of memory while the run writes its checkpoint and "
        "report.json; use --limit, --sample or -s max_context_tokens=N, or a machine with that much"
    )


def memory_bytes(n_hits: int) -> int:
    """The peak memory of a run that keeps ``n_hits`` search results."""
    return n_hits * MEMORY_PER_HIT_BYTES + 200 * 1024**2


def start_warnings(
    provider: str, bench: Benchmark, targets: Sequence[Question], k: int, settings: Mapping[str, Any]
) -> list[str]:
    """What a run is warned of as it starts: too few haystacks, and (full-context) the memory its search
    results will take; the dry run prints the same."""
    out = [few_haystacks_warning(bench, targets)]
    if provider == "full-context":  # the others keep k hits a question: never near the limit
        hids = list(dict.fromkeys(q.haystack_id for q in targets))
        context = _Context(bench, hids, "gpt-4o", str(settings.get("model", "gpt-4o")))
        n_hits = sum(context.hits(provider, q, k, settings)[0] for q in targets)
        out.append(memory_warning(provider, len(targets), n_hits))
    return [w for w in out if w]


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

    Every API key the providers, the answerer and the judges need and the environment lacks is in
    ``missing_keys`` (the run would stop at the first): the estimate is made without them.

    Raises:
        BenchNbError: as the run would before its first ingest: an unknown provider, benchmark, question type
            or selection.
    """
    from bench_nb.models.aliases import ModelSpec
    from bench_nb.models.prices import cost_usd

    names = [p for p in split_specs(providers) if isinstance(p, str)]
    bench = load_benchmark(benchmark, dataset, sha256=sha256)
    targets, _sampling = select_questions(bench, limit=limit, per_type=sample_per_type, exclude=exclude_types)
    k = DEFAULT_K if k is None else k
    answerer_obj = make_answerer(answerer or DEFAULT_ANSWERER)
    judge_objs = make_judges(judges_for(bench.name, judges), benchmark=bench.name)
    missing = missing_credentials(answerer_obj, judge_objs)
    own = split_provider_settings(provider_settings, names)
    haystacks = list(dict.fromkeys(q.haystack_id for q in targets))
    token_model = _token_model(answerer_obj)
    per_provider = []
    reporting: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-nb-dry-run-") as tmp:
        for name in names:
            try:
                made = make_provider(name, run_dir=Path(tmp) / name.replace(":", "_"), settings=own[name])
            except MissingProviderKey as err:  # estimated all the same (a cloud provider reports no usage)
                missing.append(str(err))
                made = None
            if reports_usage(made):
                reporting.append(name)
            close_provider(made)
            context = _Context(bench, haystacks, token_model, str(own[name].get("model", "gpt-4o")))
            sized = [context.hits(name, q, k, own[name]) for q in targets]
            n_hits = sum(h[0] for h in sized)
            chars = sum(h[1] for h in sized)
            shown = sum(h[2] for h in sized)
            warning = memory_warning(name, len(targets), n_hits)
            per_provider.append(
                ProviderEstimate(
                    provider=name,
                    containers=len(targets) if isolate_per_question else len(haystacks),
                    searches=len(targets),
                    hits=n_hits,
                    context_tokens=round(shown * context.block_ratio / max(len(targets), 1)),
                    disk_bytes=COPIES_ON_DISK
                    * (chars + n_hits * HIT_FIELD_BYTES + len(targets) * QUESTION_BYTES),
                    memory_bytes=memory_bytes(n_hits),
                    warnings=(warning,) if warning else (),
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
        overhead = _prompt_overhead(targets, token_model)
        for p in per_provider:
            t_in = (p.context_tokens + overhead) * p.searches
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
        warnings=tuple(w for w in [few_haystacks_warning(bench, targets)] if w),
        unmetered=tuple(n for n in names if n not in reporting),
        missing_keys=tuple(missing),
        answerer=answerer_obj.name,
        judges=tuple(j.name for j in judge_objs),
        providers=tuple(per_provider),
        model_calls=calls,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=costs,
    )
