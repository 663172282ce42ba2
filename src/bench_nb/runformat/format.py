"""MemoryBench's on-disk run format as typed msgspec structs.

A run directory is ``checkpoint.json`` + ``results/<questionId>.json`` + ``report.json``
(see docs/run-format.md). These structs decode exactly the fields bench_nb reads: msgspec skips
everything else without building it, which is what makes loading a 100,000-question run fast.
The providers' raw search results stay undecoded (``msgspec.Raw``) until someone asks for them.

bench_nb writes its own runs with the same structs, so MemoryBench can read them; bench_nb's
additions are optional fields MemoryBench ignores (see ``Question.benchNb``).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

import msgspec

PhaseStatus = Literal["pending", "in_progress", "completed", "failed"]
RunStatus = Literal["initializing", "running", "completed", "failed"]
PHASES: tuple[str, ...] = ("ingest", "indexing", "search", "answer", "evaluate")


def now_iso() -> str:
    """The current time as MemoryBench writes it (ISO-8601, milliseconds, Z): every timestamp of a run."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_PLAIN_ID = re.compile(r"[A-Za-z0-9_@:-][A-Za-z0-9._@:-]{0,99}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._@:-]")


def result_file_name(question_id: str) -> str:
    """The name of ``results/<questionId>.json``: safe, unique and at most 122 bytes.

    An id of at most 100 characters of ``A-Z a-z 0-9 . _ @ : -`` (not starting with ``.``) is its own name,
    as MemoryBench names it; any other id is its safe characters (others, and a leading ``.``, as ``_``; at
    most 60) then ``~``
    and 16 hex digits of its sha256 (``a/b`` -> ``a_b~1f3c....json``), so ``a/b``, ``a_b`` and ``a b`` get
    three files and a 300-byte id a short one. The file holds the id itself (``questionId``); the checkpoint
    records each file's name (``phases.search.resultFile``), which readers follow.
    """
    if _PLAIN_ID.fullmatch(question_id):
        return f"{question_id}.json"
    digest = hashlib.sha256(question_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    safe = _UNSAFE.sub("_", question_id)[:60]
    return f"{'_' + safe[1:] if safe.startswith('.') else safe}~{digest}.json"


def now_stamp() -> str:
    """``now_iso`` without separators (``20261201T095501123Z``), for run and compare ids."""
    return now_iso().replace(":", "").replace("-", "").replace(".", "")


class _DecodeCounts(threading.local):
    """What decoding filled in or built, counted per thread so a loader can tell damage from a clean file
    without a second pass over it: ``absent_phases`` (phase records made up because the file has none) and
    ``questions`` (question records built: more than the dict holds means a key written twice)."""

    def __init__(self) -> None:
        self.absent_phases = 0
        self.questions = 0

    def reset(self) -> None:
        self.absent_phases = self.questions = 0


DECODE_COUNTS = _DecodeCounts()


_T = TypeVar("_T")


def absent(factory: Callable[[], _T]) -> Callable[[], _T]:
    """A default factory for a phase record that also counts it in ``DECODE_COUNTS.absent_phases``."""

    def make() -> _T:
        DECODE_COUNTS.absent_phases += 1
        return factory()

    return make


# gc=False: the collector does not track these structs (msgspec's documented option for structs that never
# form a reference cycle: runs are trees decoded from JSON or built by the runner, never pointing back up).
# A report's 3 x 2,000-question run set is 24,000 of them, which every collection after loading walked.
class _Struct(msgspec.Struct, omit_defaults=True, kw_only=True, forbid_unknown_fields=False, gc=False):
    pass


class IngestResult(_Struct):
    """What a provider's ingest returned: the ids of the documents stored and of any indexing tasks."""

    documentIds: list[str] = msgspec.field(default_factory=list)
    taskIds: list[str] | None = None


class RetrievalMetrics(_Struct):
    """A question's retrieval metrics at k, as MemoryBench records them in the evaluate phase."""

    hitAtK: float = 0.0
    precisionAtK: float = 0.0
    recallAtK: float = 0.0
    f1AtK: float = 0.0
    mrr: float = 0.0
    ndcg: float = 0.0
    k: int = 0
    relevantRetrieved: int | None = None
    totalRelevant: int | None = None


class Phase(_Struct):
    """One phase of a question: its status, when it started and ended, its duration and any error."""

    status: PhaseStatus = "pending"
    startedAt: str | None = None
    completedAt: str | None = None
    durationMs: float | None = None
    error: str | None = None


class IngestPhase(Phase):
    """The ingest phase: the sessions stored so far and what the provider returned."""

    completedSessions: list[str] = msgspec.field(default_factory=list)
    ingestResult: IngestResult | None = None


class IndexingPhase(Phase):
    """The indexing phase: the ingested ids the provider finished indexing and those it failed."""

    completedIds: list[str] | None = None
    failedIds: list[str] | None = None


class SearchPhase(Phase):
    """The search phase: the provider's raw results (undecoded JSON), or the file that holds them."""

    resultFile: str | None = None
    # The provider's raw result objects, any shape; kept as undecoded JSON.
    results: list[msgspec.Raw] | None = None


class AnswerPhase(Phase):
    """The answer phase: the answer (``hypothesis``) and the tokens of its prompt and retrieved context."""

    hypothesis: str | None = None
    promptTokens: int | None = None
    basePromptTokens: int | None = None
    contextTokens: int | None = None


class EvaluatePhase(Phase):
    """The evaluate phase: the primary judge's score, label and explanation, and the retrieval metrics."""

    score: float | None = None
    label: str | None = None
    explanation: str | None = None
    retrievalMetrics: RetrievalMetrics | None = None


class Phases(_Struct):
    """A question's five phases, each present (an absent one decodes as pending)."""

    ingest: IngestPhase = msgspec.field(default_factory=absent(IngestPhase))
    indexing: IndexingPhase = msgspec.field(default_factory=absent(IndexingPhase))
    search: SearchPhase = msgspec.field(default_factory=absent(SearchPhase))
    answer: AnswerPhase = msgspec.field(default_factory=absent(AnswerPhase))
    evaluate: EvaluatePhase = msgspec.field(default_factory=absent(EvaluatePhase))


class SessionRef(_Struct):
    """A haystack session a question's container was given: its id, date and number of messages."""

    sessionId: str
    date: str | None = None
    messageCount: int | None = None


class Question(_Struct, kw_only=True):
    """One question of a checkpoint: its text, ground truth and type, its phases, and bench_nb's own
    ``benchNb``."""

    questionId: str
    containerTag: str = ""
    question: str = ""
    # Required: MemoryBench always writes it, "" included (omit_defaults would drop an empty default).
    groundTruth: str
    questionType: str = ""
    questionDate: str | None = None
    phases: Phases = msgspec.field(default_factory=Phases)
    sessions: list[SessionRef] | None = None
    # bench_nb's own additions (MemoryBench ignores unknown fields): normalised type, evidence ids,
    # tokenizer, cost, retries, judge verdicts, ... Free-form so later stages can add to it.
    benchNb: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        DECODE_COUNTS.questions += 1


class Sampling(_Struct):
    """How a run picked its questions: all (``full``), per category or up to a limit."""

    mode: str = "full"
    sampleType: str | None = None
    perCategory: int | None = None
    limit: int | None = None


class Concurrency(_Struct):
    """How many questions a run works on at once: the default and any per-phase limits."""

    default: int = 1
    ingest: int | None = None
    indexing: int | None = None
    search: int | None = None
    answer: int | None = None
    evaluate: int | None = None


class Checkpoint(_Struct):
    """A run's ``checkpoint.json``: the run's identity, settings and status, and every question by id."""

    runId: str
    dataSourceRunId: str | None = None
    status: RunStatus = "running"
    provider: str = ""
    benchmark: str = ""
    judge: str = ""
    answeringModel: str = ""
    createdAt: str | None = None
    updatedAt: str | None = None
    limit: int | None = None
    sampling: Sampling | None = None
    targetQuestionIds: list[str] = msgspec.field(default_factory=list)
    concurrency: Concurrency | None = None
    questions: dict[str, Question] = msgspec.field(default_factory=dict)
    # bench_nb run settings (k, answerer, judges, prompts' hashes, tokenizer, ...).
    benchNb: dict[str, Any] | None = None


class CheckpointShell(Checkpoint):
    """The checkpoint with each question left undecoded: used to load the good questions of a bad file."""

    questions: dict[str, msgspec.Raw] = msgspec.field(default_factory=dict)  # type: ignore[assignment]


class CompareRun(_Struct):
    """One run of a comparison: its provider and run id."""

    provider: str
    runId: str


class CompareManifest(_Struct):
    """A comparison's ``manifest.json``: the runs compared and the benchmark, judge and questions they share."""

    compareId: str
    createdAt: str | None = None
    updatedAt: str | None = None
    benchmark: str = ""
    judge: str = ""
    answeringModel: str = ""
    sampling: Sampling | None = None
    targetQuestionIds: list[str] = msgspec.field(default_factory=list)
    runs: list[CompareRun] = msgspec.field(default_factory=list)


# The ``Question.extra`` fields a judge reads, each with its name in a question's ``benchNb`` and its type: BEAM's
# rubric, LongMemEval-V2's scoring rule. A new run records them (runner.plan); a rejudge reads them back.
_JUDGE_FIELDS = (("rubric", "rubric", list), ("eval_function", "evalFunction", str))


def judge_fields(fields: dict[str, Any], *, recorded: bool = False) -> dict[str, Any]:
    """The judges' fields of a question's ``extra``, under their ``benchNb`` names; with ``recorded``, those of
    a ``benchNb``, under their ``extra`` names (what a rejudge gives its judges). Other types are left out."""
    out: dict[str, Any] = {}
    for name, key, kind in _JUDGE_FIELDS:
        src, dst = (key, name) if recorded else (name, key)
        if isinstance(fields.get(src), kind):
            out[dst] = list(fields[src]) if kind is list else fields[src]
    return out


def decode_results(raw: list[msgspec.Raw] | None) -> list[Any]:
    """Decode a question's raw search results into plain Python objects."""
    if not raw:
        return []
    return [msgspec.json.decode(r) for r in raw]
