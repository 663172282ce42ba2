"""The extractive answerer: answers from the retrieved hits with no model, for offline runs and tests.

It splits the hits into sentences (and lines), scores each by the share of the question's content words it
contains (a word counts once; stop words and question words do not count; the speaker's name in a
``[date] Speaker: text`` hit counts for each of its sentences), and answers with the best one, without that
prefix and trimmed to ``max_words``; ties go to the higher-ranked hit. For a "when" question the hit's date is added,
since the sentence alone rarely holds it. With no hits, or when the best sentence holds less than
``min_overlap`` of the question's content words, it abstains with ``ABSTAIN`` ("I don't know.").

Its token fields are counted as if its context had been sent to an answering model: the standard answer
prompt (``bench_nb.models.prompt``) with the same hits, counted for ``token_model`` (default ``gpt-4o``),
so its MemScore context tokens compare with an LLM run's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from bench_nb.models.prompt import CONTEXT_FORMAT, answer_prompt_hash, check_context_format, prompt_tokens
from bench_nb.models.tokens import counting_client, tokenizer_for, warm_up_tokenizer
from bench_nb.records import Answer, Question, SearchHit

if TYPE_CHECKING:
    from bench_nb.models.client import LLMClient

ABSTAIN = "I don't know."

# Sentence ends, except after common abbreviations ("Dr. Halvorsen").
_SENTENCE = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bMrs\.)(?<=[.!?])\s+|\n+")
# A hit's "[2024-01-14T10:25:00] Ines: " prefix (the sqlite provider's rendering): scored, not answered.
_PREFIX = re.compile(r"^\s*(\[[^\]]*\]\s*)?([A-Z][\w .'-]{0,40}:\s+)?")
_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = (
    "a an the and or but if of to in on at by for with from as into about over after before than then so "
    "is are was were be been being am do does did done doing has have had having will would shall should can "
    "could may might must i me my mine we us our you your he him his she her it its they them their this that "
    "these those there here what when where which who whom whose why how not no yes ever also just very much "
    "many any some all each every one ones s t"
)
_STOP = frozenset(_STOP_WORDS.split())


def _day(iso: str) -> str:
    """``2023-05-08T13:56:00`` -> ``8 May 2023`` (the text back when it is not ISO)."""
    try:
        d = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    return f"{d.day} {d:%B %Y}"


# The answerer's own list (_STOP): its answers, and so every extractive run's numbers, depend on it.
def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


@dataclass
class ExtractiveAnswerer:
    """Answers with the retrieved sentence that best overlaps the question (see the module docstring).

    Attributes:
        min_overlap: the least share of the question's content words the best sentence must hold (0-1).
        max_words: the answer is cut to this many words.
        token_model: the model whose tokenizer counts the token fields.
        context_format: how the prompt its token fields are counted on shows the hits
            (``bench_nb.models.prompt.CONTEXT_FORMATS``; a resumed run sets its own).
    """

    min_overlap: float = 0.5
    max_words: int = 40
    token_model: str = "gpt-4o"
    name: str = "extractive"
    context_format: int = CONTEXT_FORMAT
    #: Pure Python in the runner's process: its answer latency is its thread's CPU time (docs/runner.md).
    cpu_bound: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not 0 <= self.min_overlap <= 1:
            raise ValueError(f"min_overlap must be in [0, 1], not {self.min_overlap}")
        if self.max_words < 1:
            raise ValueError(f"max_words must be at least 1, not {self.max_words}")
        check_context_format(self.context_format)

    @property
    def tokenizer(self) -> str:
        """The tokenizer that counts this answerer's token fields."""
        return tokenizer_for(self.token_model)

    @property
    def prompt_hash(self) -> str:
        """The hash of the answer prompt its token fields are counted on."""
        return answer_prompt_hash(context_format=self.context_format)

    def warm_up(self) -> None:
        """Load the tokenizer its token fields are counted with (outside any timed answer)."""
        warm_up_tokenizer(self.token_model)

    @cached_property
    def _client(self) -> LLMClient | None:
        return counting_client(self.tokenizer)  # one for every count it makes

    def best_sentence(
        self, question: Question, hits: Sequence[SearchHit]
    ) -> tuple[str, SearchHit | None, float]:
        """The best sentence, the hit it came from and its overlap (0 when there is none)."""
        wanted = _content_words(question.question)
        best: tuple[float, int, str, SearchHit | None] = (0.0, 0, "", None)
        if not wanted:
            return "", None, 0.0
        for hit in hits:
            prefix = _PREFIX.match(hit.text)
            head = prefix.group(0) if prefix else ""
            speaker = _content_words(prefix.group(2) or "") if prefix else set()
            for sentence in _SENTENCE.split(hit.text[len(head) :]):
                sentence = sentence.strip()
                if not sentence:
                    continue
                # The speaker's name counts for every sentence of the message ("Ines: ... I adopted a cat").
                overlap = len(wanted & (_content_words(sentence) | speaker)) / len(wanted)
                # Higher overlap first; among equals, the earlier (higher-ranked) hit and then the shorter text.
                if overlap > best[0] or (
                    overlap == best[0] > 0 and best[3] is hit and len(sentence) < best[1]
                ):
                    best = (overlap, len(sentence), sentence, hit)
        return best[2], best[3], best[0]

    def answer(self, question: Question, hits: Sequence[SearchHit]) -> Answer:
        """The retrieved sentence that best overlaps the question (with its date for a "when" question), else
        an abstention; token counts as an LLM answerer's prompt would have them."""
        sentence, hit, overlap = self.best_sentence(question, hits)
        if hit is None or overlap < self.min_overlap or overlap == 0:
            text = ABSTAIN
        else:
            words = sentence.split()
            text = " ".join(words[: self.max_words]) + (" …" if len(words) > self.max_words else "")
            if question.question.strip().lower().startswith("when") and hit.date:
                text = f"{text} (on {_day(hit.date)})"
        counted = prompt_tokens(
            question, hits, self.token_model, context_format=self.context_format, client=self._client
        )
        return Answer(
            hypothesis=text,
            prompt_tokens=counted.prompt_tokens,
            base_prompt_tokens=counted.base_prompt_tokens,
            context_tokens=counted.context_tokens,
            tokenizer=counted.tokenizer,
        )
