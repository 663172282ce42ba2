"""The ``distractor`` probe mode: a keyless question a lexical search can plausibly miss.

The ``paraphrase`` prober keeps a memory's longest words, which usually single it out: on a realistic store
nearly every probe still surfaces its memory (20 of 20 on the sample store), so the headline cannot tell
providers apart offline. A distractor probe is built from the memory's **read set** (the other memories its
recall may surface, ``recall.read_set``) instead:

1. the memory's nearest neighbours are the :data:`NEIGHBOURS` other memories of its read set sharing the most
   content words with it (ties by id);
2. its terms are the :data:`TERMS` words of the memory found in the most of those neighbours (then in the most
   memories of the read set, then the longest; a word no neighbour has is never used: it would single the
   memory out);
3. they go into the kind's paraphrase sentence (``probers.phrase``: never 4 consecutive words of the memory).

So the question names what the memory has in common with its look-alikes, and the search has to rank it
among them: within ``k`` hits it surfaces when at most ``k - 1`` of them score higher. A pessimistic probe set: its
rate (with the deterministic judge, the share of probes whose own memory surfaced) is a lower bound on
retrieval that rises with ``k`` and with a retriever that ranks better; as an exclusive rate it is still the
deterministic judge's upper bound on what an LLM judge would give for these probes (``roi.judges``). A memory that shares no word with any other memory of its read
set has no distractor: its probe is its paraphrase.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bench_nb.roi.memory import Memory
from bench_nb.roi.probers import ProberReply, content_words, paraphrase, phrase
from bench_nb.roi.records import ProbeDraft, ProbeMode

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
