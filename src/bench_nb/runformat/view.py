"""The part of a checkpoint the frames read, as msgspec structs: everything else is skipped undecoded.

``runformat.format.Checkpoint`` decodes a run completely (the runner rewrites checkpoints from it, so it
must keep every field). ``questions_df`` and ``runs_df`` need much less: no session lists, document ids,
timestamps or search results. Decoding into these structs instead builds about a fifth of the objects, which
is what keeps loading a 100,000-question run at a fraction of a plain ``json.load`` (see BENCHMARKS.md).

Field names, types and defaults are those of ``runformat.format`` (so one row builder reads both, and
``tests/runformat/test_view.py`` fails when a view drifts from the format it projects), and a value of the
wrong type in a field read here is an error as it is there; fields not read here are not checked.
"""

from __future__ import annotations

from typing import Any

import msgspec

from bench_nb.runformat.format import DECODE_COUNTS, PhaseStatus, RetrievalMetrics, RunStatus, absent


# gc=False: the collector does not track these (msgspec's documented option for structs that never form a
# reference cycle, which structs decoded from JSON cannot). A 100,000-question run is half a million of
# them, which every collection would otherwise walk while the frames are built.
class _View(msgspec.Struct, kw_only=True, forbid_unknown_fields=False, gc=False):
    pass


class PhaseView(_View):
    """A phase as the frames read it: status, duration and error."""

    status: PhaseStatus = "pending"
    durationMs: float | None = None
    error: str | None = None


class SkippedResult(_View):
    """A provider's search result object, decoded to nothing: the frames show only how many there are.

    Not ``msgspec.Raw``: a Raw is a slice of the file's bytes and keeps all of them (0.85 GB at 100,000
    questions) alive for as long as the views live, through building the frame.
    """


class SearchView(PhaseView):
    """The search phase as the frames read it: the result file and the results, counted, not decoded."""

    resultFile: str | None = None
    # Only their number is shown. Results are objects (decoded to nothing); any other shape decodes as is.
    results: list[SkippedResult | list[Any] | str | float | bool | None] | None = None


class AnswerView(PhaseView):
    """The answer phase as the frames read it: the answer and its token counts."""

    hypothesis: str | None = None
    promptTokens: int | None = None
    basePromptTokens: int | None = None
    contextTokens: int | None = None


class EvaluateView(PhaseView):
    """The evaluate phase as the frames read it: score, label, explanation and retrieval metrics."""

    score: float | None = None
    label: str | None = None
    explanation: str | None = None
    retrievalMetrics: RetrievalMetrics | None = None


class PhasesView(_View):
    """A question's phases as the frames read them."""

    ingest: PhaseView = msgspec.field(default_factory=absent(PhaseView))
    indexing: PhaseView = msgspec.field(default_factory=absent(PhaseView))
    search: SearchView = msgspec.field(default_factory=absent(SearchView))
    answer: AnswerView = msgspec.field(default_factory=absent(AnswerView))
    evaluate: EvaluateView = msgspec.field(default_factory=absent(EvaluateView))


class QuestionView(_View, kw_only=True):
    """A question as the frames read it: no sessions, document ids or timestamps."""

    questionId: str
    containerTag: str = ""
    question: str = ""
    groundTruth: str
    questionType: str = ""
    questionDate: str | None = None
    phases: PhasesView = msgspec.field(default_factory=PhasesView)
    benchNb: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        DECODE_COUNTS.questions += 1


class CheckpointView(_View, kw_only=True):
    """The part of a checkpoint the frames read: the run's identity, status and settings, and each question."""

    runId: str
    dataSourceRunId: str | None = None
    status: RunStatus = "running"
    provider: str = ""
    benchmark: str = ""
    judge: str = ""
    answeringModel: str = ""
    createdAt: str | None = None
    updatedAt: str | None = None
    targetQuestionIds: list[str] = msgspec.field(default_factory=list)
    questions: dict[str, QuestionView] = msgspec.field(default_factory=dict)
    benchNb: dict[str, Any] | None = None
