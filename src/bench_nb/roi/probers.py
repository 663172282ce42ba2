"""Probers write one question per memory; the deterministic ones need no key.

- :class:`TemplateProber` (mode ``template``): a templated question that repeats the memory's own words, so
  any lexical retriever finds it: an upper bound for recall.
- :class:`ParaphraseProber` (mode ``paraphrase``): a deterministic paraphrase that keeps only a few key terms
  of the memory (some swapped for common synonyms) in a new sentence: harder for a lexical retriever, and
  still reproducible.
- ``bench_nb.roi.llm.LLMProber`` (mode ``llm``): a natural question from a model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bench_nb.errors import ModelError
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

    def write(self, memories: Sequence[Memory]) -> ProberReply: ...


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
_FALLBACK_PARAPHRASE = "What do we know regarding {terms}?"

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "always",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "don't",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "never",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "use",
        "used",
        "uses",
        "using",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
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
    seen: dict[str, int] = {}
    for pos, match in enumerate(_WORD.finditer(content)):
        word = match.group(0).lower().strip("'-")
        if len(word) < 3 or word in _STOPWORDS or word in seen:
            continue
        seen[word] = pos
    ranked = sorted(seen, key=lambda w: (-len(w), seen[w]))[:n]
    return sorted(ranked, key=lambda w: seen[w])


def paraphrase_terms(content: str, n: int = 3) -> str:
    terms = [_SYNONYMS.get(t, t) for t in key_terms(content, n)]
    if not terms:
        return "this"
    if len(terms) == 1:
        return terms[0]
    return ", ".join(terms[:-1]) + " and " + terms[-1]


class TemplateProber:
    """Templated questions in the memory's own words (mode ``template``)."""

    name = "template"
    mode: ProbeMode = "template"
    model: str | None = None

    def write(self, memories: Sequence[Memory]) -> ProberReply:
        drafts = [
            ProbeDraft(m.id, _TEMPLATES.get(m.kind, _FALLBACK_TEMPLATE).format(topic=topic_of(m.content)))
            for m in memories
        ]
        return ProberReply(tuple(drafts))


class ParaphraseProber:
    """Deterministic paraphrases: a few key terms, common ones swapped for synonyms (mode ``paraphrase``)."""

    name = "paraphrase"
    mode: ProbeMode = "paraphrase"
    model: str | None = None

    def write(self, memories: Sequence[Memory]) -> ProberReply:
        drafts = [
            ProbeDraft(
                m.id, _PARAPHRASES.get(m.kind, _FALLBACK_PARAPHRASE).format(terms=paraphrase_terms(m.content))
            )
            for m in memories
        ]
        return ProberReply(tuple(drafts))


def deterministic_prober(mode: ProbeMode = "template") -> Prober:
    """The keyless prober of ``mode`` (``template`` or ``paraphrase``)."""
    if mode == "template":
        return TemplateProber()
    if mode == "paraphrase":
        return ParaphraseProber()
    raise ValueError(f"no deterministic prober for mode {mode!r}: use 'template' or 'paraphrase'")
