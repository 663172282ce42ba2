"""Probers write one question per memory; the deterministic ones need no key.

- :class:`ParaphraseProber` (mode ``paraphrase``, the default deterministic prober): a new sentence around a
  few key terms of the memory (common ones swapped for synonyms) that never repeats four or more consecutive
  words of it (``longest_shared_run``), so the search has to find the memory from a few of its words: the
  deterministic exclusive rate is an informative lower bound on retrieval.
- :class:`TemplateProber` (mode ``template``): a templated question that quotes the memory's first sentence,
  so any lexical retriever finds it: an upper bound, kept for comparison and labelled so (``MODE_LABELS``).
- ``DistractorProber`` (mode ``distractor``): only words the memory shares with its
  nearest other memories in its read set, none that single it out, so a search must rank it among its
  look-alikes: the deterministic mode whose headline falls below 100% on a store with related memories.
- ``bench_nb.roi.llm.LLMProber`` (mode ``llm``): a natural question from a model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol, runtime_checkable

from bench_nb.errors import ModelError
from bench_nb.providers.query import ENGLISH_FUNCTION_WORDS
from bench_nb.roi.memory import Memory
from bench_nb.roi.records import ModelUsage, ProbeDraft, ProbeMode


@dataclass(frozen=True)
class ProberReply:
    """The questions a prober wrote, and the model calls it made (for metering)."""

    drafts: tuple[ProbeDraft, ...]
    usage: tuple[ModelUsage, ...] = ()


class ProberFailed(ModelError):
    """A prober's model call failed or its reply could not be read; ``usage`` holds the calls made anyway."""

    def __init__(self, message: str, usage: tuple[ModelUsage, ...] = ()) -> None:
        self.usage = usage
        super().__init__(message)


@runtime_checkable
class Prober(Protocol):
    """Writes one question per memory that this memory, and realistically only it, answers."""

    name: str
    mode: ProbeMode
    model: str | None

    def write(self, memories: Sequence[Memory]) -> ProberReply:
        """Write one probe draft (a question) for each of ``memories``."""
        ...


_TEMPLATES = {
    "decision": 'What did we decide about "{topic}"?',
    "gotcha": 'What is the gotcha with "{topic}"?',
    "convention": 'What is our convention for "{topic}"?',
}
_PARAPHRASES = {
    "decision": "Which choice did we settle on regarding {terms}?",
    "gotcha": "Is there a known pitfall involving {terms}?",
    "convention": "How do we usually handle {terms} here?",
}
_FALLBACK_TEMPLATE = 'What do we know about "{topic}"?'
DEFAULT_MODE: ProbeMode = "paraphrase"
RUN_LIMIT = 4  # a paraphrase shares fewer than this many consecutive words with its memory
# What each probe mode measures, for the pages that show a run's headline.
MODE_NOTES: dict[str, str] = {
    "paraphrase": "a few key terms, never 4 consecutive words of the memory: a lower bound on retrieval",
    "distractor": "only words the memory shares with its nearest neighbours, so a search must rank it among its "
    "look-alikes: a pessimistic probe set",
    "template": "quotes the memory, so any search finds it: an upper bound",
    "llm": "questions written by a model",
    "mixed": "a mix of probe modes",
}
_FALLBACK_PARAPHRASE = "What do we know regarding {terms}?"

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
# the query's function words, with a few more that say little about a note (and no reflexive pronoun or piece
# of a contraction: "herself" or "won" may be the key term of a memory)
_STOPWORDS = ENGLISH_FUNCTION_WORDS | {"also", "always", "don't", "never", "use", "used", "uses", "using"}
# common words of engineering notes -> a plain synonym, so the paraphrase does not repeat the memory verbatim
_SYNONYMS = {
    "database": "data store",
    "db": "data store",
    "deploy": "ship",
    "deploys": "releases",
    "deployment": "release",
    "deployments": "releases",
    "production": "live environment",
    "prod": "live environment",
    "staging": "pre-release environment",
    "test": "check",
    "tests": "checks",
    "testing": "checking",
    "bug": "defect",
    "bugs": "defects",
    "error": "failure",
    "errors": "failures",
    "fails": "breaks",
    "failing": "breaking",
    "crash": "failure",
    "crashes": "failures",
    "config": "settings",
    "configuration": "settings",
    "setting": "option",
    "settings": "options",
    "timeout": "time limit",
    "timeouts": "time limits",
    "request": "call",
    "requests": "calls",
    "library": "package",
    "libraries": "packages",
    "dependency": "package",
    "dependencies": "packages",
    "branch": "line of work",
    "repository": "codebase",
    "repo": "codebase",
    "function": "routine",
    "functions": "routines",
    "variable": "value",
    "variables": "values",
    "server": "backend",
    "client": "frontend",
    "users": "customers",
    "user": "customer",
    "fast": "quick",
    "slow": "sluggish",
    "large": "big",
    "small": "little",
    "cache": "memo store",
    "caching": "memoizing",
    "queue": "backlog",
    "retry": "reattempt",
    "retries": "reattempts",
    "migration": "schema change",
    "migrations": "schema changes",
    "review": "check-over",
    "reviews": "check-overs",
    "commit": "change",
    "commits": "changes",
    "release": "version",
    "releases": "versions",
    "install": "set up",
    "build": "compile",
    "builds": "compiles",
    "logging": "log output",
    "logs": "log output",
    "api": "interface",
    "endpoint": "route",
    "endpoints": "routes",
    "password": "secret",
    "passwords": "secrets",
    "token": "credential",
    "tokens": "credentials",
    "key": "credential",
    "keys": "credentials",
}


def topic_of(content: str, max_words: int = 16) -> str:
    """The memory's first sentence (at most ``max_words`` words), its own words."""
    first = re.split(r"(?<=[.!?])\s+|\n", content.strip(), maxsplit=1)[0]
    words = first.split()
    topic = " ".join(words[:max_words]).rstrip(" .,:;!?")
    return topic.replace('"', "'")


def key_terms(content: str, n: int = 3) -> list[str]:
    """The ``n`` longest distinct content words (ties by first position), in the order they appear."""
    seen = {word: pos for pos, word in enumerate(content_words(content))}
    ranked = sorted(seen, key=lambda w: (-len(w), seen[w]))[:n]
    return sorted(ranked, key=lambda w: seen[w])


def _join(terms: Sequence[str]) -> str:
    if not terms:
        return "this"
    if len(terms) == 1:
        return terms[0]
    return ", ".join(terms[:-1]) + " and " + terms[-1]


def _words(text: str) -> list[str]:
    return [m.group(0).lower().strip("'-") for m in _WORD.finditer(text)]


def longest_shared_run(question: str, content: str) -> int:
    """The most consecutive words ``question`` and ``content`` share (case and punctuation ignored)."""
    # no junk and no autojunk: the longest matching block is the longest common run, exactly
    return SequenceMatcher(None, _words(question), _words(content), autojunk=False).find_longest_match().size


def paraphrase(memory: Memory) -> str:
    """The paraphrase probe of ``memory``: its key terms in a sentence of the kind's template, sharing
    fewer than ``RUN_LIMIT`` consecutive words with the memory (fewer or reordered terms when needed)."""
    return phrase(memory, [_SYNONYMS.get(t, t) for t in key_terms(memory.content, 3)])


def phrase(memory: Memory, terms: Sequence[str]) -> str:
    """``terms`` in a sentence of ``memory``'s kind's template that shares fewer than ``RUN_LIMIT``
    consecutive words with the memory (fewer or reordered terms when it would not)."""
    template = _PARAPHRASES.get(memory.kind, _FALLBACK_PARAPHRASE)
    terms = list(terms)
    candidates = [terms, list(reversed(terms)), terms[:2], terms[1:], terms[:1], terms[-1:], []]
    for chosen in candidates:
        question = template.format(terms=_join(chosen))
        if longest_shared_run(question, memory.content) < RUN_LIMIT:
            return question
    return template.format(terms="this")


# Ordered, 3+ letters, _STOPWORDS (no reflexive pronoun): a probe's key terms; another rule changes the probe sets.
def content_words(text: str) -> list[str]:
    """The distinct content words of ``text`` (3 letters or more, no stop word), lower-cased, in order."""
    return [w for w in dict.fromkeys(_words(text)) if len(w) >= 3 and w not in _STOPWORDS]


class TemplateProber:
    """Templated questions quoting the memory's first sentence (mode ``template``: an upper bound)."""

    name = "template"
    mode: ProbeMode = "template"
    model: str | None = None

    def write(self, memories: Sequence[Memory]) -> ProberReply:
        """One templated question per memory, by its kind, naming its topic."""
        drafts = [
            ProbeDraft(m.id, _TEMPLATES.get(m.kind, _FALLBACK_TEMPLATE).format(topic=topic_of(m.content)))
            for m in memories
        ]
        return ProberReply(tuple(drafts))


class ParaphraseProber:
    """Deterministic paraphrases: a few key terms, common ones swapped for synonyms, never four consecutive
    words of the memory (mode ``paraphrase``, the default)."""

    name = "paraphrase"
    mode: ProbeMode = "paraphrase"
    model: str | None = None

    def write(self, memories: Sequence[Memory]) -> ProberReply:
        """One paraphrased question per memory."""
        return ProberReply(tuple(ProbeDraft(m.id, paraphrase(m)) for m in memories))


# -- the ``distractor`` mode ------------------------------------------------------------------------
#
# The ``distractor`` probe mode: a keyless question a lexical search can plausibly miss.
#
# The ``paraphrase`` prober keeps a memory's longest words, which usually single it out: on a realistic store
# nearly every probe still surfaces its memory (20 of 20 on the sample store), so the headline cannot tell
# providers apart offline. A distractor probe is built from the memory's **read set** (the other memories its
# recall may surface, ``recall.read_set``) instead:
#
# 1. the memory's nearest neighbours are the :data:`NEIGHBOURS` other memories of its read set sharing the most
#    content words with it (ties by id);
# 2. its terms are the :data:`TERMS` words of the memory found in the most of those neighbours (then in the most
#    memories of the read set, then the longest; a word no neighbour has is never used: it would single the
#    memory out);
# 3. they go into the kind's paraphrase sentence (``probers.phrase``: never 4 consecutive words of the memory).
#
# So the question names what the memory has in common with its look-alikes, and the search has to rank it
# among them: within ``k`` hits it surfaces when at most ``k - 1`` of them score higher. A pessimistic probe set: its
# rate (with the deterministic judge, the share of probes whose own memory surfaced) is a lower bound on
# retrieval that rises with ``k`` and with a retriever that ranks better; as an exclusive rate it is still the
# deterministic judge's upper bound on what an LLM judge would give for these probes (``roi.judges``). A memory that shares no word with any other memory of its read
# set has no distractor: its probe is its paraphrase.

#: How many of the memory's closest other memories count as its distractors.
NEIGHBOURS = 5
#: How many shared words a question names.
TERMS = 2

#: The read set of a memory: the memories its probe's recall may surface (the memory itself included or not).
ReadSets = Callable[[Memory], Sequence[Memory]]


def distractor_terms(memory: Memory, others: Sequence[Memory]) -> list[str]:
    """The words of ``memory`` its nearest ``others`` share (see the module's docstring), in the memory's order."""
    mine = content_words(memory.content)
    own = set(mine)
    sets = [(o.id, set(content_words(o.content))) for o in others if o.id != memory.id]
    near = [words for _, words in sorted(sets, key=lambda s: (-len(s[1] & own), s[0])) if words & own]
    near = near[:NEIGHBOURS]
    in_near = {w: sum(w in words for words in near) for w in mine}
    in_all = {w: sum(w in words for _, words in sets) for w in mine}
    shared = [w for w in mine if in_near[w] > 0]
    chosen = sorted(shared, key=lambda w: (-in_near[w], -in_all[w], -len(w), mine.index(w)))[:TERMS]
    return sorted(chosen, key=mine.index)


def distractor_question(memory: Memory, others: Sequence[Memory]) -> str:
    """The distractor probe of ``memory`` given the other memories of its read set."""
    terms = distractor_terms(memory, others)
    return phrase(memory, terms) if terms else paraphrase(memory)


class DistractorProber:
    """Deterministic questions from the words a memory shares with its nearest neighbours in its read set
    (mode ``distractor``). The pool gives it the read sets (``pool.top_up`` calls :meth:`with_read_sets`)."""

    name = "distractor"
    mode: ProbeMode = "distractor"
    model: str | None = None

    def __init__(self, read_sets: ReadSets | None = None) -> None:
        self.read_sets = read_sets

    def with_read_sets(self, read_sets: ReadSets) -> DistractorProber:
        """This prober, looking up each memory's read set with ``read_sets``."""
        return DistractorProber(read_sets)

    def write(self, memories: Sequence[Memory]) -> ProberReply:
        """One distractor question per memory (needs the read sets: :meth:`with_read_sets`)."""
        read_sets = self.read_sets
        if read_sets is None:
            raise ValueError("the distractor prober needs the memories' read sets (pool.top_up gives them)")
        return ProberReply(tuple(ProbeDraft(m.id, distractor_question(m, read_sets(m))) for m in memories))


#: The modes a keyless prober writes (``deterministic_prober``).
DETERMINISTIC_MODES: tuple[ProbeMode, ...] = ("paraphrase", "distractor", "template")


def deterministic_prober(mode: ProbeMode = DEFAULT_MODE) -> Prober:
    """The keyless prober of ``mode`` (``paraphrase``, the default, ``distractor`` or ``template``)."""
    if mode == "template":
        return TemplateProber()
    if mode == "paraphrase":
        return ParaphraseProber()
    if mode == "distractor":
        return DistractorProber()
    raise ValueError(
        f"no deterministic prober for mode {mode!r}: use one of {', '.join(map(repr, DETERMINISTIC_MODES))}"
    )
