"""Typed in-memory records shared by every stage (benchmarks, providers, models, judges, runner).

Frozen dataclasses: cheap, hashable, and importing nothing of ours. What is read from or written to disk
has its own structs (``bench_nb.runformat.format`` for runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

VerdictLabel = Literal["correct", "incorrect", "unscored"]


@dataclass(frozen=True)
class Message:
    """One turn of a conversation."""

    role: str  # speaker name (LoCoMo) or "user"/"assistant" (LongMemEval)
    content: str
    timestamp: str | None = None  # ISO-8601 when known
    message_id: str | None = None  # LoCoMo dia_id, e.g. "D1:3"
    has_answer: bool = False  # LongMemEval marks evidence turns
    # What else the dataset says of the turn (BEAM: its turn number in the batch, "b,t" index, time anchor).
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Session:
    """A dated conversation session."""

    session_id: str
    date: str | None  # ISO-8601 (parsed from the dataset's own format)
    messages: tuple[Message, ...]
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)  # e.g. {"date_raw": ...}


@dataclass(frozen=True)
class Haystack:
    """What a provider ingests before answering: one LoCoMo conversation, or one LongMemEval history."""

    haystack_id: str
    sessions: tuple[Session, ...]


@dataclass(frozen=True)
class Question:
    """One benchmark question."""

    question_id: str
    question: str
    answer: str  # ground truth as text ("" for unanswerable items)
    question_type: str  # the benchmark's true raw type
    norm_type: str  # bench_nb.taxonomy.NormType
    haystack_id: str
    question_date: str | None = None
    evidence_ids: tuple[str, ...] = ()  # LoCoMo dia_ids / LongMemEval answer_session_ids
    category: int | None = None  # LoCoMo category id
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def is_abstention(self) -> bool:
        """Whether the question has no answer in the haystack (its right answer is to abstain)."""
        return self.norm_type == "abstention"


# The key that says a provider cut the context to a budget: in a hit's ``raw`` (full-context's
# ``max_context_tokens``) or an imported question's ``benchNb`` (LongMemEval-V2's truncation flag). Failure
# attribution reads it as the truncation reason (``metrics.failures``).
CONTEXT_CUT = "contextCut"


@dataclass(frozen=True)
class SearchHit:
    """One retrieved item, normalised across providers; ``raw`` is the provider's own object."""

    text: str
    score: float | None = None
    session_id: str | None = None
    date: str | None = None
    hit_id: str | None = None
    raw: dict[str, Any] | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class IngestResult:
    """What a provider's ingest returned: the ids of the documents stored and of any indexing tasks."""

    document_ids: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    """An answerer's output, with MemoryBench's token fields."""

    hypothesis: str
    prompt_tokens: int | None = None
    base_prompt_tokens: int | None = None
    context_tokens: int | None = None
    tokenizer: str | None = None  # which tokenizer counted, e.g. "tiktoken:o200k_base"
    model: str | None = None
    input_tokens: int | None = None  # as billed by the API
    output_tokens: int | None = None
    cost_usd: float | None = None
    # The model's reply came from the response cache (nothing spent now); not part of the answer's equality.
    cached: bool | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Verdict:
    """A judge's grade. ``score`` is None exactly when ``label == "unscored"``.

    A binary judge gives 0 or 1. A graded judge (BEAM's rubric) gives a fraction in [0, 1] with ``items``, the
    score of each rubric item (0, 0.5 or 1), and ``published_score``, the same answer read as the benchmark's
    official code reads it (BEAM truncates each item's 0.5 to 0); its label is "correct" only at 1.
    """

    score: float | None
    label: VerdictLabel
    explanation: str
    judge: str = ""
    items: tuple[float, ...] = ()
    published_score: float | None = None

    def __post_init__(self) -> None:
        if (self.score is None) != (self.label == "unscored"):
            raise ValueError(f"score {self.score!r} does not fit label {self.label!r}")
        if self.score is not None and not 0 <= self.score <= 1:
            raise ValueError(f"score {self.score!r} is not in [0, 1]")

    @property
    def graded(self) -> bool:
        """A fractional score from a graded judge (not a 0/1 verdict)."""
        return self.published_score is not None


@dataclass(frozen=True)
class Benchmark:
    """A loaded benchmark: questions in order, and the haystacks they are asked about."""

    name: str
    questions: tuple[Question, ...]
    haystacks: dict[str, Haystack]
    type_registry: dict[str, dict[str, str]] = field(default_factory=dict, compare=False, hash=False)
    sha256: str | None = None
